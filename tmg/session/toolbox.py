"""The tools of one session: the built-in ones over one read ledger and root guard, wrapped to keep
checkpoints, then MCP's and the skills', every call judged by the permission engine."""

from __future__ import annotations

from typing import Callable, NamedTuple

from tmg.checkpoints.log import CheckpointLog, PromptKey
from tmg.checkpoints.tools import checkpointed
from tmg.config.model import Config
from tmg.environment import Environment
from tmg.permissions.action import PermissionGate
from tmg.permissions.engine import PermissionEngine
from tmg.redaction import process_redactor
from tmg.skills.session import SessionSkills
from tmg.skills.tool import SkillTools
from tmg.tools.edit import EditFileTool, WriteFileTool
from tmg.tools.files import ListFolderTool, ReadFileTool, RootGuard
from tmg.tools.ledger import ReadLedger
from tmg.tools.mcp_tools import McpTools
from tmg.tools.registry import Tool, ToolRegistry, ToolSource
from tmg.tools.sandbox import Sandbox
from tmg.tools.search import GlobTool, GrepTool
from tmg.permissions.sensitive import SensitivePaths
from tmg.tools.shell import ShellTool
from tmg.tools.web_fetch import WebFetchTool


def build_tools(envr: Environment, mcp: McpTools | None = None,
                config: Callable[[], Config] | None = None, gate: PermissionGate | None = None,
                skills: SessionSkills | None = None, checkpoints: Checkpoints | None = None,
                more: list[Tool] | None = None, warn: Callable[[str], None] = lambda _t: None,
                own_sources: list[ToolSource] | None = None) -> ToolRegistry:
    """The built-in tools of one session (one ledger of what its model has read), then MCP's and
    the skills', every call judged by ``gate`` (the permission engine). With ``checkpoints``, what
    the file tools and shell change is kept first (tmg.checkpoints); ``more``: the session's own
    tools (todo_write, exit_plan_mode); ``own_sources``: its tools offered only at times (memory's
    remember, while memory learns)."""
    guard = RootGuard([envr.cwd], SensitivePaths(envr.env))
    ledger = ReadLedger()
    redact = process_redactor()
    current = config or Config
    shell = ShellTool(envr.cwd, envr.env, default_timeout=lambda: current().tool_timeout,
                      secret=lambda value: redact(value) != value, sandbox=Sandbox(envr.cwd, envr.env, current, warn))
    tools = [ReadFileTool(guard, ledger), ListFolderTool(guard), GlobTool(guard), GrepTool(guard),
             WriteFileTool(guard, ledger), EditFileTool(guard, ledger), shell, _web_fetch(gate)]
    if checkpoints is not None:
        tools = checkpointed(tools, checkpoints.log, checkpoints.prompt, guard.locate, checkpoints.say)
    tools += more or []
    sources = [*(own_sources or []), *(s for s in (mcp, SkillTools(skills) if skills is not None else None)
                                       if s is not None)]
    return ToolRegistry(tools, sources=sources, gate=gate)


class Checkpoints(NamedTuple):
    """Where a session keeps what its tools change, per prompt (tmg.checkpoints)."""

    log: CheckpointLog
    prompt: Callable[[], PromptKey | None]  # the prompt running now
    say: Callable[[str], None]  # a file that could not be kept


def _web_fetch(gate: PermissionGate | None) -> WebFetchTool:
    """web_fetch, asking the session's permission engine what a redirect or a private address needs."""
    if not isinstance(gate, PermissionEngine):  # no engine (tests): nothing private, no redirect elsewhere
        return WebFetchTool(names_url=lambda _url: False, allows=lambda _action: False)
    return WebFetchTool(names_url=lambda url: gate.rule_names_url("web_fetch", url),
                        allows=lambda action: gate.judge(action).decision == "allow")
