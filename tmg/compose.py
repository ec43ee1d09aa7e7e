"""The composition root: wires config, session store, pipeline, tools, gateway and engine into an
open session (tmg.session.runner.ChatSession).

Everything else receives its collaborators; only this module knows how they fit together. It
makes things and hands them to each other; what they do is theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tmg.checkpoints.log import CheckpointLog
from tmg.checkpoints.tools import PromptTracker, current_prompt
from tmg.config.live import LiveConfig
from tmg.config.loader import load_config
from tmg.config.model import Config
from tmg.config.trust import Ask
from tmg.config.watcher import ConfigWatcher
from tmg.context.alternation import AlternationTransformer
from tmg.context.cleaners import CleanersTransformer
from tmg.context.gatekeeper import BudgetGatekeeper
from tmg.context.instruction_files import InstructionFiles
from tmg.context.instructions import InstructionsTransformer
from tmg.context.notices import TransientNotices
from tmg.context.persona import PersonaTransformer
from tmg.context.pipeline import Pipeline, Transformer
from tmg.context.pruner import PrunerTransformer
from tmg.context.repair import RepairTransformer
from tmg.context.server_instructions import ServerInstructionsTransformer
from tmg.context.tokens import TokenEstimator
from tmg.context.validator import FinalValidator
from tmg.context.work_notes import WorkNotes
from tmg.engine.engine import PhaseEngine
from tmg.engine.events import EngineEvents, FanOut
from tmg.engine.hooks import HookSet
from tmg.environment import Environment
from tmg.hooks.command_hooks import CommandHooks
from tmg.mcp.oauth import OAuthStore
from tmg.mcp.sampling import ModelSampler
from tmg.mcp.server_set import McpToolServers
from tmg.mcp.session_servers import ready_wait as mcp_ready_wait
from tmg.paths import tmg_home
from tmg.project import project_root
from tmg.permissions.engine import Asker, PermissionEngine
from tmg.permissions.store import DecisionStore
from tmg.redaction import process_redactor
from tmg.session.ending import SessionEnd
from tmg.session.history import History
from tmg.session.models import SessionModels
from tmg.session.options import ChatOptions
from tmg.session.runner import ChatSession, TranscriptRecorder
from tmg.session.spend import CostCap, DayLedger, spent_in
from tmg.session.choice import choose_session
from tmg.session.store import SessionRef, SessionStore, lock_session
from tmg.session.transcript import Transcript
from tmg.skills.session import SessionSkills, open_session_skills
from tmg.skills.transformer import SkillsTransformer
from tmg.tools.attach import FileAttacher
from tmg.tools.mcp_tools import McpTools
from tmg.tools.plan import ExitPlanModeTool, PlanReview
from tmg.tools.registry import Tool
from tmg.permissions.sensitive import SensitivePaths
from tmg.tools.todo import TodoList, TodoWriteTool
from tmg.session.toolbox import Checkpoints, build_tools
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
    live = LiveConfig(config, mode=options.mode, person=options.system, max_turns=options.max_turns,
                      max_budget_usd=options.max_budget_usd)
    live.warnings = tuple(warnings)
    return live


def build_pipeline(memory_injector: Transformer | None = None, budget: BudgetGatekeeper | None = None,
                   skills: SessionSkills | None = None, server_instructions: Transformer | None = None,
                   work_notes: Transformer | None = None, instructions: Transformer | None = None) -> Pipeline:
    # ``budget`` without a summary model only prunes.
    budget = budget or BudgetGatekeeper(TokenEstimator())
    return Pipeline([
        *([instructions] if instructions is not None else []),
        *([memory_injector] if memory_injector is not None else []),
        *([SkillsTransformer(skills)] if skills is not None else []),
        RepairTransformer(),
        CleanersTransformer(),
        AlternationTransformer(),
        PersonaTransformer(),
        *([server_instructions] if server_instructions is not None else []),
        budget,
        *([work_notes] if work_notes is not None else []),
        TransientNotices(),
        PrunerTransformer(),
        FinalValidator(budget.estimator),
    ])


def build_gate(options: ChatOptions, envr: Environment, config: Callable[[], Config], transcript: Transcript,
               notices: Notices, asker: Asker | None) -> PermissionEngine:
    """The one permission engine of a session: every decision in the transcript; a refusal
    without a terminal one line on stderr naming what would allow it."""
    return PermissionEngine(
        config, cwd=str(envr.cwd), env=envr.env, store=DecisionStore.for_env(envr.env), mode=options.permissions,
        asker=asker, record=transcript.permission, refused=notices.notice,
        warn=lambda text: _warn_and_record(text, notices, transcript),
        unasked="a one-shot does not ask (run tmg without a prompt to be asked)" if envr.stdin_isatty else None)


async def open_session(
    options: ChatOptions,
    envr: Environment,
    live: LiveConfig,
    notices: Notices,
    screen: EngineEvents,
    memory_servers: MemoryServers | None = None,
    mcp_servers: McpToolServers | None = None,
    interactive: bool = False,
    asker: Asker | None = None,
    side_ok: bool = True,
    plan_review: PlanReview | None = None,
) -> ChatSession:
    """Open (or resume) the session of the mode and project (tmg.session.choice), locked
    (tmg.session.store.lock_session: a run that finds it open elsewhere goes to a side session,
    unless ``side_ok`` is False), with its engine wired.

    From the lock on, each thing made is put on the session's end as it is made: a failure
    while opening ends what was made (the lock released last) and raises.

    ``memory_servers`` is the process's: a session opened after another in the same process
    (the REPL's /new and /mode) shares its running memory server. None: the session starts its
    own and closes it at its end. ``mcp_servers`` likewise for the MCP tool servers.

    ``asker`` puts a tool call the permission engine would ask about to the user (the REPL's
    consent prompt); None (a one-shot) refuses it with one line on stderr. ``plan_review`` puts
    the model's plan (plan mode) to the user; None (a one-shot) prints it and ends the run.
    """
    config = live.get()
    # The process's redactor: it grows when a reload brings new secrets, and a secret of an
    # earlier config (the REPL's /new, a reload) stays masked.
    redact = process_redactor()
    redact.add(config.secrets())
    notices.set_redactor(redact)
    models = SessionModels(options.model)
    await models.find_local(config, envr.env, notices.notice)  # only when no provider is configured at all
    models.spec_for(config)  # fail now, with guidance, if no provider is usable
    store = SessionStore(tmg_home(envr.env))
    end = SessionEnd(report=notices.warn)
    project = project_root(envr.cwd)  # sessions belong to a mode and a project (SPEC §4)
    chosen = choose_session(store, config.mode, project, options.session_wish, notices.notice)
    lock = await lock_session(store, chosen, project, interactive, notices.notice, side_ok=side_ok)
    end.add_resource("release the session lock", lock.release)
    try:
        return _wire(options, envr, live, notices, screen, lock.ref, end, models, memory_servers, mcp_servers, asker,
                     plan_review)
    except BaseException:
        await end.run()
        raise


def _wire(options: ChatOptions, envr: Environment, live: LiveConfig, notices: Notices, screen: EngineEvents,
          ref: SessionRef, end: SessionEnd, models: SessionModels, memory_servers: MemoryServers | None,
          mcp_servers: McpToolServers | None, asker: Asker | None, plan_review: PlanReview | None) -> ChatSession:
    """The session's parts, each on `end` as it is made. The end stops the config watcher, closes
    network clients, runs memory's end, then closes servers and files, the last made first."""
    config = live.get()
    redact = process_redactor()
    transcript = Transcript(ref.transcript_path, ref.id, ref.mode, redact, warn=notices.warn)
    end.add_resource("close the transcript", transcript.close)
    history = History(ref.history_path, warn=notices.warn, redact=redact)
    end.add_resource("close the history", history.close)
    models.resume_failover(history.messages, config, notices.notice)
    # MAX_COST: each model call of the session checked first, counted after (the day's across runs).
    models.cap_spend(CostCap(lambda: _cost_caps(live.get()), DayLedger(tmg_home(envr.env) / "spend"), ref.id,
                             spent_in(history.messages), notice=lambda text: _warn_and_record(text, notices, transcript)))

    def report_reload(level: str, text: str) -> None:
        if level == "debug":
            if envr.debug:
                notices.notice(text)
            return
        (notices.warn if level == "warn" else notices.notice)(text)
        transcript.notice(text)

    # A save that leaves no provider to talk to is refused like an invalid one (SPEC §3).
    watcher = ConfigWatcher(live, envr.env, report_reload, on_swap=lambda c: redact.add(c.secrets()),
                            warnings=live.warnings, usable=models.spec_for)
    end.add("stop the config watcher", watcher.stop)
    end.add("close the model gateway", models.aclose)
    if mcp_servers is None:
        # A one-shot uses a stored OAuth login; it never waits for one (tmg.mcp.oauth). A server whose
        # tools are known from before starts when first needed: a prompt without tools pays nothing.
        mcp_servers = McpToolServers(warn=notices.warn, log=notices.notice if envr.debug else None,
                                     oauth_store=OAuthStore.for_env(envr.env), on_demand=True)
        end.add_resource("close the MCP tool servers", mcp_servers.aclose)
    def say(text: str) -> None:  # MCP servers and skills that fail: stderr and the transcript
        _warn_and_record(text, notices, transcript)

    mcp = mcp_servers.for_session(config, tmg_home(envr.env), ready_wait=mcp_ready_wait(envr.env), cwd=envr.cwd,
                                  warn=say)
    # What each prompt changes is kept for a rewind: files, commands, memory writes (tmg.checkpoints).
    checkpoint_log = CheckpointLog(ref.dir, warn=say)
    end.add_resource("close the checkpoint log", checkpoint_log.close)
    tracker = PromptTracker(checkpoint_log, lambda: history.messages)
    memory = _session_memory(config, watcher, ref, envr, notices, memory_servers, written=tracker.memory_written)
    skills = open_session_skills(envr.env, envr.cwd, ref.dir, redact=redact, record=transcript.notice, warn=say)
    hooks = HookSet(report=notices.warn)
    hooks.register(tracker)
    if memory is not None:
        hooks.register(memory.hook)  # this session's engine has its own HookSet: once per session
        hooks.register(memory.remember)  # it grounds a call in the prompts the user typed
    elif envr.debug:
        hooks.register(_NoMemoryThisRun(watcher.current, notices.notice))
    waiting = WaitingLine(envr.stderr, enabled=bool(envr.stderr_isatty))
    hooks.register(waiting)
    notices.set_before_line(waiting.clear)
    gate = build_gate(options, envr, watcher.current, transcript, notices,
                      _quiet_while_asking(asker, waiting) if asker is not None else None)
    def note(text: str) -> None:  # what a hook did (a block, a rewrite): stderr and the transcript
        notices.notice(text)
        transcript.notice(text)

    # HOOKS (read live at each event; a project's only in a trusted folder).
    command_hooks = CommandHooks(watcher.current, session_id=ref.id, transcript_path=ref.transcript_path, cwd=envr.cwd,
                                 env=envr.env, permission_mode=gate.mode, resumed=bool(history.messages), say=say,
                                 note=note)
    budget = BudgetGatekeeper(TokenEstimator(), models.summary_model, announce=notices.notice,
                              before_summary=command_hooks.before_compact)
    if gate.mode() == "yolo":  # said where it is seen: stderr, the transcript (and the REPL's prompt line)
        text = f"permissions: yolo mode ({gate.mode_source()}): every tool call runs without asking"
        notices.notice(text)
        transcript.notice(text)
    todos = TodoList(ref.dir)
    session_tools: list[Tool] = [
        TodoWriteTool(todos, show=lambda lines: _show_todos(lines, notices, transcript)),
        ExitPlanModeTool(gate.mode, gate.set_mode, _quiet_while_asking(plan_review, waiting) if plan_review else None,
                         present=lambda plan: _print(envr, plan),
                         say=lambda text: _say_and_record(text, notices, transcript))]
    mcp.show_on(waiting.progress, waiting.hold)
    mcp.use_sampler(ModelSampler(gate, lambda messages, bound: models.sample(watcher.current(), messages, bound),
                                 consent=mcp.consent))
    tools = build_tools(envr, McpTools(mcp, config), watcher.current, gate, skills=skills,
                        checkpoints=Checkpoints(checkpoint_log, lambda: current_prompt(history.messages), say),
                        more=session_tools, warn=say, own_sources=[memory.remember] if memory is not None else None)
    engine = PhaseEngine(
        config=watcher.current,  # the live config, after a cheap file check at each phase boundary
        pipeline=build_pipeline(memory.injector if memory is not None else None, budget, skills=skills,
                                server_instructions=ServerInstructionsTransformer(mcp.instructions),
                                work_notes=WorkNotes(gate.mode, todos.for_model),
                                instructions=InstructionsTransformer(InstructionFiles(envr.env, envr.cwd))),
        history=history,
        tools=tools,
        hooks=hooks,
        events=FanOut(waiting, screen, TranscriptRecorder(transcript)),  # the waiting line goes before the answer
        gateway_for=models,
        failover_for=models.failover,
        session_id=ref.id,
        budget=budget,
        interceptor=command_hooks,
    )
    if memory is not None:
        # Memory's end (finish writes, flush, the write-failure notice, close an own server) runs
        # while the transcript is still open, so the notice lands in it too. Added last: memory
        # holds nothing until the session starts it, and a session that failed to open has no
        # writes to finish.
        from tmg.memory.session_end import HURRIABLE_STEPS

        for name, step in memory.end_steps(lambda text: _say_and_record(text, notices, transcript)):
            end.add(name, step, hurriable=name in HURRIABLE_STEPS)
    # `@path` in a prompt: judged as the user's own read, by the same gate (tmg.tools.attach).
    files = FileAttacher(envr.cwd, gate, SensitivePaths(envr.env), say, lambda: models.spec_for(watcher.current()),
                         note=lambda text: _say_and_record(text, notices, transcript))
    return ChatSession(live, ref, engine, transcript, models, end, redact, watcher, memory, mcp_servers, gate,
                       skills, mcp, checkpoint_log, todos, command_hooks, tools=tools, files=files)


def _cost_caps(config: Config) -> tuple[float | None, float | None]:
    return config.max_cost.session, config.max_cost.day


def _quiet_while_asking(asker: Asker, waiting: WaitingLine) -> Asker:
    """The waiting line ("running shell · 3s") stops while the user is asked: it would redraw
    over the question."""
    async def ask(question):
        waiting.stop()
        return await asker(question)

    return ask


def _session_memory(config: Config, watcher: ConfigWatcher, ref: SessionRef, envr: Environment, notices: Notices,
                    servers: MemoryServers | None, written: Callable[[int, str, str, str], None] | None = None,
                    ) -> SessionMemory | None:
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
    from tmg.config.trust import TrustStore
    from tmg.project import find_project

    return SessionMemory(watcher.current, ref.id, home, warn=notices.warn, debug=debug, errlog=errlog,
                         runtime=runtime, ready_wait=_ready_wait(envr), redact=process_redactor(),
                         project=find_project(envr.cwd), session_dir=ref.dir, written=written,
                         trusted=TrustStore.for_env(envr.env).is_trusted)


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


def _warn_and_record(text: str, notices: Notices, transcript: Transcript) -> None:
    """A warning on stderr that the transcript keeps too (MCP servers that fail)."""
    try:
        notices.warn(text)
    finally:
        try:
            transcript.notice(text)
        except Exception:  # noqa: BLE001 - a closed transcript: stderr already has it
            pass


def _show_todos(lines: list[str], notices: Notices, transcript: Transcript) -> None:
    """The model's todo list as it changes: on stderr (the REPL shows it above the prompt) and in
    the transcript (`tmg -t`)."""
    notices.notice("todo list:" if lines else "todo list: cleared")
    for line in lines:
        notices.notice(f"  {line}")
    transcript.notice("todo list: " + (" · ".join(lines) if lines else "cleared"))


def _print(envr: Environment, text: str) -> None:
    """A one-shot's plan (plan mode) on stdout, where its answer would be."""
    envr.stdout.write(text.rstrip("\n") + "\n")
    envr.stdout.flush()


def _say_and_record(text: str, notices: Notices, transcript: Transcript) -> None:
    """A line on stderr (after tmg's usual `tmg:` prefix) and as a notice in the transcript: a
    one-shot plan's next step, and the session-end line `memory write failures: ...` (memory.md
    §6), exactly as specified."""
    try:
        notices.notice(text)
    finally:
        transcript.notice(text)

