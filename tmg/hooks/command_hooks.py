"""A session's command hooks: HOOKS of the live config run at their events, in Claude Code's
protocol. The engine's Interceptor (tool calls, a prompt's end), the prompt's own (SessionStart
at the first prompt, UserPromptSubmit at each) and compaction's (PreCompact).

The hooks of an event that match run side by side, each within its TIMEOUT. A hook that fails
(an exit other than 0 and 2, output that is not JSON, a timeout) is said on stderr and in the
transcript, and what it was run for goes on: it never blocks, and never fails a turn unsaid.
A block is said too (what was blocked, and why), besides reaching the model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable, Mapping

from tmg.config.hook_schema import matches
from tmg.config.model import Config, HookSpec
from tmg.context.instruction_files import repository_root
from tmg.engine.intercept import ToolCallVerdict
from tmg.engine.turn import Turn
from tmg.errors import HookStopError
from tmg.hooks.outcome import Outcome, read_outcome
from tmg.hooks.process import run_command
from tmg.llm.gateway import ToolCallRequest
from tmg.tools.registry import ToolResult


class CommandHooks:
    """Implements tmg.engine.intercept.Interceptor, and the prompt's and compaction's hooks."""

    def __init__(self, config: Callable[[], Config], *, session_id: str, transcript_path: Path, cwd: Path,
                 env: Mapping[str, str], permission_mode: Callable[[], str], resumed: bool,
                 say: Callable[[str], None], note: Callable[[str], None] | None = None) -> None:
        """``say`` a hook that failed (a warning), ``note`` what a hook did (a block, a rewrite, its
        systemMessage): both go to stderr and the transcript."""
        self._config = config
        self._session_id = session_id
        self._transcript = str(transcript_path)
        self._cwd = cwd
        root = str(repository_root(cwd))
        self._env = {**env, "TMG_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root, "TMG_SESSION_ID": session_id}
        self._mode = permission_mode
        self._source = "resume" if resumed else "startup"
        self._say = say
        self._note = note or say
        self._started = False  # SessionStart ran (at the session's first prompt)
        self._went_on: int | None = None  # the prompt a Stop hook had go on (stop_hook_active)

    # -- the engine's Interceptor --

    async def before_tool(self, call: ToolCallRequest, turn: Turn) -> ToolCallVerdict:
        out = await self._run("PreToolUse", call.name, tool_name=call.name, tool_input=_input(call.arguments),
                              tool_use_id=call.id)
        if out.block is not None:
            self._note(f"hooks: PreToolUse blocked {call.name}: {_one_line(out.block)}")
            return ToolCallVerdict(call.arguments, blocked=out.block, context=_framed("PreToolUse", out.context))
        arguments = call.arguments
        if out.updated_input is not None:
            arguments = json.dumps(out.updated_input, ensure_ascii=False)
            self._note(f"hooks: PreToolUse rewrote the arguments of {call.name} to {_one_line(arguments)}")
        return ToolCallVerdict(arguments, context=_framed("PreToolUse", out.context))

    async def after_tool(self, call: ToolCallRequest, arguments: str, result: ToolResult, turn: Turn) -> str:
        out = await self._run("PostToolUse", call.name, tool_name=call.name, tool_input=_input(arguments),
                              tool_use_id=call.id, tool_response={"content": result.content, "is_error": result.is_error})
        said = f"[a PostToolUse hook says: {out.block}]" if out.block is not None else ""  # the tool has run
        return _joined([said, _framed("PostToolUse", out.context)])

    async def before_stop(self, turn: Turn) -> str | None:
        active = self._went_on == turn.prompt_id  # a hook that always objects checks it, as in Claude Code
        out = await self._run("Stop", "", stop_hook_active=active, last_assistant_message=turn.response_text)
        if out.block is None:
            return None
        self._went_on = turn.prompt_id
        self._note(f"hooks: Stop asked the model to go on: {_one_line(out.block)}")
        return f"[a Stop hook asks you to go on before you finish: {out.block}]"

    # -- the prompt's and compaction's --

    async def before_prompt(self, prompt: str) -> str:
        """SessionStart (at the session's first prompt), then UserPromptSubmit: the context they
        add for the model ("" for none). Raises HookStopError when the prompt is blocked."""
        context = ""
        if not self._started:
            self._started = True
            context = _framed("SessionStart", (await self._run("SessionStart", self._source, source=self._source)).context)
        out = await self._run("UserPromptSubmit", "", prompt=prompt)
        if out.block is not None:
            raise HookStopError(f"the prompt was blocked by a UserPromptSubmit hook: {_one_line(out.block)}")
        return _joined([context, _framed("UserPromptSubmit", out.context)])

    async def before_compact(self, trigger: str, focus: str) -> None:
        await self._run("PreCompact", trigger, trigger=trigger, custom_instructions=focus)

    # -- running them --

    def specs(self, event: str, subject: str) -> list[HookSpec]:
        return [h for h in self._config().hooks if h.event == event and matches(h.matcher, subject)]

    async def _run(self, event: str, subject: str, **fields: Any) -> Outcome:
        merged = Outcome()
        specs = self.specs(event, subject)
        if not specs:
            return merged
        payload = json.dumps({"session_id": self._session_id, "transcript_path": self._transcript,
                              "cwd": str(self._cwd), "permission_mode": self._mode(), "hook_event_name": event,
                              **fields}, ensure_ascii=False).encode("utf-8")
        runs = await asyncio.gather(*(run_command(h.command, payload, str(self._cwd), self._env, h.timeout)
                                      for h in specs))
        for spec, run in zip(specs, runs):
            out = read_outcome(event, run, spec.timeout)
            for text in out.messages:
                self._note(f"hooks: {event} `{_one_line(spec.command, 80)}`: {text}")
            for text in out.failures:
                self._say(f"hooks: {event} hook `{_one_line(spec.command, 80)}` failed: {text}; going on without it")
            out.messages, out.failures = [], []
            merged.merge(out)
        for text in merged.failures:  # what only the merge found (two rewrites)
            self._say(f"hooks: {event}: {text}")
        if merged.stop is not None:
            self._note(f"hooks: {event} said to stop: {_one_line(merged.stop)}")
            if event == "Stop":  # the prompt is ending anyway: it ends, without going on
                merged.block = None
                return merged
            raise HookStopError(f"stopped by a {event} hook: {_one_line(merged.stop)}")
        return merged


def _input(arguments: str) -> Any:
    """The call's arguments as the hook reads them: the JSON object, or the text the model sent."""
    try:
        return json.loads(arguments or "{}", strict=False)
    except ValueError:
        return arguments


def _framed(event: str, contexts: list[str]) -> str:
    """What hooks of ``event`` added, said to the model as theirs."""
    return _joined([f"[context from a {event} hook]\n{text}" for text in contexts])


def _joined(parts: list[str]) -> str:
    return "\n\n".join(p for p in parts if p)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
