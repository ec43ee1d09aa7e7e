"""The session runner: an open session (ChatSession) runs the prompts the one-shot and the REPL
hand it, and keeps its record: each prompt in the transcript, then what the engine reports of it
(TranscriptRecorder). compose.py wires one; the CLI and the REPL only drive it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from tmg.checkpoints.log import CheckpointLog
from tmg.config.live import LiveConfig
from tmg.config.watcher import ConfigWatcher
from tmg.engine.engine import PhaseEngine
from tmg.engine.turn import Turn
from tmg.llm.gateway import Usage
from tmg.mcp.server_set import McpToolServers
from tmg.mcp.session_servers import SessionServers
from tmg.media import summary
from tmg.permissions.engine import PermissionEngine
from tmg.session.ending import SessionEnd
from tmg.session.models import SessionModels
from tmg.session.store import SessionRef
from tmg.session.transcript import Transcript
from tmg.skills.session import SessionSkills
from tmg.tools.registry import ToolResult
from tmg.tools.todo import TodoList

if TYPE_CHECKING:  # memory is imported only by a session that has it (a memory-off one-shot never does)
    from tmg.memory.session import SessionMemory


@dataclass
class ChatSession:
    """An open session: its engine, and the one path that ends it."""

    live: LiveConfig
    ref: SessionRef
    engine: PhaseEngine
    transcript: Transcript
    gateways: SessionModels
    end: SessionEnd
    redact: Callable[[str], str] = field(default=lambda s: s)
    config_watcher: ConfigWatcher | None = None  # start() it on the session's event loop
    memory: SessionMemory | None = None  # start() it on the session's event loop, as early as possible
    mcp_servers: McpToolServers | None = None  # the MCP servers whose tools the model gets
    gate: PermissionEngine | None = None  # the session's permission engine (/permissions, the prompt line)
    skills: SessionSkills | None = None  # the skills it offers and those it activated
    mcp: SessionServers | None = None  # this session's view of the MCP servers (tools, resources)
    checkpoints: CheckpointLog | None = None  # what each prompt changed (/rewind)
    todos: TodoList | None = None  # the model's todo list

    async def run_prompt(self, text: str, typed: str | None = None) -> None:
        """Run one prompt as the user gave it (the one-shot's and the REPL's alike): written into the
        transcript, a leading ``$name`` activating that skill first (a one-shot never depends on the
        model choosing it), the MCP resources it names (`@server:uri`) read and attached.
        ``typed``: what the user typed, when ``text`` holds more (a one-shot's piped stdin)."""
        self.transcript.prompt(text)
        if self.skills is not None:
            self.skills.leading_invocation(text)
        sent, images = text, []
        if self.mcp is not None:
            text, attached = await self.mcp.attach_resources(text, self.live.get().tool_timeout)
            sent, images = attached.text(text), attached.images
        await self.engine.run_prompt(text, sent_text=sent, images=images, typed_text=typed)

    def start(self, watcher_delay: float = 0.0) -> None:
        """Start what runs beside the session: its memory server first (the slowest), the MCP
        tool servers, then the config watcher. Call on the session's event loop."""
        if self.memory is not None:
            self.memory.start()
        if self.mcp_servers is not None:
            self.mcp_servers.start()
        if self.config_watcher is not None:
            self.config_watcher.start(delay=watcher_delay)

    def prewarm_if_memory_starting(self) -> None:
        """`prewarm_gateway` while the memory server is still starting (a cold start: a broker
        being started, a server spawned, hundreds of ms): the first prompt waits for its recall
        anyway. Beside a warm broker, which answers in milliseconds, a thread importing the
        backend would only contend with the recall for the GIL."""
        if self.memory is not None and self.memory.runtime.starting:
            self.prewarm_gateway()

    def prewarm_gateway(self) -> None:
        """Start importing the provider's backend on a thread, so the first call finds it ready."""
        from tmg.llm.select import prewarm

        try:
            prewarm(self.gateways.spec_for(self.live.get()))
        except Exception:  # noqa: BLE001 - the first prompt reports a broken provider properly
            pass


class TranscriptRecorder:
    """Engine events written into the session's transcript."""

    def __init__(self, transcript: Transcript) -> None:
        self._t = transcript
        self._memory_for: int | None = None  # the prompt whose recall is written already

    def on_text(self, delta: str) -> None:
        pass  # the whole answer is written once, at on_answer

    def on_answer(self, turn: Turn) -> None:
        ids = turn.meta.get("memory_ids")
        if ids and self._memory_for != turn.prompt_id:
            # Once per prompt (the injector asks once per prompt), before the answer it shaped.
            self._memory_for = turn.prompt_id
            self._t.memory(ids)
        if turn.response_text.strip():
            self._t.answer(turn.response_text, turn.model, turn.index)

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self._t.interrupted(partial, turn.model, turn.index)

    def on_turn_end(self, turn: Turn) -> None:
        pass  # the answer is written at on_answer

    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None:
        outcome = ("error: " + result.content[:160]) if result.is_error else summary(result.content, result.images)
        self._t.tool_call(name, arguments, outcome)

    def on_usage(self, usage: Usage, turn: Turn) -> None:
        self._t.usage(usage.prompt_tokens, usage.completion_tokens, usage.cost, usage.reported)

    def on_notice(self, message: str) -> None:
        self._t.notice(message)

    def on_summary(self, record: dict) -> None:
        self._t.summary(record.get("content") or "", (record.get("meta") or {}).get("summary") or {})
