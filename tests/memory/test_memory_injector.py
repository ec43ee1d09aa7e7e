"""Seam A: the memory block in the system message (memory.md §3), against the schema-checking fake."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.doubles import FakePlurCaller, ScriptedCaller
from tmg.config.model import Config, MemoryConfig
from tmg.context.persona import PersonaTransformer
from tmg.context.pipeline import Pipeline, TurnContext
from tmg.mcp_servers import McpCallError, ToolOutcome
from tmg.memory.client import PlurClient
from tmg.memory.health import WriteReport
from tmg.memory.injector import END_MARKER, NOTE, START_MARKER, MemoryInjector, Note, render_block
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


def system_text(ctx: TurnContext) -> str:
    assert ctx.messages[0]["role"] == "system"
    return ctx.messages[0]["content"]


def inject_calls(caller: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c[0], c[1]) for c in caller.calls
            if c[0] == "plur_inject_hybrid" or (c[0] == "plur_admin" and c[1].get("action") == "plur_inject_hybrid")]


@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_the_words_of_every_selected_engram_arrive_including_the_default_type(profile) -> None:
    caller, ids = await seeded(profile)
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "system", "content": "You are tmg."}, {"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    text = system_text(ctx)
    assert text.startswith("You are tmg.\n\n" + START_MARKER + "\n" + NOTE + "\n")
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


async def test_the_inject_payload_is_exactly_task_budget_scope() -> None:
    caller, _ = await seeded("full")
    await injector_for(caller).apply(ctx_for([{"role": "user", "content": f"  {TASK}\n"}],
                                             memory_config(inject_budget=700, scope="project:x")))
    assert inject_calls(caller) == [("plur_inject_hybrid", {"task": TASK, "budget": 700, "scope": "project:x"})]


async def test_statements_seen_before_are_not_recalled_again() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1))
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=2))
    names = [c[0] for c in caller.calls]
    assert names == ["plur_inject_hybrid", "plur_recall", "plur_inject_hybrid"]


async def test_replaced_in_place_never_accumulated() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    messages = [{"role": "system", "content": "Persona.\n\nSkills: none."}, {"role": "user", "content": TASK}]
    ctx = ctx_for(messages, memory_config())
    await injector.apply(ctx)
    first = system_text(ctx)
    # A later prompt, on the message list the first produced (as if it had been persisted),
    # with text after the block (a transformer that appended after memory): same position, one block.
    stored = [{"role": "system", "content": first + "\n\nAfter."}, {"role": "user", "content": TASK},
              {"role": "assistant", "content": "Use spaces."}, {"role": "user", "content": "and the deploy YAML config?"}]
    ctx2 = ctx_for(stored, memory_config(), prompt_id=2)
    await injector.apply(ctx2)
    second = system_text(ctx2)
    assert second.count(START_MARKER) == 1 and second.count(END_MARKER) == 1
    assert second.startswith("Persona.\n\nSkills: none.\n\n" + START_MARKER)
    assert second.endswith(END_MARKER + "\n\nAfter.")
    # Running twice in one turn (Refining again after a retry) changes nothing
    again = copy.deepcopy(ctx2.messages)
    await injector.apply(ctx_for(again, memory_config(), prompt_id=2))
    assert again == ctx2.messages


async def test_a_system_message_is_created_when_there_is_none() -> None:
    caller, _ = await seeded("full")
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector_for(caller).apply(ctx)
    assert ctx.messages[0]["role"] == "system"
    assert ctx.messages[0]["content"].startswith(START_MARKER) and NEVER in ctx.messages[0]["content"]
    assert ctx.messages[1] == {"role": "user", "content": TASK}


async def test_the_stored_message_dict_is_replaced_not_mutated() -> None:
    caller, _ = await seeded("full")
    stored = {"role": "system", "content": "Persona."}
    ctx = ctx_for([stored, {"role": "user", "content": TASK}], memory_config())
    await injector_for(caller).apply(ctx)
    assert stored == {"role": "system", "content": "Persona."}


async def test_after_persona_in_a_real_pipeline_each_turn_has_exactly_one_fresh_block() -> None:
    caller, _ = await seeded("full")
    pipeline = Pipeline([PersonaTransformer(), injector_for(caller)])
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    refined = await pipeline.run(ctx)
    assert refined.payload[0]["content"].count(START_MARKER) == 1
    ctx2 = ctx_for(list(refined.canonical) + [{"role": "user", "content": "anything about YAML config?"}],
                   memory_config(), prompt_id=2)
    refined2 = await pipeline.run(ctx2)
    assert refined2.payload[0]["content"].count(START_MARKER) == 1


@pytest.mark.parametrize("failure", ["is_error", "raised", "timeout", "bad_result"])
async def test_failure_strips_the_block_without_persisting(failure) -> None:
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
    old_block = render_block([Note("ENG-OLD", "stale words")], 8000).block
    ctx = ctx_for([{"role": "system", "content": f"Persona.\n\n{old_block}"}, {"role": "user", "content": TASK}],
                  memory_config())
    await injector.apply(ctx)
    assert system_text(ctx) == "Persona."
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
        assert NEVER not in str(ctx.messages)
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
    assert ctx.messages == [{"role": "user", "content": TASK}]
    (notice,) = ctx.notices
    assert "recall failed" in notice and "count" in notice


async def test_disable_strips_and_persists_only_when_a_block_was_there() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    block = render_block([Note("ENG-1", "something")], 8000).block
    ctx = ctx_for([{"role": "system", "content": f"Persona.\n\n{block}"}, {"role": "user", "content": TASK}],
                  memory_config(enabled=False))
    await injector.apply(ctx)
    assert system_text(ctx) == "Persona." and ctx.persist_requested
    # content-driven: the same turn refined again finds nothing and asks for nothing
    again = ctx_for(ctx.messages, memory_config(enabled=False))
    await injector.apply(again)
    assert not again.persist_requested
    # no block, nothing persisted, no call made
    plain = ctx_for([{"role": "system", "content": "Persona."}, {"role": "user", "content": TASK}],
                    memory_config(enabled=False))
    await injector.apply(plain)
    assert not plain.persist_requested and system_text(plain) == "Persona."
    assert caller.calls == []


async def test_a_block_alone_in_the_system_message_takes_the_message_with_it() -> None:
    block = render_block([Note("ENG-1", "something")], 8000).block
    ctx = ctx_for([{"role": "system", "content": block}, {"role": "user", "content": "hi"}],
                  memory_config(enabled=False))
    await MemoryInjector(ReadyClient(None)).apply(ctx)
    assert ctx.messages == [{"role": "user", "content": "hi"}] and ctx.persist_requested


async def test_hot_reload_is_read_each_turn() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    assert START_MARKER in system_text(ctx)
    off = ctx_for(ctx.messages, memory_config(enabled=False), prompt_id=1, turn=2)
    await injector.apply(off)
    assert off.messages == [{"role": "user", "content": TASK}]
    small = ctx_for([{"role": "user", "content": TASK}], memory_config(inject_budget=60), prompt_id=1, turn=3)
    await injector.apply(small)
    assert len(system_text(small)) <= 60 * 4


async def test_once_per_prompt_not_per_tool_iteration_unless_the_text_changes() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    for turn in (1, 2, 3):  # one prompt, three model calls (tool iterations)
        ctx = ctx_for([{"role": "user", "content": TASK}, {"role": "assistant", "content": "..."}],
                      memory_config(), prompt_id=7, turn=turn)
        await injector.apply(ctx)
        assert NEVER in system_text(ctx) and len(ctx.meta["memory_ids"]) == 3  # every turn carries it
    assert len(inject_calls(caller)) == 1
    await injector.apply(ctx_for([{"role": "user", "content": "YAML config folder?"}], memory_config(), prompt_id=7))
    await injector.apply(ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=8))
    assert len(inject_calls(caller)) == 3


async def test_no_call_for_an_empty_user_text() -> None:
    caller, _ = await seeded("full")
    block = render_block([Note("ENG-1", "old")], 8000).block
    ctx = ctx_for([{"role": "system", "content": f"P.\n\n{block}"}, {"role": "user", "content": "  \n"}],
                  memory_config())
    await injector_for(caller).apply(ctx)
    assert caller.calls == [] and system_text(ctx) == "P." and not ctx.persist_requested


async def test_budget_trim_at_a_character_boundary() -> None:
    caller, ids = await seeded("full")
    head = len(f"{START_MARKER}\n{NOTE}\n") + len(END_MARKER)
    # room for the first note whole and about half of the second, in tokens of 4 characters
    budget = (head + len(f"- {ARCH}\n") + 20) // 4
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config(inject_budget=budget))
    injector = injector_for(caller)
    await injector.apply(ctx)
    text = system_text(ctx)
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
    assert system_text(ctx) == "P." and ctx.meta["memory_ids"] == []


def test_render_block_keeps_within_budget_for_any_budget() -> None:
    notes = [Note(f"ENG-{i}", "wörd " * (i + 3)) for i in range(6)]
    for budget in range(0, 400, 7):
        rendered = render_block(notes, budget)
        if rendered is not None:
            assert len(rendered.block) <= budget
            assert rendered.block.startswith(START_MARKER) and rendered.block.endswith(END_MARKER)


async def test_unresolvable_ids_are_recorded_not_shown_as_bare_ids() -> None:
    """An id the server selected but neither its text, the cache nor recall can put into words."""
    inject = ToolOutcome.from_text('{"directives": "", "consider": "", "count": 1, "tokens_used": 5,'
                                   ' "injected_ids": ["ENG-X"]}', is_error=False)

    class OnlyInject(ScriptedCaller):
        async def call_tool(self, name, arguments, timeout=3.0):
            self.calls.append((name, arguments))
            if name == "plur_recall":
                return ToolOutcome.from_text('{"results": [], "count": 0}', is_error=False)
            return inject

    caller = OnlyInject({"plur_inject_hybrid", "plur_recall"}, inject)
    ctx = ctx_for([{"role": "user", "content": TASK}], memory_config())
    await MemoryInjector(ReadyClient(PlurClient(caller))).apply(ctx)
    assert ctx.messages[0]["role"] == "user"  # nothing in words: no block
    assert ctx.meta["memory_unresolved"] == ["ENG-X"] and ctx.meta["memory_ids"] == []
    assert [c[0] for c in caller.calls] == ["plur_inject_hybrid", "plur_recall"]


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
    assert ctx.messages == [{"role": "user", "content": TASK}] and source.waits == [0.25]
    # A slow start is said once, in words, so the missing recall is never silent.
    assert ctx.notices == ["memory: the memory server is still starting after 0.25 s; this prompt goes without recall"]
    source.ready = PlurClient(caller)
    ctx2 = ctx_for([{"role": "user", "content": TASK}], memory_config(), prompt_id=1, turn=2)
    await injector.apply(ctx2)
    assert NEVER in system_text(ctx2)


async def test_list_content_system_message_gets_the_block_as_its_own_part() -> None:
    caller, _ = await seeded("full")
    injector = injector_for(caller)
    system = {"role": "system", "content": [{"type": "text", "text": "Persona."}]}
    ctx = ctx_for([system, {"role": "user", "content": TASK}], memory_config())
    await injector.apply(ctx)
    parts = ctx.messages[0]["content"]
    assert parts[0] == {"type": "text", "text": "Persona."} and parts[1]["text"].startswith(START_MARKER)
    await injector.apply(ctx_for(ctx.messages, memory_config(), prompt_id=2))
    assert len(ctx.messages[0]["content"]) == 2
    off = ctx_for(ctx.messages, memory_config(enabled=False))
    await injector.apply(off)
    assert off.messages[0]["content"] == [{"type": "text", "text": "Persona."}] and off.persist_requested
