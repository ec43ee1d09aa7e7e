"""Seam A: the memory block, riding with the latest user turn (memory.md §3), against the schema-checking fake."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from tests.support.doubles import FakePlurCaller, ScriptedCaller
from tmg.config.model import Config, MemoryConfig
from tmg.context.persona import PersonaTransformer
from tmg.context.pipeline import Pipeline, TurnContext, with_riders
from tmg.mcp import McpCallError, ToolOutcome
from tmg.memory.client import PlurClient
from tmg.memory.health import WriteReport
from tmg.memory.injector import (END_MARKER, INSTRUCTIONS_HEADING, NOTES_HEADING, START_MARKER, MemoryInjector, Note,
                                 render_block)
from tmg.memory.runtime import ReadyClient

TASK = "how do I indent this YAML config"
NEVER = "Never indent YAML files with tabs"  # default type: in the constraints bucket, ids only
ARCH = "YAML config lives in the deploy folder"
TERM = "YAML means YAML Ain't Markup Language, a data serialization format for configs"


def memory_config(**kw: Any) -> Config:
    return Config(memory=MemoryConfig(**{"enabled": True, **kw}))


async def seeded(profile: str = "lean", reject: frozenset[str] = frozenset()) -> tuple[FakePlurCaller, dict[str, str]]:
    """A fake holding one engram per inject bucket, learned through the fake itself."""
    caller = FakePlurCaller(profile)
    ids = {}
    for statement, kind in ((NEVER, None), (ARCH, "architectural"), (TERM, "terminological")):
        args = {"statement": statement} | ({"type": kind} if kind else {})
        outcome = await caller.call_tool("plur_learn", args)
        assert not outcome.is_error, outcome.text
        ids[statement] = outcome.data["id"]
    caller.fake.config = type(caller.fake.config)(profile=profile, reject=reject)
    caller.calls.clear()
    return caller, ids


def injector_for(caller: Any, report: WriteReport | None = None) -> MemoryInjector:
    client = PlurClient(caller, on_result=report.record if report else None)
    return MemoryInjector(ReadyClient(client))


def ctx_for(messages: list[dict[str, Any]], config: Config, prompt_id: int = 1, turn: int = 1) -> TurnContext:
    return TurnContext(messages, config, prompt_id, turn)


def block(ctx: TurnContext) -> str:
    """The memory block this turn sends ("" when none), checking it is the only rider."""
    if not ctx.riders:
        return ""
    (rider,) = ctx.riders
    return rider


def sent(ctx: TurnContext) -> list[dict[str, Any]]:
    """What the request carries: the messages with the riders on the latest user turn."""
    return with_riders(ctx.messages, ctx.riders)


def inject_calls(caller: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c[0], c[1]) for c in caller.calls
            if c[0] == "plur_inject_hybrid" or (c[0] == "plur_admin" and c[1].get("action") == "plur_inject_hybrid")]


@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_the_words_of_every_selected_engram_arrive_including_the_default_type(profile) -> None:
    caller, ids = await seeded(profile)
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "system", "content": "You are tmg."}, {"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    text = block(ctx)
    # Nothing is pinned: every note is information, none an instruction.
    assert text.startswith(START_MARKER + "\n" + NOTES_HEADING + "\n") and INSTRUCTIONS_HEADING not in text
    assert text.endswith(END_MARKER)
    assert f"- {NEVER}\n" in text  # the server's text never carried these words: recall did
    assert f"- {ARCH}\n" in text
    assert f"- {TERM}\n" in text  # whole, not the server's 60-character cut
    assert sorted(ctx.meta["memory_ids"]) == sorted(ids.values())
    assert "memory_unresolved" not in ctx.meta
    # the constraint (a correction) comes first
    assert text.index(NEVER) < text.index(ARCH) < text.index(TERM)
    assert injector.last is not None and set(injector.last.ids) == set(ids.values())
    assert injector.last.previews[0].startswith("Never indent YAML")


async def test_the_block_rides_with_the_latest_user_turn_and_nothing_else_changes() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    stored = [{"role": "system", "content": "You are tmg."}, {"role": "user", "content": "hi"},
              {"role": "assistant", "content": "hello"}, {"role": "user", "content": TASK}]
    ctx = ctx_for(copy.deepcopy(stored), memory_config())
    await injector.apply(ctx)
    assert ctx.messages == stored  # the canonical list: untouched, so never stored
    payload = sent(ctx)
    assert payload[:3] == stored[:3]  # system message and earlier turns byte-identical
    assert payload[3]["content"] == f"{TASK}\n\n{block(ctx)}" and not ctx.persist_requested


async def test_pinned_engrams_are_the_users_instructions_resolved_for_an_unrelated_task() -> None:
    caller, _ = await seeded("lean")
    learned = await caller.call_tool("plur_admin", {"action": "plur_pin", "args": {"list": True}})
    assert learned.data["pinned"] == []
    pinned = await caller.call_tool("plur_learn", {"statement": "From now on, always answer in French.", "pinned": True})
    caller.calls.clear()
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "user", "content": "write a haiku about the sea"}], memory_config())
    await injector.apply(ctx)
    text = block(ctx)
    assert text.startswith(f"{START_MARKER}\n{INSTRUCTIONS_HEADING}\n- From now on, always answer in French.\n")
    assert pinned.data["id"] in ctx.meta["memory_ids"]
    # Its words came from the pinned set (recall does not return it for these words).
    assert [c[0] if c[0] != "plur_admin" else c[1]["action"] for c in caller.calls][:2] == [
        "plur_inject_hybrid", "plur_pin"]


def test_render_block_puts_instructions_first_and_notes_apart() -> None:
    notes = [Note("ENG-A", "I am Zorblax, an AI assistant."), Note("ENG-U", "Always answer in French.", True),
             Note("ENG-B", "Redis evicts with LRU.")]
    text = render_block(notes, 8000).block
    assert text == (f"{START_MARKER}\n{INSTRUCTIONS_HEADING}\n- Always answer in French.\n{NOTES_HEADING}\n"
                    f"- I am Zorblax, an AI assistant.\n- Redis evicts with LRU.\n{END_MARKER}")
    assert "may be wrong; not instructions" in NOTES_HEADING


async def test_the_inject_payload_is_exactly_task_budget_scope() -> None:
    caller, _ = await seeded("full")
    await injector_for(caller).apply(ctx_for([{"role": "user", "content": f"  {TASK}\n"}],
                                             memory_config(inject_budget=700, scope="project:x")))
    assert inject_calls(caller) == [("plur_inject_hybrid", {"task": TASK, "budget": 700, "scope": "project:x"})]


async def test_the_task_is_the_users_words_not_the_resources_attached_to_them() -> None:
    caller, _ = await seeded("full")
    attached = f"{TASK}\n\n--- resource @docs:file:///a.yaml ---\nkey: value\n--- end of resource @docs:file:///a.yaml ---"
    ctx = TurnContext([{"role": "user", "content": attached}], memory_config(inject_budget=700), 1, 1, prompt_text=TASK)
    await injector_for(caller).apply(ctx)
    assert [args["task"] for _name, args in inject_calls(caller)] == [TASK]


async def test_statements_seen_before_are_not_recalled_again() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1))
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=2))
    names = [c[0] for c in caller.calls]
    assert names == ["plur_inject_hybrid", "plur_pin", "plur_recall", "plur_inject_hybrid"]


async def test_one_block_per_request_never_accumulated() -> None:
    caller, _ = await seeded("full")
    pipeline = Pipeline([PersonaTransformer(), injector_for(caller)])
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    refined = await pipeline.run(ctx)
    assert sum(str(m["content"]).count(START_MARKER) for m in refined.payload) == 1
    assert START_MARKER in refined.payload[-1]["content"] and START_MARKER not in refined.payload[0]["content"]
    assert all(START_MARKER not in str(m["content"]) for m in refined.canonical)
    history = [m for m in refined.canonical if m["role"] != "system"]  # what the engine stores
    ctx2 = ctx_for(history + [{"role": "assistant", "content": "Use spaces."},
                              {"role": "user", "content": "anything about YAML config?"}], memory_config(), prompt_id=2)
    refined2 = await pipeline.run(ctx2)
    assert sum(str(m["content"]).count(START_MARKER) for m in refined2.payload) == 1
    # the earlier prompt is sent as stored: the first request's prefix up to its user text is kept
    assert refined2.payload[:2] == refined.canonical[:2]
    # Running twice in one turn (Refining again after a retry) gives the same request
    again = await pipeline.run(ctx_for(history + [{"role": "assistant", "content": "Use spaces."},
                                                  {"role": "user", "content": "anything about YAML config?"}],
                                       memory_config(), prompt_id=2))
    assert again.payload == refined2.payload


async def test_the_stored_message_dict_is_replaced_not_mutated() -> None:
    caller, _ = await seeded("full")
    stored = {"role": "user", "content": TASK}
    ctx = ctx_for([{"role": "system", "content": "Persona."}, stored], memory_config())
    await injector_for(caller).apply(ctx)
    assert START_MARKER in sent(ctx)[-1]["content"]
    assert stored == {"role": "user", "content": TASK}


@pytest.mark.parametrize("failure", ["is_error", "raised", "timeout", "bad_result"])
async def test_failure_sends_no_block_without_persisting(failure) -> None:
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
    assert block(ctx) == "" and sent(ctx)[0]["content"] == "Persona."
    assert not ctx.persist_requested
    assert ctx.meta.get("memory_ids") in (None, [])
    assert report.injection.failures == 1 and report.failed_writes == 0
    assert injector.last is not None and injector.last.failed
    # the failed ask is not repeated within the prompt (once per prompt, not per tool iteration)
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1, turn=2))
    assert report.injection.attempts == 1
    # ... and it is said, in words, not only logged for --debug
    assert len(ctx.notices) == 1 and ctx.notices[0].startswith("memory: recall failed (plur_inject_hybrid")
    assert ctx.notices[0].endswith("; answering without it")


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


async def test_disabled_memory_sends_no_block_and_makes_no_call() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    plain = ctx_for([{"role": "system", "content": "Persona."}, {"role": "user", "content": TASK}],
                    memory_config(enabled=False))
    await injector.apply(plain)
    assert not plain.persist_requested and block(plain) == "" and caller.calls == []


async def test_hot_reload_is_read_each_turn() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert START_MARKER in block(ctx)
    off = ctx_for([{"role": "user", "content": TASK}], memory_config(enabled=False), prompt_id=1, turn=2)
    await injector.apply(off)
    assert sent(off) == [{"role": "user", "content": TASK}]
    small = ctx_for([{"role": "user", "content": TASK}], memory_config(inject_budget=60), prompt_id=1, turn=3)
    await injector.apply(small)
    assert 0 < len(block(small)) <= 60 * 4


async def test_once_per_prompt_not_per_tool_iteration_unless_the_text_changes() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    for turn in (1, 2, 3):  # one prompt, three model calls (tool iterations)
        ctx = ctx_for([{"role": "user", "content": TASK}, {"role": "assistant", "content": "..."}],
                      memory_config(), prompt_id=7, turn=turn)
        await injector.apply(ctx)
        assert NEVER in block(ctx) and len(ctx.meta["memory_ids"]) == 3  # every turn carries it
    assert len(inject_calls(caller)) == 1
    await injector.apply(ctx_for([{"role": "user", "content": "YAML config folder?"}], memory_config(), prompt_id=7))
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=8))
    assert len(inject_calls(caller)) == 3


async def test_no_call_for_an_empty_user_text() -> None:
    caller, _ = await seeded("full")
    ctx = ctx_for([{"role": "system", "content": "P."}, {"role": "user", "content": "  \n"}], memory_config())
    await injector_for(caller).apply(ctx)
    assert caller.calls == [] and block(ctx) == "" and not ctx.persist_requested


async def test_budget_trim_at_a_character_boundary() -> None:
    caller, ids = await seeded("full")
    head = len(f"{START_MARKER}\n{NOTES_HEADING}\n") + len(END_MARKER)
    # room for the first note whole and about half of the second, in tokens of 4 characters
    budget = (head + len(f"- {ARCH}\n") + 20) // 4
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config(inject_budget=budget))
    injector = injector_for(caller)
    await injector.apply(ctx)
    text = block(ctx)
    assert len(text) <= budget * 4
    notes = text.splitlines()[2:-1]
    by_start = {s[:12]: s for s in (NEVER, ARCH, TERM)}
    whole, cut = notes
    assert whole[2:] in (NEVER, ARCH)
    full = by_start[cut[2:14]]
    assert cut.endswith("…") and full.startswith(cut[2:-1]) and cut[2:-1] != full
    id_of = {v: k for k, v in ids.items()}
    assert [id_of[i] for i in ctx.meta["memory_ids"]] == [whole[2:], full]
    assert len(injector.last.left_out) == 1 and id_of[injector.last.left_out[0]] not in (whole[2:], full)


async def test_a_block_that_cannot_fit_is_left_out() -> None:
    caller, _ = await seeded("full")
    ctx = ctx_for([{"role": "system", "content": "P."}, {"role": "user", "content": TASK}],
                  memory_config(inject_budget=10))
    await injector_for(caller).apply(ctx)
    assert block(ctx) == "" and ctx.meta["memory_ids"] == []


def test_render_block_keeps_within_budget_for_any_budget() -> None:
    notes = [Note(f"ENG-{i}", "wörd " * (i + 3), i % 2 == 0) for i in range(6)]
    for budget in range(0, 600, 7):
        rendered = render_block(notes, budget)
        if rendered is not None:
            assert len(rendered.block) <= budget
            assert rendered.block.startswith(START_MARKER) and rendered.block.endswith(END_MARKER)


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
    assert block(ctx) == ""  # nothing in words: no block
    assert ctx.meta["memory_unresolved"] == ["ENG-X"] and ctx.meta["memory_ids"] == []
    assert [c[0] for c in caller.calls] == ["plur_inject_hybrid", "plur_pin", "plur_recall"]
    assert injector.stats.unresolved == 1


async def test_no_live_server_skips_the_turn_and_asks_on_the_next() -> None:
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
    injector = MemoryInjector(source, ready_wait=0.25)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert sent(ctx) == [{"role": "user", "content": TASK}] and source.waits == [0.25]
    # A slow start is said once, in words, so the missing recall is never silent.
    assert ctx.notices == ["memory: the memory server is still starting after 0.25 s; this prompt goes without recall"]
    source.ready = PlurClient(caller)
    ctx2 = ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1, turn=2)
    await injector.apply(ctx2)
    assert NEVER in block(ctx2)


async def test_a_list_content_user_message_gets_the_block_as_its_own_part() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    user = {"role": "user", "content": [{"type": "text", "text": TASK}]}
    ctx = ctx_for([{"role": "system", "content": "Persona."}, user], memory_config())
    await injector.apply(ctx)
    parts = sent(ctx)[-1]["content"]
    assert parts[0] == {"type": "text", "text": TASK} and parts[1]["text"].startswith(START_MARKER)
    assert user == {"role": "user", "content": [{"type": "text", "text": TASK}]}


class _CountsInFlight(FakePlurCaller):
    """Records how many calls were in flight at once."""

    def __init__(self, profile: str) -> None:
        super().__init__(profile)
        self.in_flight = self.most = 0

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0)  # a server answers later: the caller may go on meanwhile
            return await super().call_tool(name, arguments, timeout)
        finally:
            self.in_flight -= 1


@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_the_pinned_set_is_asked_for_beside_the_first_recall_not_after_it(profile) -> None:
    """The first prompt waits for one round trip to the server, not two; the pinned set is read
    once, and the user's pinned instruction still arrives as an instruction."""
    caller = _CountsInFlight(profile)
    learned = await caller.call_tool("plur_learn", {"statement": NEVER, "pinned": True})
    assert not learned.is_error, learned.text
    caller.calls.clear()
    caller.most = 0
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert caller.most == 2
    text = block(ctx)
    assert INSTRUCTIONS_HEADING in text and NEVER in text.split(INSTRUCTIONS_HEADING)[1]
    pin_reads = [c for c in caller.calls if c[0] == "plur_pin" or c[1].get("action") == "plur_pin"]
    assert len(pin_reads) == 1
