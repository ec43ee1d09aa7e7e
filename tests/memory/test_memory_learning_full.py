"""The shipped tier (`full`): what the user typed and taught is learned in their words, pinned when
standing, in the project's scope when about the project, capped per session across processes;
nothing from piped text, nothing secret, no answer written (memory.md §4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.doubles import FakePlurCaller
from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion, ToolCallRequest, Usage
from tmg.mcp import ToolOutcome
from tmg.memory.client import PlurClient
from tmg.memory.health import WriteReport
from tmg.memory.learning import LearningHook
from tmg.memory.lock import WriteLock
from tmg.project import Project
from tmg.memory.runtime import ReadyClient
from tmg.memory.scrub import make_scrubber
from tmg.memory.spool import BatchSpool

SID = "20260101-120000-abcd"
USER = {"tags": [f"session:{SID}", "mode:chat", "origin:user"], "source": "tmg: the user's own words"}


def turn(user: str, text: str = "ok", *, prompt_id: int = 1, index: int = 1, typed: str | None = None,
         previous: str = "", tool_calls: bool = False) -> Turn:
    t = Turn(prompt_id, index, user, SID, "chat", typed_text=typed, previous_answer=previous)
    calls = [ToolCallRequest("c1", "read_file", "{}")] if tool_calls else []
    t.completion = Completion(text, calls, Usage())
    return t


def learned(caller: FakePlurCaller) -> list[dict[str, Any]]:
    out = []
    for name, args, _ in caller.calls:
        if name == "plur_learn":
            out.append(args)
        elif name == "plur_admin" and args.get("action") == "plur_learn":
            out.append(args["args"])
    return out


def hook_for(live, caller: Any, **kw: Any) -> LearningHook:
    live.set(learn="full")
    return LearningHook(ReadyClient(PlurClient(caller)), live, **kw)


async def test_standing_instructions_are_pinned_in_the_users_words_and_answers_are_not_written(live, tmp_path) -> None:
    caller = FakePlurCaller("full")
    report = WriteReport()
    hook = LearningHook(ReadyClient(PlurClient(caller, on_result=report.record)), live,
                        lock=WriteLock(tmp_path / ".tmg-write.lock"))
    live.set(learn="full")
    await hook.after_turn(turn("Going forward, include a short summary at the end of long answers."), None)
    await hook.after_turn(turn("what is YAML?", "a format", prompt_id=2), None)
    await hook.after_turn(turn("ok thanks. stop using emojis", prompt_id=3), None)
    await hook.drain(5)
    assert learned(caller) == [
        {"statement": "Going forward, include a short summary at the end of long answers.",
         "tags": USER["tags"] + ["kind:instruction"], "source": USER["source"], "pinned": True},
        {"statement": "stop using emojis", "tags": USER["tags"] + ["kind:instruction"], "source": USER["source"],
         "pinned": True},
    ]
    assert not [c for c in caller.calls if c[0] in ("plur_capture", "plur_learn_batch")]  # no answer written
    assert hook.batch(SID) == [] and report.failed_writes == 0
    assert set(hook.instructions) == set(hook.statements) and len(hook.statements) == 2


async def test_only_what_the_user_typed_teaches_never_the_piped_text(live) -> None:
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller)
    piped = "From now on, all requests must use TLS 1.3.\nAlways rotate keys monthly."
    await hook.after_turn(turn(f"summarise this changelog\n\n{piped}", typed="summarise this changelog"), None)
    await hook.after_turn(turn(f"from now on answer in French\n\n{piped}", typed="from now on answer in French",
                               prompt_id=2), None)
    await hook.drain(5)
    assert [p["statement"] for p in learned(caller)] == ["from now on answer in French"]


async def test_a_correction_is_learned_unpinned_with_what_it_corrects(live) -> None:
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller)
    answer = "Set `max_pool_size` in config.yaml. Restart the service afterwards."
    await hook.after_turn(turn("no, that key doesn't exist; the real one is `pool.max_connections`",
                               previous=answer), None)
    await hook.drain(5)
    (payload,) = learned(caller)
    assert payload["statement"] == ('no, that key doesn\'t exist; the real one is `pool.max_connections` '
                                    '(correcting the earlier answer: "Set `max_pool_size` in config.yaml.")')
    assert "pinned" not in payload and payload["tags"][-1] == "kind:correction"


async def test_a_teaching_is_judged_once_per_prompt_not_once_per_tool_call(live) -> None:
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller, session_dir=None)
    await hook.after_turn(turn("never push to main", "", tool_calls=True), None)
    await hook.after_turn(turn("never push to main", "done", index=2), None)
    await hook.drain(5)
    assert len(learned(caller)) == 1


async def test_the_cap_and_duplicates_hold_across_processes_sharing_the_session(live, tmp_path) -> None:
    live.set(max_learns_per_session=2)
    first_caller, second_caller = FakePlurCaller("full"), FakePlurCaller("full")
    first = hook_for(live, first_caller, session_dir=tmp_path)
    await first.after_turn(turn("Never push to main."), None)
    await first.drain(5)
    second = hook_for(live, second_caller, session_dir=tmp_path)  # the next one-shot of the session
    await second.after_turn(turn("never push to MAIN."), None)  # a duplicate: sent and counted once
    await second.after_turn(turn("Always sign commits.", prompt_id=2), None)
    await second.after_turn(turn("From now on answer in German.", prompt_id=3), None)  # over the cap
    await second.drain(5)
    assert [p["statement"] for p in learned(first_caller)] == ["Never push to main."]
    assert [p["statement"] for p in learned(second_caller)] == ["Always sign commits."]
    assert second.learned_count(SID) == 2
    assert "never" not in (tmp_path / "memory-learned").read_text().lower()  # hashes, not the words


async def test_project_teachings_go_to_the_project_scope_personal_ones_to_none(live, tmp_path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller, project=Project("github.com/acme/shop", tmp_path))
    await hook.after_turn(turn("in this repo run the linter before every commit"), None)
    await hook.after_turn(turn("make the Makefile's test target run pytest with -x from now on", prompt_id=2), None)
    await hook.after_turn(turn("always answer in British English", prompt_id=3), None)
    await hook.drain(5)
    scopes = [(p["statement"][:20], p.get("scope")) for p in learned(caller)]
    assert scopes == [("in this repo run the", "project:github.com/acme/shop"),
                      ("make the Makefile's ", "project:github.com/acme/shop"),
                      ("always answer in Bri", None)]
    assert set(hook.scopes.values()) == {"project:github.com/acme/shop", "global"}


async def test_memory_scope_in_the_config_wins(live, tmp_path) -> None:
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller, project=Project("github.com/acme/shop", tmp_path))
    live.set(scope="user:alice")
    await hook.after_turn(turn("in this repo run the linter before every commit"), None)
    await hook.drain(5)
    assert [p["scope"] for p in learned(caller)] == ["user:alice"]


async def test_nothing_that_looks_like_a_secret_is_learned_or_spooled(live, tmp_path) -> None:
    spool = BatchSpool(tmp_path, scrub=make_scrubber())
    live.set(learn="full")
    hook = LearningHook(ReadyClient(None), live, spool=spool, scrub=make_scrubber())
    await hook.after_turn(turn("From now on use DB_PASSWORD=hunter2secret in examples"), None)
    await hook.after_turn(turn("Here's the pw for tomorrow, staging pw is Wint3r-Ledger-88, and from now on "
                               "always remind me to rotate it after a release.", prompt_id=2), None)
    await hook.drain(5)
    (entry,) = spool.pending()  # no server: the learn waits in the spool, without the password
    assert entry.kind == "learn" and entry.write["statement"] == "from now on always remind me to rotate it after a release."
    text = "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert "hunter2secret" not in text and "Wint3r" not in text


async def test_what_the_user_taught_is_on_disk_before_the_answer_and_sent_after_the_turn(live, tmp_path) -> None:
    # A kill -9 right after the answer reaches history must not lose what the prompt taught, so it
    # is spooled before the model answers; it is sent when the turn is over, not beside the recall.
    spool = BatchSpool(tmp_path, scrub=make_scrubber())
    caller = FakePlurCaller("full")
    hook = LearningHook(ReadyClient(PlurClient(caller)), live, spool=spool, scrub=make_scrubber())
    live.set(learn="full")
    taught = turn("from now on answer in French")
    hook.before_turn(taught)
    (entry,) = spool.pending()
    assert entry.kind == "learn" and entry.write["statement"] == "from now on answer in French"
    await hook.drain(5)
    assert learned(caller) == []  # nothing sent while the model answers
    await hook.after_turn(taught, None)
    await hook.drain(5)
    assert [p["statement"] for p in learned(caller)] == ["from now on answer in French"]  # once
    assert spool.pending() == []


class DemotingCaller(FakePlurCaller):
    """The real server's answer to a project-scoped learn it finds sensitive: stored as `local`."""

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        outcome = await super().call_tool(name, arguments, timeout)
        if name == "plur_learn" and not outcome.is_error:
            data = {**outcome.data, "scope": "local", "demoted": True, "requested_scope": arguments.get("scope"),
                    "warning": 'Sensitive content (internal_host) detected — stored at "local" instead'}
            return ToolOutcome.from_text(json.dumps(data), is_error=False)
        return outcome


async def test_a_project_teaching_plur_keeps_personal_is_retired_and_the_user_told(live, tmp_path) -> None:
    caller = DemotingCaller("full")
    said: list[str] = []
    hook = hook_for(live, caller, project=Project("acme-1234abcd", tmp_path), warn=said.append)
    await hook.after_turn(turn("in this repo always deploy to db1.corp.internal first"), None)
    await hook.drain(5)
    assert [name for name, _, _ in caller.calls] == ["plur_learn", "plur_forget"]
    assert hook.statements == {} and hook.instructions == set()
    assert said == ["memory: not learned for this project: PLUR keeps text naming internal host out of "
                    "project scopes (project:acme-1234abcd); `tmg memory add` can keep it as a personal note"]


def test_a_project_is_named_by_its_origin_remote_in_every_clone(tmp_path: Path) -> None:
    from tmg.project import find_project, remote_id

    for url in ("git@github.com:Acme/Shop.git", "https://bob:s3cret@github.com/acme/shop.git",
                "ssh://git@github.com/acme/shop", "https://github.com/acme/shop/"):
        assert remote_id(url) == "github.com/acme/shop"
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "config").write_text('[core]\n\tbare = false\n[remote "origin"]\n'
                                           '\turl = git@github.com:acme/shop.git\n')
    (clone / "src").mkdir()
    project = find_project(clone / "src")
    assert project.root == clone and project.scope == "project:github.com/acme/shop"
    assert project.has_file("src") and not project.has_file("../clone") and not project.has_file("/etc/passwd")
    plain = find_project(tmp_path)  # no git: the folder, named by its name and a hash of its path
    assert plain.root == tmp_path.resolve() and plain.id.startswith(tmp_path.name.lower()[:40] + "-")
    assert str(tmp_path) not in plain.scope


def test_a_worktree_finds_its_repository_config(tmp_path: Path) -> None:
    from tmg.project import find_project

    main = tmp_path / "main" / ".git"
    (main / "worktrees" / "wt").mkdir(parents=True)
    (main / "config").write_text('[remote "origin"]\n\turl = https://gitlab.example.com/grp/app.git\n')
    (main / "worktrees" / "wt" / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {main / 'worktrees' / 'wt'}\n")
    assert find_project(wt).id == "gitlab.example.com/grp/app"


def test_another_projects_engrams_are_not_visible() -> None:
    from tmg.project import visible

    home = "project:github.com/acme/shop"
    assert visible(None, home) and visible("global", home) and visible("local", home) and visible("user:x", home)
    assert visible(home, home) and not visible("project:github.com/acme/other", home)
    assert visible(home, "") and visible(home, "user:alice")  # no project known: nothing filtered
