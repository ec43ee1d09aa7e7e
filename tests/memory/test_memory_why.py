"""`/memory`: what went with the last request and why (each item pinned or recalled, its scope,
its id, its heading), `/memory forget N` (the server's answer shown) and `/memory add ...`
(pinned, origin user, scrubbed, carried by the next prompt under the instructions' heading).
fakeplur in-process is the server."""

from __future__ import annotations

from tests.memory.test_memory_session_end import Conn, open_memory
from tmg.context.pipeline import TurnContext, with_riders
from tmg.memory.injector import INSTRUCTIONS_HEADING, NOTES_HEADING


async def ask(memory, text: str, prompt_id: int) -> TurnContext:
    ctx = TurnContext([{"role": "user", "content": text}], memory._config(), prompt_id, 1)
    await memory.injector.apply(ctx)
    return ctx


async def test_memory_shows_each_item_pinned_or_recalled_with_its_scope_id_and_heading(tmp_path) -> None:
    conn = Conn([], profile="full")
    pinned = (await conn.call_tool("plur_learn", {"statement": "Always answer in French", "pinned": True})).data["id"]
    note = (await conn.call_tool("plur_learn", {"statement": "The heron project deploys from main",
                                                "scope": "project:heron"})).data["id"]
    memory = await open_memory(tmp_path, conn, learn="full")
    await ask(memory, "how does the heron project deploy?", 1)
    lines = await memory.describe()
    assert "last request (prompt 1): 2 item(s) from memory went with it" in lines
    assert (f"  1. {pinned} · pinned (sent with every prompt) · scope global · under your standing instructions: "
            "Always answer in French") in lines
    assert (f"  2. {note} · recalled for this prompt's words · scope project:heron · under the notes from earlier "
            "sessions: The heron project deploys from main") in lines


async def test_memory_forget_n_forgets_item_n_of_the_last_request_and_shows_the_servers_answer(tmp_path) -> None:
    conn = Conn([], profile="lean")
    note = (await conn.call_tool("plur_learn", {"statement": "The heron project deploys from main"})).data["id"]
    memory = await open_memory(tmp_path, conn, learn="full")
    await ask(memory, "heron deploys", 1)
    assert await memory.forget("2") == ["memory: no item 2 went with the last request (1 did; `/memory` lists them)"]
    assert await memory.forget("1") == [f"forgotten: {note}  The heron project deploys from main"]
    again = await memory.forget("1")  # the list is still the last request's: the server says why not
    assert again[0].startswith(f"memory: could not forget {note} (Already retired")
    await ask(memory, "heron deploys", 2)
    assert "last request (prompt 2): nothing from memory went with it" in await memory.describe()


async def test_memory_add_pins_the_users_words_scrubbed_and_the_next_prompt_carries_them(tmp_path) -> None:
    conn = Conn([], profile="lean")
    memory = await open_memory(tmp_path, conn, learn="full")
    await ask(memory, "hello", 1)  # the pinned set is read at the first prompt: an add comes after it
    lines = await memory.add("Always use the staging box; its password is Tr0ub4dor&3")
    assert lines[0].startswith("pinned (injected for every prompt, as your instruction): ENG-")
    assert lines[0].endswith("Always use the staging box; its password is ***")
    assert lines[1] == "a secret in it was masked before it was stored"
    (engram,) = conn.fake.store.active_engrams()
    assert engram["statement"] == "Always use the staging box; its password is ***" and engram["pinned"]
    assert "origin:user" in engram["tags"] and "session:s-1" in engram["tags"]
    ctx = await ask(memory, "write a haiku about the sea", 2)
    block = "\n".join(str(m["content"]) for m in with_riders(ctx.messages, ctx.riders))  # all the request carries
    instructions, _, _notes = block.partition(NOTES_HEADING)
    assert f"{INSTRUCTIONS_HEADING}\n- Always use the staging box; its password is ***" in instructions
    assert "Tr0ub4dor" not in block


async def test_memory_says_what_happened_when_nothing_went_or_recall_failed(tmp_path) -> None:
    conn = Conn([], profile="full", reject=frozenset({"plur_inject_hybrid"}))
    memory = await open_memory(tmp_path, conn, learn="full")
    assert "last request: nothing from memory yet" in await memory.describe()
    await ask(memory, "anything", 1)
    (line,) = [line for line in await memory.describe() if line.startswith("last request")]
    assert line.startswith("last request (prompt 1): no memory went with it, recall failed — plur_inject_hybrid")
    assert (await memory.forget("1"))[0].startswith("memory: no item 1 went with the last request")
