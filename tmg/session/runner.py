"""The session runner: an open session (ChatSession) runs the prompts the one-shot and the REPL
hand it, and keeps its record: each prompt in the transcript, then what the engine reports of it
(TranscriptRecorder). compose.py wires one; the CLI and the REPL only drive it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol

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
from tmg.tools.attach import FileAttacher
from tmg.tools.registry import ToolRegistry, ToolResult
from tmg.tools.todo import TodoList

MAX_PENDING = 5  # `!command` outputs kept for the next prompt (the oldest dropped first)

if TYPE_CHECKING:  # memory is imported only by a session that has it (a memory-off one-shot never does)
    from tmg.memory.session import SessionMemory


class PromptHooks(Protocol):
    """What runs as a prompt is submitted (the command hooks' SessionStart and UserPromptSubmit)."""

    async def before_prompt(self, prompt: str) -> str:
        """Context to send with ``prompt`` ("" for none); raises TmgError to refuse the prompt."""
        ...


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
    hooks: PromptHooks | None = None  # the command hooks run as a prompt is submitted
    tools: ToolRegistry | None = None  # the model's tools, each call judged (the REPL's !command runs shell)
    files: FileAttacher | None = None  # the `@path` files a prompt names
    # What goes with the next prompt besides the user's words: the output of each `!command` since.
    pending: list[str] = field(default_factory=list)

    async def run_prompt(self, text: str, typed: str | None = None) -> None:
        """Run one prompt as the user gave it (the one-shot's and the REPL's alike): written into the
        transcript, a leading ``$name`` activating that skill first (a one-shot never depends on the
        model choosing it), then sent with what it attaches: the output of the `!command`s run since
        the last prompt, the files it names (`@path`), the MCP resources it names (`@server:uri`).
        What is attached is material, never the user's words: the engine keeps ``text`` as those.
        ``typed``: what the user typed, when ``text`` holds more (a one-shot's piped stdin): only
        that part may name files to attach."""
        self.transcript.prompt(text)
        added = await self.hooks.before_prompt(text) if self.hooks is not None else ""  # may refuse it
        if self.skills is not None:
            self.skills.leading_invocation(text)
        blocks, images = list(self.pending), []
        self.pending.clear()
        if self.files is not None:
            text, files = await self.files.attach(text, self.mcp.server_names() if self.mcp is not None else (), typed)
            blocks, images = blocks + files.blocks, images + files.images
        if self.mcp is not None:
            text, resources = await self.mcp.attach_resources(text, self.live.get().tool_timeout)
            blocks, images = blocks + resources.blocks, images + resources.images
        if added:  # what the prompt's hooks add rides with it, as its attachments do
            blocks.append(added)
        sent = "\n\n".join([text, *blocks]) if blocks else text
        await self.engine.run_prompt(text, sent_text=sent, images=images, typed_text=typed)

    async def run_shell(self, command: str) -> ToolResult:
        """The REPL's `!command`: run as the model's shell calls run (judged by the permission
        engine, inside the sandbox), its output kept for the next prompt (the shell's own bounds)."""
        assert self.tools is not None
        result = await self.tools.call("shell", json.dumps({"command": command}), self.live.get().tool_timeout)
        self.transcript.tool_call("shell (typed: !)", command, summary(result.content, result.images))
        if not result.content.startswith("refused:"):
            self.pending.append(f"--- output of `{command}` (a command the user ran with !) ---\n"
                                f"{result.content}\n--- end of output ---")
            del self.pending[:-MAX_PENDING]
        return result

    def start(self, watch_config: bool = True) -> None:
        """Start what runs beside the session: its memory server first (the slowest), the MCP
        tool servers, then the config watcher (unless the caller starts it later). Call on the
        session's event loop."""
        if self.memory is not None:
            self.memory.start()
        if self.mcp_servers is not None:
            self.mcp_servers.start()
        if self.config_watcher is not None and watch_config:
            self.config_watcher.start()

    def prewarm_if_memory_starting(self) -> None:
        """`prewarm_gateway` while the memory server is still starting (a cold start: a broker
        being started, a server spawned, hundreds of ms) or the prompt's recall is still out (a
        large store: PLUR scores every engram, tens of ms at a year of use): the prompt waits for
        it anyway, on another process. Beside a warm broker that has already answered, a thread
        importing the backend would only contend with the prompt for the GIL."""
        if self.memory is not None and (self.memory.runtime.starting or self.memory.injector.asking):
            self.prewarm_gateway()

    def import_backend_now(self) -> None:
        """The provider's backend imported on the loop, when it is the native one (tmg.llm.select.
        import_now): a one-shot runs this while its recall is out, which overlaps that wait with
        no thread to share the GIL with."""
        from tmg.llm.select import import_now

        try:
            import_now(self.gateways.spec_for(self.live.get()))
        except Exception:  # noqa: BLE001 - the first prompt reports a broken provider properly
            pass

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
            self._t.answer(turn.response_text, _answered_by(turn), turn.index)

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self._t.interrupted(partial, _answered_by(turn), turn.index)

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


def _answered_by(turn: Turn) -> str:
    """The model in an answer's heading, and on each turn a failover provider answers, which one
    and in whose place."""
    stood_in_for = turn.meta.get("failover_from")
    return f"{turn.model} (provider {turn.provider}, failed over from {stood_in_for})" if stood_in_for else turn.model
