"""The memory part of the single session end (memory.md §6): drain, flush (spool first, then the
ring; never empty), report, notice, close; and the spool round trip across sessions."""

from __future__ import annotations

from typing import Any

from tests.support.doubles import FakePlurCaller
from tmg.config.model import Config, McpServerConfig, MemoryConfig
from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion, Usage
from tmg.mcp import McpCallError, ToolOutcome
from tmg.memory.session import SessionMemory
from tmg.memory.spool import BatchSpool, spool_dir
from tmg.session.ending import SessionEnd

SERVER = McpServerConfig(name="plur", command="python")
ANSWER_TAGS = ["session:s-1", "mode:chat", "origin:answer"]
ANSWER_SOURCE = "tmg: a model's answer (may be wrong)"


class Conn(FakePlurCaller):
    """fakeplur in-process as the session's connection; logs calls and close into `log`."""

    def __init__(self, log: list[str], profile: str = "lean", reject: frozenset[str] = frozenset(),
                 down: bool = False) -> None:
        super().__init__(profile, reject)
        self.log, self.down = log, down

    async def start(self) -> None:
        self.log.append("start")

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        action = arguments.get("action") if name == "plur_admin" else name
        self.log.append(f"call {action}")
        if self.down:
            self.calls.append((name, arguments, timeout))
            raise McpCallError("plur: broken pipe")
        return await super().call_tool(name, arguments, timeout)

    async def close(self) -> None:
        self.log.append("close")


class Live:
    def __init__(self, **memory: Any) -> None:
        self.config = Config(mcp_servers={"plur": SERVER},
                             memory=MemoryConfig(**{"enabled": True, "server": "plur", "learn": "batch", **memory}))

    def __call__(self) -> Config:
        return self.config


def batches(conn: FakePlurCaller) -> list[list[str]]:
    """The statements of every learn_batch that reached the fake (schema-checked there)."""
    out = []
    for name, args, _ in conn.calls:
        payload = args["args"] if name == "plur_admin" else args
        if (args.get("action") if name == "plur_admin" else name) == "plur_learn_batch":
            assert set(payload) == {"engrams", "max_llm_calls"} and payload["max_llm_calls"] == 0
            out.append([e["statement"] for e in payload["engrams"]])
    return out


async def open_memory(tmp_path, conn: Conn, sid: str = "s-1", **memory: Any) -> SessionMemory:
    memory_ = SessionMemory(Live(**memory), sid, tmp_path / "home", lock_path=tmp_path / ".tmg-write.lock",
                            connect=lambda _spec, _t: conn)
    memory_.start()
    assert await memory_.runtime.client(5) is not None
    return memory_


def answered(sid: str, text: str, prompt_id: int = 1) -> Turn:
    turn = Turn(prompt_id, 1, "question", sid, "chat")
    turn.completion = Completion(text, [], Usage())
    return turn


def end_for(memory: SessionMemory, log: list[str]) -> SessionEnd:
    end = SessionEnd(report=lambda m: log.append(f"step failed: {m}"))
    for name, step in memory.end_steps(lambda text: log.append(f"notice {text}")):
        end.add(name, step)
    end.add("close the transcript", lambda: log.append("transcript closed"))
    return end


async def test_a_clean_session_flushes_its_ring_prints_nothing_and_closes(tmp_path) -> None:
    log: list[str] = []
    conn = Conn(log)
    memory = await open_memory(tmp_path, conn, scope="project:x")
    await memory.hook.after_turn(answered("s-1", "Use spaces in YAML."), None)
    await memory.hook.after_turn(answered("s-1", "Deploys go through CI.", 2), None)
    await end_for(memory, log).run()
    assert log == ["start", "call plur_learn_batch", "close", "transcript closed"]
    (payload,) = [args["args"] for name, args, _ in conn.calls]
    assert payload == {"engrams": [
        {"statement": "Use spaces in YAML.", "scope": "project:x", "tags": ANSWER_TAGS, "source": ANSWER_SOURCE},
        {"statement": "Deploys go through CI.", "scope": "project:x", "tags": ANSWER_TAGS, "source": ANSWER_SOURCE},
    ], "max_llm_calls": 0}
    assert memory.end.last_flush.sent == 2 and memory.spool.pending() == []


async def test_never_an_empty_batch(tmp_path) -> None:
    log: list[str] = []
    conn = Conn(log)
    memory = await open_memory(tmp_path, conn)
    await memory.hook.after_turn(answered("s-1", "   "), None)
    await end_for(memory, log).run()
    assert conn.calls == [] and log == ["start", "close", "transcript closed"]


async def test_flush_then_report_then_notice_then_close(tmp_path) -> None:
    """The notice is read after the flush, so the flush's own failure is in it."""
    log: list[str] = []
    conn = Conn(log, reject=frozenset({"plur_learn_batch"}))
    memory = await open_memory(tmp_path, conn)
    await memory.hook.after_turn(answered("s-1", "Use spaces in YAML."), None)
    await end_for(memory, log).run()
    assert log == [
        "start",
        "call plur_learn_batch",
        "notice memory write failures: 1; plur_learn_batch failing — learning is disabled",
        "close",
        "transcript closed",
    ]


async def test_detached_writes_finish_before_the_report(tmp_path) -> None:
    log: list[str] = []
    conn = Conn(log, reject=frozenset({"plur_capture"}))
    conn.fake.config = type(conn.fake.config)(profile="lean", reject=frozenset({"plur_capture"}),
                                              delays={"plur_capture": 0.3})
    memory = await open_memory(tmp_path, conn, learn="capture")
    await memory.hook.after_turn(answered("s-1", "x"), None)
    assert memory.hook.pending == 1
    await end_for(memory, log).run()
    assert log[1:] == ["call plur_capture",
                       "notice memory write failures: 1; plur_capture failing — learning is disabled",
                       "close", "transcript closed"]


async def test_a_rejected_batch_is_spooled_and_the_next_session_sends_it_first(tmp_path) -> None:
    log: list[str] = []
    first = await open_memory(tmp_path, Conn(log, reject=frozenset({"plur_learn_batch"})), sid="s-1")
    await first.hook.after_turn(answered("s-1", "Lesson from the outage."), None)
    await end_for(first, log).run()
    spool = BatchSpool(spool_dir(tmp_path / "home"))
    (entry,) = spool.pending()
    assert entry.engrams == ({"statement": "Lesson from the outage.", "tags": ANSWER_TAGS, "source": ANSWER_SOURCE},)
    assert first.end.last_flush.spooled == 1

    conn = Conn(log, profile="full")
    second = await open_memory(tmp_path, conn, sid="s-2")
    await second.hook.after_turn(answered("s-2", "Lesson of the second session."), None)
    notices: list[str] = []
    for _, step in second.end_steps(notices.append):
        result = step()
        if hasattr(result, "__await__"):
            await result
    assert batches(conn) == [["Lesson from the outage."], ["Lesson of the second session."]]
    # the replayed engram kept its own session's tags
    assert conn.calls[0][1]["engrams"][0]["tags"] == ANSWER_TAGS
    assert spool.pending() == [] and notices == []
    assert second.end.last_flush.replayed == 1 and second.end.last_flush.sent == 1
    # it landed: the store now holds both
    recall = await conn.call_tool("plur_recall", {"query": "lesson outage second session"})
    assert {r["statement"] for r in recall.data["results"]} == {"Lesson from the outage.",
                                                               "Lesson of the second session."}


async def test_a_spool_alone_is_replayed_even_with_an_empty_ring(tmp_path) -> None:
    BatchSpool(spool_dir(tmp_path / "home")).put([{"statement": "old", "tags": []}])
    log: list[str] = []
    conn = Conn(log, profile="full")
    memory = await open_memory(tmp_path, conn)
    await memory.end.flush()
    assert batches(conn) == [["old"]] and memory.spool.pending() == []


async def test_a_server_that_is_down_is_not_asked_twice_and_nothing_is_lost(tmp_path) -> None:
    spool = BatchSpool(spool_dir(tmp_path / "home"))
    spool.put([{"statement": "old", "tags": []}])
    log: list[str] = []
    memory = await open_memory(tmp_path, Conn(log, down=True))
    await memory.hook.after_turn(answered("s-1", "new"), None)
    outcome = await memory.end.flush()
    assert log.count("call plur_learn_batch") == 1
    assert outcome.spooled == 1 and outcome.replayed == 0
    assert sorted(i["statement"] for e in spool.pending() for i in e.engrams) == ["new", "old"]
    assert memory.report.notice() == "memory write failures: 1; plur_learn_batch failing — learning is disabled"


async def test_no_server_at_the_end_spools_the_ring(tmp_path) -> None:
    memory = SessionMemory(Live(), "s-1", tmp_path / "home", lock_path=tmp_path / "l",
                           connect=lambda _s, _t: _Failing())
    warnings: list[str] = []
    memory.runtime._warn = warnings.append
    memory.start()
    await memory.hook.after_turn(answered("s-1", "keep me"), None)
    outcome = await memory.end.flush()
    assert outcome.spooled == 1 and memory.report.notice() is None and len(warnings) == 1


async def test_learning_off_at_the_end_sends_nothing(tmp_path) -> None:
    log: list[str] = []
    conn = Conn(log)
    memory = await open_memory(tmp_path, conn)
    await memory.hook.after_turn(answered("s-1", "something"), None)
    memory._config.config = Config(mcp_servers={"plur": SERVER},
                                   memory=MemoryConfig(enabled=True, learn="off"))
    outcome = await memory.end.flush()
    assert conn.calls == [] and outcome.dropped == 1 and memory.spool.pending() == []


async def test_describe_shows_the_last_injection_tier_and_health(tmp_path) -> None:
    from tmg.context.pipeline import TurnContext

    log: list[str] = []
    conn = Conn(log, profile="full")
    await conn.call_tool("plur_learn", {"statement": "Never deploy on Fridays"})
    memory = await open_memory(tmp_path, conn, learn="full")
    ctx = TurnContext([{"role": "user", "content": "deploy on Fridays?"}], memory._config(), 1, 1)
    await memory.injector.apply(ctx)
    await memory.hook.after_turn(answered("s-1", "no"), None)
    lines = await memory.describe()
    text = "\n".join(lines)
    assert lines[0] == "memory: on · server plur: ready"
    assert "last request (prompt 1): 1 item(s) from memory went with it" in text and "Never deploy on Fridays" in text
    assert "learning: full · learned 0/3" in text


class _Failing:
    tool_names = frozenset()

    async def start(self) -> None:
        from tmg.mcp import McpStartError

        raise McpStartError("plur: spawn failed")

    async def close(self) -> None:
        pass


async def test_memory_forget_retires_through_plur_forget_and_drops_the_cached_words(tmp_path) -> None:
    log: list[str] = []
    conn = Conn(log, profile="lean")
    learned = await conn.call_tool("plur_learn", {"statement": "Always answer in French", "pinned": True})
    memory = await open_memory(tmp_path, conn, learn="full")
    engram_id = learned.data["id"]
    memory.statements[engram_id] = "Always answer in French"
    memory.instructions.add(engram_id)
    assert await memory.forget(engram_id) == [f"forgotten: {engram_id}  Always answer in French"]
    assert engram_id not in memory.statements and engram_id not in memory.instructions
    assert (await memory.forget(engram_id))[0].startswith(f"memory: could not forget {engram_id} (Already retired")
