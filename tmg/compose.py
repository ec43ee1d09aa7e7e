"""The composition root: wires config, session store, pipeline, tools, gateway and engine.

Everything else receives its collaborators; only this module knows how they fit together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from tmg.cli.options import ChatOptions
from tmg.config.live import LiveConfig
from tmg.config.loader import load_config
from tmg.config.model import Config
from tmg.config.providers import choose_provider, provider_spec
from tmg.config.secrets import process_redactor
from tmg.config.trust import Ask
from tmg.config.watcher import ConfigWatcher
from tmg.context.alternation import AlternationTransformer
from tmg.context.cleaners import CleanersTransformer
from tmg.context.gatekeeper import BudgetGatekeeper
from tmg.context.notices import TransientNotices
from tmg.context.persona import PersonaTransformer
from tmg.context.server_instructions import ServerInstructionsTransformer
from tmg.context.pipeline import Pipeline, Transformer
from tmg.context.pruner import PrunerTransformer
from tmg.context.repair import RepairTransformer
from tmg.context.summary import SummaryCall, SummaryReply
from tmg.context.tokens import Budget, TokenEstimator
from tmg.context.validator import FinalValidator
from tmg.engine.engine import PhaseEngine
from tmg.engine.events import EngineEvents, FanOut
from tmg.engine.hooks import HookSet
from tmg.environment import Environment
from tmg.llm.gateway import ModelGateway, ProviderSpec
from tmg.mcp_servers.oauth import OAuthStore
from tmg.permissions.engine import Asker, PermissionEngine
from tmg.permissions.store import DecisionStore
from tmg.session.ending import SessionEnd
from tmg.session.history import History
from tmg.session.recorder import TranscriptRecorder
from tmg.session.store import SessionLock, SessionRef, SessionStore, tmg_home
from tmg.session.transcript import Transcript
from tmg.tools.edit import EditFileTool, WriteFileTool
from tmg.skills.session import SessionSkills, open_session_skills
from tmg.skills.tool import SkillTools
from tmg.skills.transformer import SkillsTransformer
from tmg.tools.files import ListFolderTool, ReadFileTool, RootGuard
from tmg.tools.ledger import ReadLedger
from tmg.tools.mcp_sampling import ModelSampler
from tmg.tools.mcp_tools import McpTools, McpToolServers
from tmg.permissions.action import PermissionGate
from tmg.tools.registry import ToolRegistry
from tmg.tools.search import GlobTool, GrepTool
from tmg.permissions.sensitive import SensitivePaths
from tmg.tools.shell import ShellTool
from tmg.ui.notices import Notices
from tmg.ui.waiting import WaitingLine

if TYPE_CHECKING:  # memory is imported only by a session that has it (a memory-off one-shot never does)
    from tmg.memory.runtime import MemoryServers
    from tmg.memory.session import SessionMemory


def load_live_config(options: ChatOptions, envr: Environment, notices: Notices, ask: Ask | None = None) -> LiveConfig:
    """The session's config; ``ask`` may trust an untrusted project folder first (the REPL's question)."""
    config, warnings = load_config(options.config_path, envr.env, envr.cwd, ask=ask)
    process_redactor().add(config.secrets())
    notices.set_redactor(process_redactor())
    for w in warnings:
        notices.warn(w)
    live = LiveConfig(config, mode=options.mode)
    live.warnings = tuple(warnings)
    return live


def build_pipeline(memory_injector: Transformer | None = None, budget: BudgetGatekeeper | None = None,
                   skills: SessionSkills | None = None, server_instructions: Transformer | None = None) -> Pipeline:
    # ``budget`` without a summary model only prunes.
    budget = budget or BudgetGatekeeper(TokenEstimator())
    return Pipeline([
        *([memory_injector] if memory_injector is not None else []),
        *([SkillsTransformer(skills)] if skills is not None else []),
        RepairTransformer(),
        CleanersTransformer(),
        AlternationTransformer(),
        PersonaTransformer(),
        *([server_instructions] if server_instructions is not None else []),
        budget,
        TransientNotices(),
        PrunerTransformer(),
        FinalValidator(budget.estimator),
    ])


def build_tools(envr: Environment, mcp: McpTools | None = None,
                config: Callable[[], Config] | None = None, gate: PermissionGate | None = None,
                skills: SessionSkills | None = None) -> ToolRegistry:
    """The built-in tools of one session (one ledger of what its model has read), then MCP's and
    the skills', every call judged by ``gate`` (the permission engine)."""
    guard = RootGuard([envr.cwd], SensitivePaths(envr.env))
    ledger = ReadLedger()
    redact = process_redactor()
    shell = ShellTool(envr.cwd, envr.env, default_timeout=lambda: (config() if config else Config()).tool_timeout,
                      secret=lambda value: redact(value) != value)
    tools = [ReadFileTool(guard, ledger), ListFolderTool(guard), GlobTool(guard), GrepTool(guard),
             WriteFileTool(guard, ledger), EditFileTool(guard, ledger), shell]
    sources = [s for s in (mcp, SkillTools(skills) if skills is not None else None) if s is not None]
    return ToolRegistry(tools, sources=sources, gate=gate)


def build_gate(options: ChatOptions, envr: Environment, config: Callable[[], Config], transcript: Transcript,
               notices: Notices, asker: Asker | None) -> PermissionEngine:
    """The one permission engine of a session: every decision in the transcript; a refusal
    without a terminal one line on stderr naming what would allow it."""
    return PermissionEngine(
        config, cwd=str(envr.cwd), env=envr.env, store=DecisionStore.for_env(envr.env), mode=options.permissions,
        asker=asker, record=transcript.permission, refused=notices.notice,
        warn=lambda text: _warn_and_record(text, notices, transcript),
        unasked="a one-shot does not ask (run tmg without a prompt to be asked)" if envr.stdin_isatty else None)


class GatewayCache:
    """One gateway per provider settings, created on first use, closed at session end."""

    def __init__(self, model_override: str | None) -> None:
        self._model_override = model_override
        self._gateways: dict[tuple, ModelGateway] = {}

    def set_model(self, model_override: str | None) -> None:
        """Use ``model_override`` (a model id or a provider name) from the next call on (``/model``)."""
        self._model_override = model_override

    def spec_for(self, config: Config) -> ProviderSpec:
        return provider_spec(choose_provider(config, self._model_override))

    def __call__(self, config: Config) -> tuple[ProviderSpec, ModelGateway]:
        return self._gateway(self.spec_for(config))

    def failover(self, config: Config, tried: list[str]) -> tuple[ProviderSpec, ModelGateway] | None:
        """The next FAILOVER_ORDER provider not yet tried that tmg can call, with its gateway."""
        for name in config.failover_order:
            p = config.providers.get(name)
            if p is not None and name not in tried and (p.api_key or p.url):
                return self._gateway(provider_spec(p))
        return None

    def summary_model(self, config: Config, chat: ProviderSpec | None) -> tuple[SummaryCall, int]:
        """How the gatekeeper calls the summary model (COMPACTION.SUMMARY_MODEL, a model id or a
        provider name; else the chat's own) and that model's window."""
        wanted = config.compaction.summary_model
        spec = provider_spec(choose_provider(config, wanted)) if wanted or chat is None else chat
        spec, gateway = self._gateway(spec)

        async def call(messages: list) -> SummaryReply:
            completion = await _complete_once(spec, gateway, messages)
            return SummaryReply(completion.text, completion.usage, spec.model, Budget.for_request(config, spec).hard)

        return call, Budget.for_request(config, spec).hard

    async def sample(self, config: Config, messages: list, max_tokens: int) -> tuple[str, str, str | None]:
        """One completion of the chat's model for an MCP server's sampling request (no tools, at
        most `max_tokens`): its text, the model, why it stopped."""
        from dataclasses import replace

        spec, gateway = self(config)
        spec = replace(spec, max_tokens=min(max_tokens, spec.max_tokens or max_tokens))
        completion = await _complete_once(spec, gateway, messages)
        return completion.text, spec.model, completion.finish_reason

    def _gateway(self, spec: ProviderSpec) -> tuple[ProviderSpec, ModelGateway]:
        key = (spec.name, spec.model, spec.api_base, spec.backend, spec.api_key, tuple(sorted(spec.headers.items())))
        gateway = self._gateways.get(key)
        if gateway is None:
            from tmg.llm.select import DeferredGateway

            gateway = self._gateways[key] = DeferredGateway(spec)
        return spec, gateway

    async def aclose(self) -> None:
        for gateway in self._gateways.values():
            await gateway.aclose()
        self._gateways.clear()


async def _complete_once(spec: ProviderSpec, gateway: ModelGateway, messages: list):
    """One completion without tools, its text gathered rather than shown (a summary, a sampling answer)."""
    from tmg.llm.gateway import CompletionRequest

    request = CompletionRequest(spec, messages, [], timeout=spec.stream_idle_timeout,
                                first_byte_timeout=spec.first_byte_timeout)
    return await gateway.complete(request, lambda _delta: None)


@dataclass
class ChatSession:
    """An open session: its engine, and the one path that ends it."""

    live: LiveConfig
    ref: SessionRef
    engine: PhaseEngine
    transcript: Transcript
    gateways: GatewayCache
    end: SessionEnd
    redact: Callable[[str], str] = field(default=lambda s: s)
    config_watcher: ConfigWatcher | None = None  # start() it on the session's event loop
    memory: SessionMemory | None = None  # start() it on the session's event loop, as early as possible
    mcp_servers: McpToolServers | None = None  # the MCP servers whose tools the model gets
    gate: PermissionEngine | None = None  # the session's permission engine (/permissions, the prompt line)
    skills: SessionSkills | None = None  # the skills it offers and those it activated
    mcp: McpTools | None = None  # this session's view of the MCP servers (tools, resources)

    async def run_prompt(self, text: str) -> None:
        """Run one prompt, with the MCP resources it names (`@server:uri`) read and attached."""
        sent, images = text, []
        if self.mcp is not None:
            text, attached = await self.mcp.attach_resources(text, self.live.get().tool_timeout)
            sent, images = attached.text(text), attached.images
        await self.engine.run_prompt(text, sent_text=sent, images=images)

    def start(self, watcher_delay: float = 0.0) -> None:
        """Start what runs beside the session: its memory server first (the slowest), the MCP
        tool servers, then the config watcher. Call on the session's event loop."""
        if self.memory is not None:
            self.memory.start()
        if self.mcp_servers is not None:
            self.mcp_servers.start()
        if self.config_watcher is not None:
            self.config_watcher.start(delay=watcher_delay)

    def invoke_skill(self, prompt: str) -> None:
        """``$name`` at the start of a prompt activates that skill before the prompt runs, so a
        one-shot never depends on the model choosing it."""
        if self.skills is not None:
            self.skills.leading_invocation(prompt)

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


def open_session(
    options: ChatOptions,
    envr: Environment,
    live: LiveConfig,
    notices: Notices,
    screen: EngineEvents,
    memory_servers: MemoryServers | None = None,
    mcp_servers: McpToolServers | None = None,
    interactive: bool = False,
    asker: Asker | None = None,
) -> ChatSession:
    """Open (or resume) the mode's session, locked, with its engine wired.

    ``interactive`` (the REPL): a session open in another tmg is an error. Otherwise (a one-shot)
    the answer goes to a side session of the mode, said in one line: a chat open in another
    terminal must not make a one-shot fail, and the two never write the same files.

    ``memory_servers`` is the process's: a session opened after another in the same process
    (the REPL's /new and /mode) shares its running memory server. None: the session starts its
    own and closes it at its end. ``mcp_servers`` likewise for the MCP tool servers.

    ``asker`` puts a tool call the permission engine would ask about to the user (the REPL's
    consent prompt); None (a one-shot) refuses it with one line on stderr.
    """
    config = live.get()
    # The process's redactor: it grows when a reload brings new secrets, and a secret of an
    # earlier config (the REPL's /new, a reload) stays masked.
    redact = process_redactor()
    redact.add(config.secrets())
    notices.set_redactor(redact)
    gateways = GatewayCache(options.model)
    gateways.spec_for(config)  # fail now, with guidance, if no provider is usable
    store = SessionStore(tmg_home(envr.env))
    ref = store.resume_or_start(config.mode, new=options.new)
    lock = _lock_session(store, ref, interactive, notices)
    ref = lock.ref

    def report_reload(level: str, text: str) -> None:
        if level == "debug":
            if envr.debug:
                notices.notice(text)
            return
        (notices.warn if level == "warn" else notices.notice)(text)
        transcript.notice(text)

    # A save that leaves no provider to talk to is refused like an invalid one (SPEC §3).
    watcher = ConfigWatcher(live, envr.env, report_reload, on_swap=lambda c: redact.add(c.secrets()),
                            warnings=live.warnings, usable=gateways.spec_for)
    # The end stops the config watcher, closes network clients, then files, and releases the lock last of all.
    end = SessionEnd(report=notices.warn)
    end.add("stop the config watcher", watcher.stop)
    end.add("close the model gateway", gateways.aclose)
    try:
        history = History(ref.history_path, warn=notices.warn, redact=redact)
        transcript = Transcript(ref.transcript_path, ref.id, ref.mode, redact)
        memory = _session_memory(config, watcher, ref, envr, notices, memory_servers)
        own_mcp = mcp_servers is None
        if mcp_servers is None:
            # A one-shot uses a stored OAuth login; it never waits for one (tmg.mcp_servers.oauth).
            mcp_servers = McpToolServers(warn=notices.warn, log=notices.notice if envr.debug else None,
                                         oauth_store=OAuthStore.for_env(envr.env))
        mcp = mcp_servers.tools_for(config, tmg_home(envr.env), ready_wait=_mcp_wait(envr), cwd=envr.cwd,
                                    warn=lambda text: _warn_and_record(text, notices, transcript))
        skills = open_session_skills(envr.env, envr.cwd, ref.dir, redact=redact, record=transcript.notice,
                                     warn=lambda text: _warn_and_record(text, notices, transcript))
    except BaseException:
        lock.release()
        raise
    # Memory's end (finish writes, flush, the write-failure notice, close an own server) runs
    # while the transcript is still open, so the notice lands in it too.
    if memory is not None:
        from tmg.memory.session_end import HURRIABLE_STEPS

        for name, step in memory.end_steps(lambda text: _memory_notice(text, notices, transcript)):
            end.add(name, step, hurriable=name in HURRIABLE_STEPS)
    if own_mcp:
        end.add("close the MCP tool servers", mcp_servers.aclose)
    end.add("close the history", history.close)
    end.add("close the transcript", transcript.close)
    end.add("release the session lock", lock.release)
    hooks = HookSet(report=notices.warn)
    if memory is not None:
        hooks.register(memory.hook)  # this session's engine has its own HookSet: once per session
    elif envr.debug:
        hooks.register(_NoMemoryThisRun(watcher.current, notices.notice))
    waiting = WaitingLine(envr.stderr, enabled=bool(envr.stderr_isatty))
    hooks.register(waiting)
    notices.set_before_line(waiting.clear)
    budget = BudgetGatekeeper(TokenEstimator(), gateways.summary_model, announce=notices.notice)
    gate = build_gate(options, envr, watcher.current, transcript, notices,
                      _quiet_while_asking(asker, waiting) if asker is not None else None)
    if gate.mode() == "yolo":  # said where it is seen: stderr, the transcript (and the REPL's prompt line)
        text = f"permissions: yolo mode ({gate.mode_source()}): every tool call runs without asking"
        notices.notice(text)
        transcript.notice(text)
    mcp.show_on(waiting.progress, waiting.hold)
    mcp.use_sampler(ModelSampler(gate, lambda messages, bound: gateways.sample(watcher.current(), messages, bound),
                                 consent=mcp.consent))
    engine = PhaseEngine(
        config=watcher.current,  # the live config, after a cheap file check at each phase boundary
        pipeline=build_pipeline(memory.injector if memory is not None else None, budget, skills=skills,
                                server_instructions=ServerInstructionsTransformer(mcp.instructions)),
        history=history,
        tools=build_tools(envr, mcp, watcher.current, gate, skills=skills),
        hooks=hooks,
        events=FanOut(waiting, screen, TranscriptRecorder(transcript)),  # the waiting line goes before the answer
        gateway_for=gateways,
        failover_for=gateways.failover,
        session_id=ref.id,
        budget=budget,
    )
    return ChatSession(live, ref, engine, transcript, gateways, end, redact, watcher, memory, mcp_servers, gate,
                       skills, mcp)


def _quiet_while_asking(asker: Asker, waiting: WaitingLine) -> Asker:
    """The waiting line ("running shell · 3s") stops while the user is asked: it would redraw
    over the question."""
    async def ask(question):
        waiting.stop()
        return await asker(question)

    return ask


def _lock_session(store: SessionStore, ref: SessionRef, interactive: bool, notices: Notices) -> SessionLock:
    """The session's lock; for a one-shot that finds it held, a side session's."""
    from tmg.errors import SessionBusyError
    from tmg.session.store import INTERACTIVE

    lock = SessionLock(ref, kind=INTERACTIVE if interactive else "oneshot")
    if not interactive and lock.holder_kind() == INTERACTIVE:
        lock.wait = 0.0  # an open chat will not end in a moment: no point waiting for it
    try:
        lock.acquire()
        return lock
    except SessionBusyError:
        if interactive:
            raise
    side = SessionLock(store.start_side(ref.mode), kind="oneshot")
    side.acquire()
    notices.notice(f"session {ref.id} is open in another tmg; this answer goes to a side session "
                   f"{side.ref.id} (tmg -t {side.ref.id})")
    return side


def _session_memory(config: Config, watcher: ConfigWatcher, ref: SessionRef, envr: Environment, notices: Notices,
                    servers: MemoryServers | None) -> SessionMemory | None:
    """The session's memory; None for a one-shot (no process-wide ``servers``) whose memory is
    off: its server is chosen at the start, so nothing could turn it on before the run ends,
    and such a run need not load memory's code at all. The REPL keeps one either way (/memory)."""
    if servers is None and not config.memory.enabled:
        return None
    from tmg.memory.session import SessionMemory

    home = tmg_home(envr.env)
    errlog = home / "memory-server.log"  # the server's stderr: a shared server outlives a session
    debug = notices.notice if envr.debug else (lambda _m: None)
    runtime = servers.runtime_for(config, errlog) if servers is not None else None
    return SessionMemory(watcher.current, ref.id, home, warn=notices.warn, debug=debug, errlog=errlog,
                         runtime=runtime, ready_wait=_ready_wait(envr), redact=process_redactor())


class _NoMemoryThisRun:
    """A one-shot that started with memory off has no memory server for the whole run: a save
    turning MEMORY.ENABLED on mid-run is said once under --debug, as a run with memory would."""

    def __init__(self, config: Callable[[], Config], debug: Callable[[str], None]) -> None:
        self._config = config
        self._debug = debug
        self._said = False

    def before_turn(self, _turn: object) -> None:
        if not self._said and self._config().memory.enabled:
            self._said = True
            self._debug("memory: no live memory server in this run (memory was off when it started); "
                        "answering without recall")


def _ready_wait(envr: Environment) -> float:
    """How long a prompt waits for a memory server still starting (``TMG_RECALL_WAIT``,
    seconds): tests on a loaded machine lengthen it so recall is never skipped by chance."""
    from tmg.memory.injector import READY_WAIT_S

    try:
        return max(0.0, float(envr.env.get("TMG_RECALL_WAIT", READY_WAIT_S)))
    except ValueError:
        return READY_WAIT_S


def _mcp_wait(envr: Environment) -> float | None:
    """A fixed wait per prompt for MCP servers still starting (``TMG_MCP_WAIT``, seconds), or
    None: each server is waited for as long as its remembered starts need (mcp_tools.py)."""
    try:
        return max(0.0, float(envr.env["TMG_MCP_WAIT"]))
    except (KeyError, ValueError):
        return None


def _warn_and_record(text: str, notices: Notices, transcript: Transcript) -> None:
    """A warning on stderr that the transcript keeps too (MCP servers that fail)."""
    try:
        notices.warn(text)
    finally:
        try:
            transcript.notice(text)
        except Exception:  # noqa: BLE001 - a closed transcript: stderr already has it
            pass


def _memory_notice(text: str, notices: Notices, transcript: Transcript) -> None:
    """The session-end line `memory write failures: ...` (memory.md §6), exactly as specified
    after tmg's usual `tmg:` prefix on stderr, and as a notice in the transcript."""
    try:
        notices.notice(text)
    finally:
        transcript.notice(text)

