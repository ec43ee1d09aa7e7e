"""The PhaseEngine: runs one user prompt as a bounded loop of turns."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from tmg.config.model import Config
from tmg.context.pipeline import Pipeline, TurnContext
from tmg.context.validator import check_prompt_size
from tmg.engine.events import EngineEvents
from tmg.engine.hooks import HookSet
from tmg.engine.loops import CORRECTION, LoopDetector
from tmg.engine.phases import Phase
from tmg.engine.recovery import RetryPolicy
from tmg.engine.turn import Turn, last_answer
from tmg.errors import TmgError, TurnLimitError
from tmg.llm.gateway import (
    Completion,
    CompletionRequest,
    ErrorKind,
    GatewayError,
    ModelGateway,
    ProviderSpec,
)
from tmg.llm.tool_images import IMAGES_KEY, prompt_images, with_tool_images
from tmg.session.history import History
from tmg.media import Image
from tmg.tools.registry import ToolRegistry, ToolResult

GatewayFor = Callable[[Config], tuple[ProviderSpec, ModelGateway]]
# The next provider to try after those named (FAILOVER_ORDER), or None when none is left.
FailoverFor = Callable[[Config, list[str]], "tuple[ProviderSpec, ModelGateway] | None"]


@dataclass
class PromptResult:
    text: str
    turns: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


class PhaseEngine:
    """Guard -> Refining -> Inference -> (Executing) -> Persisting, with Recovering on failure.

    ``config`` is read at phase boundaries only (each prompt's start and each
    Inference -> Executing transition), so a hot-reloaded config takes effect there.
    """

    def __init__(
        self,
        *,
        config: Callable[[], Config],
        pipeline: Pipeline,
        history: History,
        tools: ToolRegistry,
        hooks: HookSet,
        events: EngineEvents,
        gateway_for: GatewayFor,
        session_id: str,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        retry_after_partial: bool = True,
        failover_for: FailoverFor | None = None,
        budget: Any = None,
    ) -> None:
        """``retry_after_partial`` False: a stream that fails after text reached the user is not
        retried (text already written to a pipe cannot be taken back, and a retry would write
        the answer twice); the prompt fails with a clear error instead.

        ``budget`` (the pipeline's BudgetGatekeeper) learns the provider's real token counts and
        runs ``/compact``; None: neither."""
        self._config = config
        self._pipeline = pipeline
        self.history = history
        self._tools = tools
        self._hooks = hooks
        self._events = events
        self._gateway_for = gateway_for
        self.session_id = session_id
        self._retry = retry or RetryPolicy.from_env()
        self._sleep = sleep
        self.retry_after_partial = retry_after_partial
        self._failover_for = failover_for
        self._budget = budget
        # The provider this prompt failed over to: its later turns stay with it.
        self._fallback: tuple[ProviderSpec, ModelGateway] | None = None
        self._prompt_id = 0
        self.phase = Phase.IDLE

    async def _enter(self, new: Phase, state: Any = None) -> None:
        old, self.phase = self.phase, new
        await self._hooks.transition(old, new, state)

    def admit(self, user_text: str) -> None:
        """Raise PromptTooLargeError for a prompt that can never be sent; callers check before
        they write it anywhere (the transcript), and :meth:`run_prompt` before history keeps it."""
        check_prompt_size(user_text, self._config().max_history_tokens)

    async def run_prompt(self, user_text: str, *, sent_text: str | None = None,
                         images: Sequence[Image] = (), typed_text: str | None = None) -> PromptResult:
        """Run one prompt to its final answer (or a clear error).

        ``sent_text``: the user message as sent and stored, when it carries more than the typed
        words (the MCP resources a prompt names); ``images`` go with it as image parts;
        ``typed_text``: what the user typed, when ``user_text`` holds more (piped stdin)."""
        self._fallback = None  # each prompt starts with the selected provider again
        cfg = self._config()
        check_prompt_size(sent_text or user_text, cfg.max_history_tokens)
        self._prompt_id += 1
        previous = last_answer(self.history.model_view)
        message: dict[str, Any] = {"role": "user", "content": sent_text or user_text}
        if images:  # stored bounded with the message; sent as image parts (tool_images.py)
            message[IMAGES_KEY] = [{"mime": i.mime, "data": i.data} for i in images]
        self.history.append(message)
        loops = LoopDetector()
        result = PromptResult(text="", turns=0)
        index = 0
        self._partial: list[str] = []  # the text streamed so far this turn, kept on Ctrl-C
        turn: Turn | None = None
        try:
            while True:
                index += 1
                turn = Turn(self._prompt_id, index, user_text, self.session_id, cfg.mode,
                            typed_text=typed_text, previous_answer=previous)
                await self._enter(Phase.GUARD, turn)
                if index > cfg.max_turns:
                    raise TurnLimitError(
                        f"stopped after MAX_TURNS ({cfg.max_turns}) model calls for this prompt without a "
                        "final answer; raise MAX_TURNS in the config if the task really needs more"
                    )
                await self._hooks.before_turn(turn)
                error: BaseException | None = None
                try:
                    completion = await self._infer(turn, cfg)
                    tool_messages, ended = [], False  # ended: a tool's result ends the prompt (plan mode)
                    if completion.tool_calls:
                        await self._enter(Phase.EXECUTING, turn)
                        cfg = self._config()  # a long tool loop sees a changed MAX_TURNS from here on
                        tool_messages, ended = await self._execute(completion, loops, cfg)
                    await self._enter(Phase.PERSISTING, turn)
                    self._persist(turn, completion, tool_messages)
                    self._events.on_usage(completion.usage, turn)
                    _add_usage(result, completion)
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    await self._hooks.after_turn(turn, error)
                    self._events.on_turn_end(turn)  # stored, hooks run: the answer may end
                result.turns = index
                if not completion.tool_calls or ended:
                    result.text = completion.text
                    result.meta = turn.meta
                    return result
        except asyncio.CancelledError:
            self._keep_interrupted(turn)
            raise
        except Exception as exc:
            self._set_aside_failed(exc)
            raise
        finally:
            self.history.sync()
            await self._enter(Phase.IDLE)

    def _unanswered(self) -> bool:
        """Whether this prompt stored nothing after its user message (no turn completed)."""
        last = self.history.last_turn_message()
        return last is not None and last.get("role") == "user"

    def _keep_interrupted(self, turn: Turn | None) -> None:
        """Ctrl-C: what was shown stays in what the model sees next, marked interrupted.

        Without it the next request would carry two user messages in a row (chat templates that
        require alternation reject that) and the model would answer the old question again.
        """
        if not self._unanswered():
            return  # a turn was stored (a tool call and its results): the next user message may follow
        partial = "".join(self._partial).rstrip()
        marker = "[answer interrupted by the user]"
        self.history.append({
            "role": "assistant", "content": f"{partial}\n\n{marker}" if partial else marker,
            "meta": {"turn": turn.index if turn else 1, "model": turn.model if turn else "", "interrupted": True},
        })

    def _set_aside_failed(self, error: BaseException) -> None:
        """A prompt that failed before any answer is kept on record but out of what the model
        sees, so it cannot fail every later prompt too (an over-long paste, a rejected request)."""
        if self._unanswered():
            last = self.history.last_turn_message()
            assert last is not None
            self.history.set_aside(last, str(error) or type(error).__name__)

    async def _refine(self, turn: Turn, cfg: Config, force_compact: bool, provider: ProviderSpec,
                      tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        await self._enter(Phase.REFINING, turn)
        ctx = TurnContext(list(self.history.model_view), cfg, self._prompt_id, turn.index, force_compact,
                          tools=tools, provider=provider, prompt_text=turn.user_text)
        refined = await self._pipeline.run(ctx)
        if refined.persist:
            # The system message is rebuilt every turn (persona, memory): it is never stored.
            self.history.replace_all([m for m in refined.canonical if m.get("role") != "system"])
        if ctx.summary is not None:
            self._store_summary(ctx.summary)
        for notice in ctx.notices:
            self._events.on_notice(notice)
        turn.meta.update(ctx.meta)
        return refined.payload

    def _store_summary(self, pending: Any) -> None:
        """Append the gatekeeper's summary: later turns and prompts start from it."""
        try:
            record = self.history.add_summary(pending.summary.text, pending.first_kept, pending.info)
        except ValueError:  # the cut fell on a message made this turn only: summarise another time
            self._events.on_notice("context: the summary could not be stored; it is used for this request only")
            return
        self._events.on_summary(record)

    async def compact(self, focus: str = "") -> str:
        """Summarise the session's older turns now (``/compact [focus]``, ``tmg compact``), whether
        or not the context is near its limit; a line saying what was done."""
        if self._budget is None:
            raise TmgError("compaction is not available in this session")
        from tmg.context.gatekeeper import RECENT_SHARE
        from tmg.context.tokens import Budget, messages_tokens

        cfg = self._config()
        provider, _gateway = self._fallback or self._gateway_for(cfg)
        budget = Budget.for_request(cfg, provider)
        view = list(self.history.model_view)
        before = self._budget.estimator.scale(messages_tokens(view))
        keep = min(int(budget.threshold * RECENT_SHARE), int(before * RECENT_SHARE))
        meta: dict[str, Any] = {}
        made = await self._budget.summarise(view, cfg, provider, keep, meta, focus)
        if made is None:
            why = meta.get("budget", {}).get("summary_failed", "nothing to summarise")
            return f"not compacted: {why}"
        messages, pending = made
        after = self._budget.estimator.scale(messages_tokens(messages))
        pending.info.update(tokens_before=before, tokens_after=after)
        record = self.history.add_summary(pending.summary.text, pending.first_kept, pending.info)
        self._events.on_summary(record)
        info = pending.info  # the figures "summarising ..." said
        return (f"compacted: {info['messages']} earlier messages (about {info['tokens']:,} tokens) are now sent as "
                f"a summary; the context is about {after:,} tokens (the originals stay in the transcript)")

    async def _infer(self, turn: Turn, cfg: Config) -> Completion:
        """Refining + Inference, with Recovering: bounded retries, compaction once on overflow."""
        retries = empties = stalls = 0
        force_compact = False
        tried: list[str] = []
        while True:
            provider, gateway = self._fallback or self._gateway_for(cfg)
            await self._tools.settle()  # MCP servers still starting: as long as each needs, bounded (tmg.mcp.session_servers)
            tools = self._tools.schemas()  # counted by the budget, then sent as they are
            payload = await self._refine(turn, cfg, force_compact, provider, tools)
            turn.model, turn.provider = provider.model, provider.name
            await self._enter(Phase.INFERENCE, turn)
            partial: list[str] = []
            self._partial = partial

            def on_text(delta: str) -> None:
                partial.append(delta)
                self._events.on_text(delta)

            images = prompt_images(self.history.messages)  # the latest prompt's tool images
            request = CompletionRequest(provider, with_tool_images(payload, provider, images), tools,
                                        timeout=provider.stream_idle_timeout,
                                        first_byte_timeout=provider.first_byte_timeout)
            try:
                completion = await gateway.complete(request, on_text)
            except asyncio.CancelledError:
                self._events.on_interrupted("".join(partial), turn)
                raise
            except GatewayError as err:
                if partial and not self.retry_after_partial:
                    self._events.on_interrupted("".join(partial), turn)
                    raise GatewayError(
                        ErrorKind.TERMINAL,
                        f"the answer was cut off ({err}); what was printed is incomplete, ask again",
                        status=err.status,
                    ) from err
                if err.kind in _OVERFLOW_LIKE:
                    if not cfg.compaction.enabled:
                        raise GatewayError(err.kind, f"{err}; automatic compaction is off (COMPACTION.ENABLED): "
                                           "run /compact (tmg compact) to summarise older turns, or start a new "
                                           "session with /new (--new)", status=err.status) from err
                    if force_compact:
                        raise GatewayError(err.kind, f"{err}; it is still too long after summarising older turns: "
                                           "start a new session with /new (--new)", status=err.status) from err
                    force_compact = True  # the same gatekeeper, forced: prune, then summarise once
                    self._events.on_notice(f"{err}; summarising older turns and trying once more")
                    continue
                if err.retryable and retries >= self._retry.max_retries and self._fail_over(cfg, provider, tried, err):
                    retries = 0
                    continue
                if not err.retryable or retries >= self._retry.max_retries:
                    raise
                if err.stalled:
                    # A silent provider costs a whole timeout per try: few tries bound the wait.
                    stalls += 1
                    if stalls > self._retry.stall_retries:
                        if self._fail_over(cfg, provider, tried, err):
                            retries = stalls = 0
                            continue
                        raise
                retries += 1
                wait = self._retry.delay(retries, err.retry_after)
                await self._enter(Phase.RECOVERING, err)
                self._events.on_notice(f"retry {retries}/{self._retry.max_retries} in {wait:.1f} s: {err}")
                await self._sleep(wait)
                continue
            if completion.is_empty:
                if empties >= self._retry.empty_retries:
                    raise TmgError(
                        f"the model ({provider.model}) returned an empty response {empties + 1} times; "
                        "try again, or choose another model with -m"
                    )
                empties += 1
                await self._enter(Phase.RECOVERING, completion)
                self._events.on_notice(f"the model returned an empty response; retrying ({empties}/{self._retry.empty_retries})")
                continue
            if self._budget is not None and completion.usage.reported:
                self._budget.estimator.observe(completion.usage.prompt_tokens)
            turn.completion = completion
            self._events.on_answer(turn)
            if completion.finish_reason == "length":
                self._events.on_notice(
                    f"the answer was cut off at the token limit (finish_reason \"length\"); raise "
                    f"PROVIDERS.{provider.name}.MAX_TOKENS for longer answers" if provider.max_tokens else
                    "the answer was cut off at the model's token limit (finish_reason \"length\")")
            return completion

    def _fail_over(self, cfg: Config, provider: ProviderSpec, tried: list[str], err: GatewayError) -> bool:
        """Switch this prompt to the next FAILOVER_ORDER provider after ``provider`` exhausted its
        retries (never on auth, bad request or overflow: another provider would not fix those)."""
        if self._failover_for is None:
            return False
        tried.append(provider.name)
        nxt = self._failover_for(cfg, tried)
        if nxt is None:
            return False
        self._fallback = nxt
        self._events.on_notice(f"provider {provider.name} failed after {self._retry.max_retries} retries ({err}); "
                               f"failing over to {nxt[0].name} ({nxt[0].model}), next in FAILOVER_ORDER")
        return True

    async def _execute(self, completion: Completion, loops: LoopDetector,
                       cfg: Config) -> tuple[list[dict[str, Any]], bool]:
        """The tool messages, and whether a result ends the prompt."""
        repeated = loops.is_repeat(completion.tool_calls)
        messages, ended = [], False
        for call in completion.tool_calls:
            if repeated:
                result = ToolResult(CORRECTION, is_error=True)
            else:
                result = await self._tools.call(call.name, call.arguments, cfg.tool_timeout)
            self._events.on_tool(call.name, call.arguments, result)
            ended = ended or result.ends_prompt
            message: dict[str, Any] = {"role": "tool", "tool_call_id": call.id, "content": result.content}
            if result.images:  # stored bounded with the message; sent as image parts (tool_images.py)
                message[IMAGES_KEY] = [{"mime": i.mime, "data": i.data} for i in result.images]
            messages.append(message)
        return messages, ended

    def _persist(self, turn: Turn, completion: Completion, tool_messages: list[dict[str, Any]]) -> None:
        # "" rather than null beside tool calls: OpenAI accepts both, llama.cpp's server rejects null.
        message: dict[str, Any] = {"role": "assistant", "content": completion.text}
        if completion.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in completion.tool_calls
            ]
        meta = {"turn": turn.index, "model": turn.model, "provider": turn.provider, **turn.meta}
        usage = completion.usage
        if usage.reported:
            meta["usage"] = {"in": usage.prompt_tokens, "out": usage.completion_tokens, "cost": usage.cost}
        else:  # unknown, not zero
            meta["usage"] = {"in": None, "out": None, "cost": None}
        message["meta"] = meta
        turn.stored.append(self.history.append(message))
        for m in tool_messages:
            turn.stored.append(self.history.append(m))
        self.history.sync()  # the turn is durable before the next one starts


# Failures that compaction may cure: compact once, then give up.
_OVERFLOW_LIKE = (ErrorKind.CONTEXT_OVERFLOW, ErrorKind.EMPTY_STREAM)


def _add_usage(result: PromptResult, completion: Completion) -> None:
    result.prompt_tokens += completion.usage.prompt_tokens
    result.completion_tokens += completion.usage.completion_tokens
    if result.cost is not None:
        result.cost = None if completion.usage.cost is None else result.cost + completion.usage.cost
