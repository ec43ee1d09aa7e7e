"""Seam A: the user's instructions at the end of the system message, recalled notes riding with
the latest user turn, one deadline per prompt (memory.md §3, issue 22), against the
schema-checking fake."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from tests.support.doubles import FakePlurCaller, ScriptedCaller
from tmg.config.model import Config, MemoryConfig
from tmg.context.persona import PersonaTransformer
from tmg.context.pipeline import Pipeline, TurnContext, with_riders
from tmg.mcp import McpCallError, ToolOutcome
from tmg.memory.client import PlurClient
from tmg.memory.framing import Note, render, without_blocks
from tmg.memory.health import WriteReport
from tmg.memory.injector import INSTRUCTIONS_HEADING, NOTES_HEADING, MemoryInjector
from tmg.memory.runtime import ReadyClient
from tmg.memory.sent_notes import WINDOW, SentNotes

TASK = "how do I indent this YAML config"
NEVER = "Never indent YAML files with tabs"  # default type: in the constraints bucket, ids only
ARCH = "YAML config lives in the deploy folder"
TERM = "YAML means YAML Ain't Markup Language, a data serialization format for configs"
FRENCH = "From now on, always answer in French."


def memory_config(**kw: Any) -> Config:
    return Config(memory=MemoryConfig(**{"enabled": True, **kw}))


async def seeded(profile: str = "lean", reject: frozenset[str] = frozenset(),
                 pinned: tuple[str, ...] = ()) -> tuple[FakePlurCaller, dict[str, str]]:
    """A fake holding one engram per inject bucket (and `pinned` ones), learned through the fake itself."""
    caller = FakePlurCaller(profile)
    ids = {}
    rows = [(NEVER, None, False), (ARCH, "architectural", False), (TERM, "terminological", False)]
    for statement, kind, pin in rows + [(p, None, True) for p in pinned]:
        args = {"statement": statement} | ({"type": kind} if kind else {}) | ({"pinned": True} if pin else {})
        outcome = await caller.call_tool("plur_learn", args)
        assert not outcome.is_error, outcome.text
        ids[statement] = outcome.data["id"]
    caller.fake.config = type(caller.fake.config)(profile=profile, reject=reject)
    caller.calls.clear()
    return caller, ids


def injector_for(caller: Any, report: WriteReport | None = None, **kw: Any) -> MemoryInjector:
    client = PlurClient(caller, on_result=report.record if report else None)
    return MemoryInjector(ReadyClient(client), **kw)


def ctx_for(messages: list[dict[str, Any]], config: Config, prompt_id: int = 1, turn: int = 1) -> TurnContext:
    return TurnContext(messages, config, prompt_id, turn)


def with_system(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "You are tmg."}, *messages]


def rider(ctx: TurnContext) -> str:
    """The notes this turn sends beside the user's turn ("" when none), checking it is the only rider."""
    if not ctx.riders:
        return ""
    (text,) = ctx.riders
    return text


def sent(ctx: TurnContext) -> list[dict[str, Any]]:
    """What the request carries: the messages with the riders on the latest user turn."""
    return with_riders(ctx.messages, ctx.riders)


def tool_of(call: tuple[Any, ...]) -> str:
    return call[1]["action"] if call[0] == "plur_admin" else call[0]


def inject_calls(caller: Any) -> list[dict[str, Any]]:
    return [c[1].get("args", c[1]) for c in caller.calls if tool_of(c) == "plur_inject_hybrid"]


@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_the_words_of_every_selected_engram_arrive_including_the_default_type(profile) -> None:
    caller, ids = await seeded(profile)
    injector = injector_for(caller)
    ctx = ctx_for(with_system({"role": "user", "content": TASK}), memory_config())
    await injector.apply(ctx)
    text = rider(ctx)
    # Nothing is pinned: every note is information, none an instruction; no markup, no end marker.
    assert text.startswith(NOTES_HEADING + "\n- ") and INSTRUCTIONS_HEADING not in str(sent(ctx))
    assert f"- {NEVER}\n" in text  # the server's text never carried these words: recall did
    assert f"- {ARCH}\n" in text
    assert text.endswith(f"- {TERM}")  # whole, not the server's 60-character cut
    assert "[" not in text and "#" not in text
    assert sorted(ctx.meta["memory_ids"]) == sorted(ids.values())
    assert "memory_unresolved" not in ctx.meta
    assert text.index(NEVER) < text.index(ARCH) < text.index(TERM)  # the constraint (a correction) first
    assert injector.last is not None and set(injector.last.ids) == set(ids.values())
    assert injector.last.previews[0].startswith("Never indent YAML")


async def test_notes_go_right_before_the_latest_user_turn_and_nothing_else_changes() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    stored = with_system({"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                         {"role": "user", "content": TASK})
    ctx = ctx_for(copy.deepcopy(stored), memory_config())
    await injector.apply(ctx)
    assert ctx.messages == stored  # the canonical list: untouched, so never stored
    payload = sent(ctx)
    assert payload[:3] == stored[:3]  # system message and earlier turns byte-identical
    # A system message of its own, as context before the question (not text a model answers).
    assert payload[3:] == [{"role": "system", "content": rider(ctx)}, stored[3]] and not ctx.persist_requested


async def test_the_users_instructions_end_the_system_message_and_stay_byte_identical() -> None:
    caller, ids = await seeded("lean", pinned=(FRENCH,))
    injector = injector_for(caller)
    systems = []
    for prompt_id, words in enumerate(["write a haiku about the sea", "explain redis eviction", TASK], 1):
        ctx = ctx_for(with_system({"role": "user", "content": words}), memory_config(), prompt_id=prompt_id)
        await injector.apply(ctx)
        systems.append(sent(ctx)[0]["content"])
        assert FRENCH not in rider(ctx)  # an instruction is never also a note
        assert ids[FRENCH] in ctx.meta["memory_ids"]
    assert systems[0] == f"You are tmg.\n\n{INSTRUCTIONS_HEADING}\n- {FRENCH}"
    assert systems == [systems[0]] * 3  # unchanged while the set is unchanged: the prefix cache holds
    # A new standing instruction changes it, once.
    learned = await caller.call_tool("plur_learn", {"statement": "Always use metric units.", "pinned": True})
    injector._pinned = None  # read again (through a broker: every prompt, from its cache)
    ctx = ctx_for(with_system({"role": "user", "content": "how far is it?"}), memory_config(), prompt_id=9)
    await injector.apply(ctx)
    assert sent(ctx)[0]["content"] == f"{systems[0]}\n- Always use metric units."
    assert learned.data["id"] in ctx.meta["memory_ids"]


async def test_a_pinned_instruction_is_resolved_from_the_pinned_set_read_beside_the_inject() -> None:
    caller, _ = await seeded("lean", pinned=(FRENCH,))
    ctx = ctx_for(with_system({"role": "user", "content": "write a haiku about the sea"}), memory_config())
    await injector_for(caller).apply(ctx)
    assert sent(ctx)[0]["content"].endswith(f"{INSTRUCTIONS_HEADING}\n- {FRENCH}")
    # Its words came from the pinned set (recall does not return it for these words).
    assert [tool_of(c) for c in caller.calls][:2] == ["plur_pin", "plur_inject_hybrid"]


def test_render_keeps_within_budget_for_any_budget() -> None:
    notes = [Note(f"ENG-{i}", "wörd " * (i + 3)) for i in range(6)]
    for budget in range(0, 600, 7):
        rendered = render(NOTES_HEADING, notes, budget)
        if rendered is not None:
            assert len(rendered.text) <= budget and rendered.text.startswith(NOTES_HEADING + "\n- ")
            assert set(rendered.ids) | set(rendered.left_out) == {n.id for n in notes}


def test_without_blocks_takes_an_echoed_part_out_and_keeps_the_answer() -> None:
    echoed = f"Use spaces.\n\n{NOTES_HEADING}\n- Never use tabs\n- Redis evicts with LRU\n\nAnything else?"
    assert without_blocks(echoed) == "Use spaces.\n\nAnything else?"
    assert without_blocks(f"{INSTRUCTIONS_HEADING}\n- {FRENCH}") == ""
    assert without_blocks("Use spaces.\n\n## PLUR MEMORY\n- Never use tabs\n[/PLUR-MEMORY]") == "Use spaces."


async def test_the_inject_payload_is_exactly_task_budget_scope() -> None:
    caller, _ = await seeded("full")
    await injector_for(caller).apply(ctx_for([{"role": "user", "content": f"  {TASK}\n"}],
                                             memory_config(inject_budget=700, scope="project:x")))
    # The task is the prompt's words less its function words: "how", "do", "I", "this" matched
    # every note PLUR holds (docs/plur-at-scale.md).
    assert inject_calls(caller) == [{"task": "indent YAML config", "budget": 700, "scope": "project:x"}]


async def test_the_task_is_the_users_words_not_the_resources_attached_to_them() -> None:
    caller, _ = await seeded("full")
    attached = f"{TASK}\n\n--- resource @docs:file:///a.yaml ---\nkey: value\n--- end of resource @docs:file:///a.yaml ---"
    ctx = TurnContext([{"role": "user", "content": attached}], memory_config(inject_budget=700), 1, 1, prompt_text=TASK)
    await injector_for(caller).apply(ctx)
    assert [args["task"] for args in inject_calls(caller)] == ["indent YAML config"]


async def test_statements_seen_before_are_not_recalled_again() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1))
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=2))
    assert [c[0] for c in caller.calls] == ["plur_pin", "plur_inject_hybrid", "plur_recall", "plur_inject_hybrid"]


async def test_notes_the_recent_prompts_carried_are_not_sent_again(tmp_path: Path) -> None:
    """What rides beside the user's turn is re-read by the model server every prompt: recall that
    brings nothing new sends nothing, in this process or the next one-shot of the session."""
    caller, ids = await seeded("full")
    injector = injector_for(caller, sent=SentNotes(tmp_path / "sent.json", "s1"))
    first = ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1)
    await injector.apply(first)
    assert NEVER in rider(first)
    second = ctx_for([{"role": "user", "content": f"{TASK} again"}], memory_config(), prompt_id=2)
    await injector.apply(second)
    assert rider(second) == "" and set(injector.last.held) == set(ids.values())
    # A one-shot continuing the session is a new process: it knows from the session's file.
    await caller.call_tool("plur_learn", {"statement": "YAML anchors repeat a config block", "type": "architectural"})
    later = injector_for(caller, sent=SentNotes(tmp_path / "sent.json", "s1"))
    third = ctx_for([{"role": "user", "content": f"{TASK} with anchors"}], memory_config(), prompt_id=1)
    await later.apply(third)
    assert rider(third) == f"{NOTES_HEADING}\n- YAML anchors repeat a config block"  # only what is new
    # Another session has its own record.
    other = injector_for(caller, sent=SentNotes(tmp_path / "sent.json", "s2"))
    fourth = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await other.apply(fourth)
    assert NEVER in rider(fourth)


async def test_a_note_is_sent_again_once_the_recent_prompts_went_without_it() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    riders = []
    for prompt_id in range(1, WINDOW + 3):
        ctx = ctx_for([{"role": "user", "content": f"{TASK} #{prompt_id}"}], memory_config(), prompt_id=prompt_id)
        await injector.apply(ctx)
        riders.append(NEVER in rider(ctx))
    assert riders == [True] + [False] * WINDOW + [True]


async def test_one_part_each_per_request_never_accumulated() -> None:
    caller, _ = await seeded("full", pinned=(FRENCH,))
    pipeline = Pipeline([PersonaTransformer(), injector_for(caller)])
    refined = await pipeline.run(ctx_for([{"role": "user", "content": TASK}], memory_config()))
    text = str(refined.payload)
    assert text.count(INSTRUCTIONS_HEADING) == 1 and text.count(NOTES_HEADING) == 1
    assert NOTES_HEADING in refined.payload[-2]["content"] and INSTRUCTIONS_HEADING in refined.payload[0]["content"]
    history = [m for m in refined.canonical if m["role"] != "system"]  # what the engine stores
    assert NOTES_HEADING not in str(history) and INSTRUCTIONS_HEADING not in str(history)
    follow = history + [{"role": "assistant", "content": "Use spaces."},
                        {"role": "user", "content": "and what about YAML tabs in the deploy folder?"}]
    refined2 = await pipeline.run(ctx_for(copy.deepcopy(follow), memory_config(), prompt_id=2))
    assert str(refined2.payload).count(INSTRUCTIONS_HEADING) == 1
    # the system message and the earlier prompt are sent as before: the prefix is kept
    assert refined2.payload[0] == refined.payload[0] and refined2.payload[1] == refined.canonical[1]
    # Running twice in one turn (Refining again after a retry) gives the same request
    again = await pipeline.run(ctx_for(copy.deepcopy(follow), memory_config(), prompt_id=2))
    assert again.payload == refined2.payload


async def test_the_stored_message_dicts_are_replaced_not_mutated() -> None:
    caller, _ = await seeded("full", pinned=(FRENCH,))
    system, user = {"role": "system", "content": "Persona."}, {"role": "user", "content": TASK}
    ctx = ctx_for([system, user], memory_config())
    await injector_for(caller).apply(ctx)
    assert NOTES_HEADING in sent(ctx)[-2]["content"] and FRENCH in sent(ctx)[0]["content"]
    assert (system, user) == ({"role": "system", "content": "Persona."}, {"role": "user", "content": TASK})


@pytest.mark.parametrize("failure", ["is_error", "raised", "timeout", "bad_result"])
async def test_failure_sends_no_notes_without_persisting(failure) -> None:
    tools = {"plur_inject_hybrid", "plur_recall"}
    caller: Any
    if failure == "is_error":
        caller, _ = await seeded("full", reject=frozenset({"plur_inject_hybrid"}))
    elif failure == "raised":
        caller = ScriptedCaller(tools, McpCallError("broken pipe"))
    elif failure == "timeout":
        caller = ScriptedCaller(tools, 30.0)
    else:
        caller = ScriptedCaller(tools, ToolOutcome.from_text("I am not JSON", is_error=False))
    report = WriteReport()
    client = PlurClient(caller, timeout=0.05, on_result=report.record)
    injector = MemoryInjector(ReadyClient(client))
    ctx = ctx_for([{"role": "system", "content": "Persona."}, {"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert rider(ctx) == "" and sent(ctx)[0]["content"] == "Persona."
    assert not ctx.persist_requested
    assert ctx.meta.get("memory_ids") in (None, []) and ctx.meta["memory_unavailable"] == "recall failed"
    assert report.injection.failures == 1 and report.failed_writes == 0
    assert injector.last is not None and injector.last.failed
    # the failed ask is not repeated within the prompt (once per prompt, not per tool iteration)
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1, turn=2))
    assert report.injection.attempts == 1
    # ... and it is said, in words, not only logged for --debug
    assert len(ctx.notices) == 1 and ctx.notices[0].startswith("memory: recall failed (plur_inject_hybrid")
    assert ctx.notices[0].endswith("; answering without it")


async def test_a_failed_recall_keeps_the_known_instructions_where_they_were() -> None:
    """The system message does not flap when one prompt's recall fails: that would cost every
    model server its cached prefix twice."""
    caller, _ = await seeded("full", pinned=(FRENCH,))
    injector = injector_for(caller)
    ok = ctx_for(with_system({"role": "user", "content": TASK}), memory_config(), prompt_id=1)
    await injector.apply(ok)
    caller.fake.config = type(caller.fake.config)(profile="full", reject=frozenset({"plur_inject_hybrid"}))
    failed = ctx_for(with_system({"role": "user", "content": TASK}), memory_config(), prompt_id=2)
    await injector.apply(failed)
    assert sent(failed)[0] == sent(ok)[0] and rider(failed) == ""
    assert failed.meta["memory_unavailable"] == "recall failed"


async def test_a_recall_failing_on_every_prompt_is_said_once_per_session_and_never_a_write_failure() -> None:
    caller, _ = await seeded("full", reject=frozenset({"plur_inject_hybrid"}))
    report = WriteReport()
    injector = injector_for(caller, report)
    said: list[str] = []
    for prompt_id in (1, 2, 3):
        ctx = ctx_for([{"role": "user", "content": f"{TASK} #{prompt_id}"}], memory_config(), prompt_id=prompt_id)
        await injector.apply(ctx)
        assert NEVER not in str(sent(ctx))
        said += ctx.notices
    assert report.injection.failures == 3 and report.failed_writes == 0 and report.dead_tools() == []
    assert report.notice() is None  # the end-of-session write notice stays about writes
    (notice,) = said
    assert notice.startswith("memory: recall failed (plur_inject_hybrid: ") and "answering without it" in notice
    assert "\n" not in notice and len(notice) < 300


async def test_a_malformed_count_in_the_recall_result_fails_open_with_the_notice() -> None:
    body = ('{"directives": "", "consider": "", "injected_ids": ["ENG-1"], "count": "lots", "tokens_used": 0}')
    injector = injector_for(ScriptedCaller({"plur_inject_hybrid", "plur_recall"},
                                           ToolOutcome.from_text(body, is_error=False)))
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert sent(ctx) == [{"role": "user", "content": TASK}]
    (notice,) = ctx.notices
    assert "recall failed" in notice and "count" in notice


async def test_disabled_memory_sends_nothing_and_makes_no_call() -> None:
    caller, _ = await seeded("full", pinned=(FRENCH,))
    injector = injector_for(caller)
    plain = ctx_for([{"role": "system", "content": "Persona."}, {"role": "user", "content": TASK}],
                    memory_config(enabled=False))
    await injector.apply(plain)
    assert not plain.persist_requested and sent(plain) == plain.messages and caller.calls == []
    assert plain.messages[0] == {"role": "system", "content": "Persona."}


async def test_hot_reload_is_read_each_turn() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert NOTES_HEADING in rider(ctx)
    off = ctx_for([{"role": "user", "content": TASK}], memory_config(enabled=False), prompt_id=1, turn=2)
    await injector.apply(off)
    assert sent(off) == [{"role": "user", "content": TASK}]
    small = ctx_for([{"role": "user", "content": TASK}], memory_config(inject_budget=60), prompt_id=1, turn=3)
    await injector.apply(small)
    assert 0 < len(rider(small)) <= 60 * 4


async def test_once_per_prompt_not_per_tool_iteration_unless_the_text_changes() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    for turn in (1, 2, 3):  # one prompt, three model calls (tool iterations)
        ctx = ctx_for([{"role": "user", "content": TASK}, {"role": "assistant", "content": "..."}],
                      memory_config(), prompt_id=7, turn=turn)
        await injector.apply(ctx)
        assert NEVER in rider(ctx) and len(ctx.meta["memory_ids"]) == 3  # every turn carries it
    assert len(inject_calls(caller)) == 1
    await injector.apply(ctx_for([{"role": "user", "content": "YAML config folder?"}], memory_config(), prompt_id=7))
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=8))
    assert len(inject_calls(caller)) == 3


async def test_no_call_for_an_empty_user_text() -> None:
    caller, _ = await seeded("full")
    ctx = ctx_for([{"role": "system", "content": "P."}, {"role": "user", "content": "  \n"}], memory_config())
    await injector_for(caller).apply(ctx)
    assert caller.calls == [] and rider(ctx) == "" and not ctx.persist_requested


async def test_budget_trim_at_a_character_boundary() -> None:
    caller, ids = await seeded("full")
    # room for the first note whole and about half of the second, in tokens of 4 characters
    budget = (len(NOTES_HEADING) + len(f"\n- {ARCH}") + 20) // 4
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config(inject_budget=budget))
    injector = injector_for(caller)
    await injector.apply(ctx)
    text = rider(ctx)
    assert len(text) <= budget * 4
    whole, cut = text.splitlines()[1:]
    by_start = {s[:12]: s for s in (NEVER, ARCH, TERM)}
    assert whole[2:] in (NEVER, ARCH)
    full = by_start[cut[2:14]]
    assert cut.endswith("…") and full.startswith(cut[2:-1]) and cut[2:-1] != full
    id_of = {v: k for k, v in ids.items()}
    assert [id_of[i] for i in ctx.meta["memory_ids"]] == [whole[2:], full]
    assert [id_of[i] for i in injector.last.left_out if id_of[i] in (whole[2:], full)] == []


async def test_notes_that_cannot_fit_are_left_out() -> None:
    caller, _ = await seeded("full")
    ctx = ctx_for([{"role": "system", "content": "P."}, {"role": "user", "content": TASK}],
                  memory_config(inject_budget=10))
    await injector_for(caller).apply(ctx)
    assert rider(ctx) == "" and ctx.meta["memory_ids"] == [] and sent(ctx)[0]["content"] == "P."


async def test_unresolvable_ids_are_recorded_and_counted_not_shown_as_bare_ids() -> None:
    """An id the server selected but neither its text, the cache, the pinned set nor recall can put into words."""
    inject = ToolOutcome.from_text('{"directives": "", "consider": "", "count": 1, "tokens_used": 5,'
                                   ' "injected_ids": ["ENG-X"]}', is_error=False)

    class OnlyInject(ScriptedCaller):
        async def call_tool(self, name, arguments, timeout=3.0):
            self.calls.append((name, arguments))
            if name == "plur_recall":
                return ToolOutcome.from_text('{"results": [], "count": 0}', is_error=False)
            if name == "plur_pin":
                return ToolOutcome.from_text('{"count": 0, "pinned": []}', is_error=False)
            return inject

    caller = OnlyInject({"plur_inject_hybrid", "plur_recall", "plur_pin"}, inject)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    injector = MemoryInjector(ReadyClient(PlurClient(caller)))
    await injector.apply(ctx)
    assert rider(ctx) == ""  # nothing in words: no notes
    assert ctx.meta["memory_unresolved"] == ["ENG-X"] and ctx.meta["memory_ids"] == []
    assert sorted(c[0] for c in caller.calls) == ["plur_inject_hybrid", "plur_pin", "plur_recall"]
    assert injector.stats.unresolved == 1


async def test_no_live_server_skips_the_prompt_and_asks_on_the_next() -> None:
    caller, _ = await seeded("full")

    class Later:
        starting = True

        def __init__(self) -> None:
            self.ready: PlurClient | None = None
            self.waits: list[float] = []

        async def client(self, wait: float) -> PlurClient | None:
            self.waits.append(wait)
            return self.ready

    source = Later()
    injector = MemoryInjector(source, deadline=0.25)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert sent(ctx) == [{"role": "user", "content": TASK}] and source.waits == [0.25]
    # A slow start is said once, in words, so the missing recall is never silent.
    assert ctx.notices == ["memory: the memory server is still starting after 0.25 s; this prompt goes without recall"]
    source.ready = PlurClient(caller)
    ctx2 = ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1, turn=2)
    await injector.apply(ctx2)
    assert NEVER in rider(ctx2)


async def test_a_list_content_user_message_is_sent_as_it_is_after_the_notes() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    user = {"role": "user", "content": [{"type": "text", "text": TASK}]}
    ctx = ctx_for([{"role": "system", "content": "Persona."}, user], memory_config())
    await injector.apply(ctx)
    notes, last = sent(ctx)[-2:]
    assert notes["role"] == "system" and notes["content"].startswith(NOTES_HEADING) and last is user
    assert user == {"role": "user", "content": [{"type": "text", "text": TASK}]}


class _Paced(FakePlurCaller):
    """Records how many calls were in flight at once, and holds the pinned read and the recall
    for the given seconds (as a slow server would; each call records the bound it was given)."""

    def __init__(self, profile: str, hold: dict[str, float] | None = None) -> None:
        super().__init__(profile)
        self.out = self.most = 0
        self.hold = hold or {}
        self.started: dict[str, float] = {}
        self.bounds: dict[str, float] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        tool = arguments["action"] if name == "plur_admin" else name
        self.started[tool] = asyncio.get_running_loop().time()
        self.bounds[tool] = timeout
        self.out += 1
        self.most = max(self.most, self.out)
        try:
            await asyncio.sleep(self.hold.get(tool, 0))  # a server answers later: the caller may go on meanwhile
            return await super().call_tool(name, arguments, timeout)
        finally:
            self.out -= 1


@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_the_pinned_set_is_asked_for_beside_the_inject_not_after_it(profile) -> None:
    """The first prompt waits for one round trip to the server, not two; without a broker the
    pinned set is read once a session, and the user's pinned instruction still arrives as one."""
    caller = _Paced(profile)
    learned = await caller.call_tool("plur_learn", {"statement": NEVER, "pinned": True})
    assert not learned.is_error, learned.text
    caller.calls.clear()
    caller.most = 0
    injector = injector_for(caller)
    for prompt_id in (1, 2):
        ctx = ctx_for(with_system({"role": "user", "content": TASK}), memory_config(), prompt_id=prompt_id)
        await injector.apply(ctx)
        assert sent(ctx)[0]["content"].endswith(f"{INSTRUCTIONS_HEADING}\n- {NEVER}")
    assert caller.most == 2
    assert [tool_of(c) for c in caller.calls].count("plur_pin") == 1


async def test_a_slow_recall_does_not_add_to_a_slow_pinned_read() -> None:
    """One deadline for the prompt's memory: the recall that resolves words gets what the pinned
    read left of it, and the prompt goes on when it passes, reported like a failed recall."""
    deadline, pinned_s = 0.6, 0.3
    caller = _Paced("full", hold={"plur_pin": pinned_s, "plur_recall": 30.0})
    for statement in (NEVER, ARCH):
        assert not (await caller.call_tool("plur_learn", {"statement": statement})).is_error
    caller.calls.clear()
    injector = injector_for(caller, deadline=deadline)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    loop = asyncio.get_running_loop()
    began = loop.time()
    await injector.apply(ctx)
    bounds = caller.bounds
    assert caller.started["plur_recall"] - began >= pinned_s  # it began once the pinned read was in
    # The bounds it was given fit in what was left: the two slow reads share one deadline.
    assert caller.started["plur_recall"] - began + bounds["plur_recall"] <= deadline + 0.05
    assert bounds["plur_pin"] <= deadline and bounds["plur_inject_hybrid"] <= deadline
    assert rider(ctx) == "" and ctx.meta["memory_unavailable"] == "recall failed"
    assert injector.stats.deadline_hits == 1
    (notice,) = ctx.notices
    assert notice == ("memory: recall failed (no answer from the recall of their words within the prompt's "
                      "memory deadline); answering without it")


async def test_the_injector_says_while_a_prompts_ask_is_out() -> None:
    """The one-shot imports its model backend on a thread while the ask is out (the prompt waits
    on another process meanwhile: ChatSession.prewarm_if_memory_starting), not once it is in."""
    caller = _Paced("full", hold={"plur_inject_hybrid": 0.3})
    assert not (await caller.call_tool("plur_learn", {"statement": ARCH})).is_error
    injector = injector_for(caller, deadline=0.1)
    assert not injector.asking
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    asking = asyncio.ensure_future(injector.apply(ctx))
    await asyncio.sleep(0.05)
    assert injector.asking
    await asking
    assert not injector.asking and injector.stats.deadline_hits == 1  # and not left set by a deadline


class _Counted(_Paced):
    """A caller that counts its calls on the wire, as the broker's does (`in_flight`)."""

    def __init__(self, profile: str, hold: dict[str, float] | None = None) -> None:
        super().__init__(profile, hold)
        self.answered: list[str] = []

    def in_flight(self) -> list[int]:  # the broker caller's shape: one entry per call out
        return list(range(self.out))

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        outcome = await super().call_tool(name, arguments, timeout)
        self.answered.append(arguments["action"] if name == "plur_admin" else name)
        return outcome


async def test_work_given_for_the_ask_runs_once_its_calls_are_on_the_wire_and_once_a_session() -> None:
    """The one-shot imports its model backend on the loop while the recall is out: the work runs
    after both of the prompt's calls went out and before either answered, and only for the
    first prompt."""
    caller = _Counted("full", hold={"plur_inject_hybrid": 0.05, "plur_pin": 0.05})
    assert not (await caller.call_tool("plur_learn", {"statement": ARCH})).is_error
    caller.answered.clear()
    injector = injector_for(caller)
    seen: list[tuple[int, list[str]]] = []
    injector.while_asking = lambda: seen.append((caller.out, list(caller.answered)))
    for prompt_id in (1, 2):
        await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=prompt_id))
    assert seen == [(2, [])]
    assert injector.while_asking is None


async def test_work_given_for_the_ask_runs_without_a_count_of_calls_on_the_wire() -> None:
    """A direct caller counts nothing: the work still runs, a few loop steps into the ask."""
    caller = _Paced("full", hold={"plur_inject_hybrid": 0.05})
    assert not (await caller.call_tool("plur_learn", {"statement": ARCH})).is_error
    injector = injector_for(caller)
    ran: list[int] = []
    injector.while_asking = lambda: ran.append(caller.out)
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config()))
    assert len(ran) == 1
