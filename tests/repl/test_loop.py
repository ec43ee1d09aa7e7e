"""The REPL loop with real sessions on disk: answers and usage lines, Ctrl-C, and each slash command."""

from __future__ import annotations

from tmg.llm.gateway import ErrorKind, GatewayError
from tmg.repl.input import PromptInterrupted
from tmg.repl.loop import QUIT_HINT
from tests.repl.harness import SECRET, Reply, Rig, SignalMidStream


def test_a_question_streams_its_answer_then_one_usage_line(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("The answer is 42.", prompt_tokens=1200, completion_tokens=7, cost=0.0123))
    assert rig.run("what is the answer?", "/exit") == 0
    assert rig.out.getvalue() == "The answer is 42.\n"  # plain: stdout is not a terminal here
    assert "1,200 in / 7 out · $0.0123" in rig.err.getvalue()
    assert rig.model.requests[0].messages[-1] == {"role": "user", "content": "what is the answer?"}


def test_an_unpriced_model_says_cost_na(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("hi", cost=None))
    rig.run("hello", "/exit")
    assert "10 in / 5 out · cost n/a" in rig.err.getvalue()


def test_an_unknown_command_gets_a_suggestion_and_no_model_call(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    assert rig.run("/hepl", "/exit") == 0
    assert rig.model.requests == []
    assert "unknown command /hepl: did you mean /help? (/help lists them)" in rig.err.getvalue()


def test_help_lists_commands_keys_and_the_slash_escape(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.run("/help", "/exit")
    out = rig.out.getvalue()
    for name in ("/help", "/new", "/mode", "/model", "/cost", "/config", "/transcript", "/memory", "/exit"):
        assert name in out
    assert "Alt-Enter" in out and "Ctrl-D" in out and "//text" in out


def test_ctrl_c_during_an_answer_cancels_the_turn_and_the_next_question_works(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [SignalMidStream("The first half"), Reply("A full answer.")]
    assert rig.run("slow question", "next question", "/exit") == 0
    assert rig.model.cancelled == 1
    assert rig.out.getvalue() == "The first half\nA full answer.\n"
    assert "answer interrupted" in rig.err.getvalue()
    transcript = rig.transcript()
    assert "[interrupted]" in transcript and "The first half" in transcript
    assert "A full answer." in transcript
    stored = [(m["role"], m.get("content")) for m in rig.history()]
    # The partial answer is kept, marked interrupted, so the next request alternates roles.
    assert stored == [("user", "slow question"),
                      ("assistant", "The first half\n\n[answer interrupted by the user]"),
                      ("user", "next question"), ("assistant", "A full answer.")]
    assert rig.history()[1]["meta"]["interrupted"] is True


def test_ctrl_c_at_an_empty_prompt_says_how_to_quit(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    assert rig.run(PromptInterrupted(had_text=False), "/exit") == 0
    assert QUIT_HINT in rig.err.getvalue()


def test_ctrl_c_that_clears_a_line_says_nothing(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.run(PromptInterrupted(had_text=True), "/exit")
    assert QUIT_HINT not in rig.err.getvalue()


def test_a_provider_failure_is_one_line_and_the_session_goes_on(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [GatewayError(ErrorKind.AUTH, "provider mock rejected the API key"), Reply("fine now")]
    assert rig.run("first", "second", "/exit") == 0
    assert rig.err.getvalue().count("tmg: error: provider mock rejected the API key") == 1
    assert rig.out.getvalue() == "fine now\n"
    assert "**error**" in rig.transcript()


def test_new_starts_an_empty_session_and_the_old_one_stays(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("one"), Reply("two")]
    rig.run("remember the word avocado", "/new", "what was the word?", "/exit")
    first, second = rig.opened
    assert first.ref.id != second.ref.id and first.ref.dir.is_dir()
    assert [m["content"] for m in rig.model.requests[1].messages if m["role"] == "user"] == ["what was the word?"]
    assert f"new session {second.ref.id}" in rig.err.getvalue()


def test_mode_switches_to_that_modes_session_and_back_resumes(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a"), Reply("b"), Reply("c")]
    rig.run("in default", "/mode work", "in work", "/mode default", "default again", "/exit")
    modes = [s.ref.mode for s in rig.opened]
    assert modes == ["default", "work", "default"]
    assert rig.opened[0].ref.id == rig.opened[2].ref.id  # resumed, not a new one
    users = [m["content"] for m in rig.model.requests[2].messages if m["role"] == "user"]
    assert users == ["in default", "default again"]
    assert [m["content"] for m in rig.model.requests[1].messages if m["role"] == "user"] == ["in work"]


def test_mode_without_a_name_shows_the_current_one(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.run("/mode", "/mode default", "/exit")
    assert "mode: default" in rig.out.getvalue()
    assert "already in mode default" in rig.err.getvalue()
    assert len(rig.opened) == 1


def test_model_changes_the_model_of_the_next_prompt_and_survives_new(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a"), Reply("b"), Reply("c")]
    rig.run("first", "/model openai/other-model", "second", "/new", "third", "/model", "/exit")
    assert [r.provider.model for r in rig.model.requests] == [
        "openai/mock-model", "openai/other-model", "openai/other-model"]
    assert "model: openai/other-model (provider mock)" in rig.out.getvalue()


def test_the_prompt_label_follows_mode_and_model(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    labels = []

    async def look() -> str:
        labels.append(rig.repl.label())
        return ""

    rig.run(look, "/model openai/x", look, "/mode work", look, "/exit")
    assert labels == [("default", "openai/mock-model"), ("default", "openai/x"), ("work", "openai/x")]


def test_cost_totals_the_whole_stored_session(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a", 100, 10, 0.5), Reply("b", 200, 20, 0.25)]
    rig.run("one", "two", "/cost", "/exit")
    assert "2 model calls, 300 in / 30 out · $0.7500" in rig.out.getvalue()


def test_cost_counts_earlier_runs_of_the_session_and_unpriced_calls(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a", 100, 10, 0.5)]
    rig.run("one", "/exit")
    rig.out.truncate(0), rig.out.seek(0)
    rig.model.replies += [Reply("b", 200, 20, None)]
    rig.run("two", "/cost", "/exit")  # a second tmg run resumes the session
    out = rig.out.getvalue()
    assert "2 model calls, 300 in / 30 out · cost n/a" in out
    assert "1 of them on models without a known price" in out
    assert "this run of tmg: 1 model call, 200 in / 20 out · cost n/a" in out


def test_usage_a_provider_did_not_report_is_unknown_not_zero(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a", 0, 0, None, reported=False)]
    rig.run("one", "/cost", "/exit")
    out = rig.out.getvalue() + rig.err.getvalue()
    assert "0 in / 0 out" not in out
    assert "1 model call, tokens unknown (the provider reported no usage)" in out
    rig.out.truncate(0), rig.out.seek(0)
    rig.model.replies += [Reply("b", 200, 20, 0.25)]
    rig.run("two", "/cost", "/exit")  # a known call beside an unknown one: a floor, said so
    assert "2 model calls, 200 in / 20 out · cost n/a (plus 1 call with unknown usage)" in rig.out.getvalue()


def test_config_is_shown_with_secrets_masked(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.run("/config", "/exit")
    out = rig.out.getvalue()
    assert "openai/mock-model" in out and "API_KEY:" in out
    assert SECRET not in out and SECRET not in rig.err.getvalue()


def test_transcript_prints_this_sessions_transcript(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("Paris."))
    rig.run("capital of France?", "/transcript", "/exit")
    out = rig.out.getvalue()
    assert out.count("capital of France?") == 1 and out.count("Paris.") == 2  # the answer, then the transcript
    assert str(rig.opened[0].ref.transcript_path) in rig.err.getvalue()


def test_memory_says_it_is_off_when_the_session_started_without_it(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.run("/memory", "/exit")
    out = rig.out.getvalue()
    assert "memory: off · server: none (memory was off when the session started)" in out
    assert out.strip().splitlines()[-1].startswith("instruction files: none")  # then the instruction files
    assert rig.model.requests == []


def test_memory_lists_the_instruction_files_with_their_paths(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    agents = rig.root / "work" / "AGENTS.md"
    agents.parent.mkdir(parents=True, exist_ok=True)
    agents.write_text("Use tabs.\n")
    rig.run("/memory", "/exit")
    assert f"  {agents} (the repository's, 10 bytes)" in rig.out.getvalue().splitlines()


def test_double_slash_sends_the_text_to_the_model(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("hosts file"))
    rig.run("//etc/hosts?", "/exit")
    assert rig.model.requests[0].messages[-1]["content"] == "/etc/hosts?"


def test_model_with_a_mistyped_provider_name_is_refused_naming_the_providers(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a")]
    rig.run("/model mokc", "still the old model", "/exit")
    err = rig.err.getvalue()
    assert "'mokc' is neither a provider nor a model id; did you mean mock?" in err
    assert "providers: " in err and "mock" in err.split("providers: ")[1]
    assert [r.provider.model for r in rig.model.requests] == ["openai/mock-model"]
