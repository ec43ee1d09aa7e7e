"""The Transformer protocol and the Pipeline that runs them in priority order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from tmg.config.model import Config
from tmg.llm.gateway import ProviderSpec

Message = dict[str, Any]
CANONICAL_LIMIT = 100


@dataclass
class TurnContext:
    """What a transformer sees and may change for one turn's Refining.

    ``messages`` is the working list; canonical transformers edit it in place.
    """

    messages: list[Message]
    config: Config
    prompt_id: int  # changes with each user prompt; a turn is one model call within it
    turn: int
    force_compact: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # turn metadata (e.g. injected memory ids)
    notices: list[str] = field(default_factory=list)  # shown on stderr and in the transcript
    # Text that rides with the latest user turn of this request only (the memory block): it is
    # added to the payload, never to the canonical history, so every earlier message and the
    # system message stay byte-identical from one prompt to the next (servers' prefix caches).
    riders: list[str] = field(default_factory=list)
    # What the request carries besides the messages, so the budget counts all of it.
    tools: list[dict[str, Any]] = field(default_factory=list)
    provider: ProviderSpec | None = None
    # The prompt as the user typed it: the latest user message less what was attached to it (the
    # MCP resources it named); "" when not known (then the latest user message is the prompt).
    prompt_text: str = ""
    # A summary the budget gatekeeper made this turn: the engine appends it to history.
    summary: Any = None
    # True when a stage replaced messages before the end (pruned tool outputs): later stages
    # must measure the list afresh, not only its new tail.
    rewritten: bool = False
    _persist: bool = False

    def request_persist(self) -> None:
        """Ask for the canonical result to replace the stored history."""
        self._persist = True

    @property
    def persist_requested(self) -> bool:
        return self._persist

    def ride_with_latest_user(self, text: str) -> None:
        """Send `text` with the latest user message, this request only (never stored)."""
        self.riders.append(text)

    def ride_before_latest_user(self, text: str) -> None:
        """Send `text` as a system message of its own right before the latest user message, this
        request only (never stored): context a model reads as context, not as part of the question."""
        self.riders.append(Brief(text))

    def latest_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return content_text(m)
        return ""


class Brief(str):
    """A rider that goes as a system message of its own before the latest user message."""


def with_riders(messages: list[Message], riders: Sequence[str]) -> list[Message]:
    """A copy of `messages` whose latest user message carries `riders` after its own text (and
    the `Brief` ones as a system message right before it).

    The message dict is replaced, never mutated (it is the stored history's own). After the
    text, so even the latest message shares its leading bytes with what the next prompt sends.
    """
    out = list(messages)
    index = next((i for i in range(len(out) - 1, -1, -1) if out[i].get("role") == "user"), None)
    if not riders or index is None:
        return out
    briefs = [r for r in riders if isinstance(r, Brief)]
    riders = [r for r in riders if not isinstance(r, Brief)]
    if briefs:
        out.insert(index, {"role": "system", "content": "\n\n".join(briefs)})
        index += 1
    if not riders:
        return out
    extra = "\n\n".join(riders)
    message = out[index]
    content = message.get("content")
    if isinstance(content, list):
        new_content: Any = [*content, {"type": "text", "text": extra}]
    else:
        text = content if isinstance(content, str) else ""
        new_content = f"{text.rstrip()}\n\n{extra}" if text.strip() else extra
    out[index] = {**message, "content": new_content}
    return out


def content_text(message: Message) -> str:
    """The plain text of a message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


class Transformer(Protocol):
    """One step of Refining. ``priority`` orders it; below 100 it is canonical.

    Replace message dicts rather than mutating them: they may be the stored history's own.
    """

    name: str
    priority: int

    async def apply(self, ctx: TurnContext) -> None: ...


@dataclass(frozen=True)
class RefinedContext:
    canonical: list[Message]  # what the store should hold if ``persist`` is set
    payload: list[Message]  # what is sent this turn
    persist: bool


class Pipeline:
    """Runs transformers in ascending priority; equal priorities are a start-up error."""

    def __init__(self, transformers: Sequence[Transformer]) -> None:
        ordered = sorted(transformers, key=lambda t: t.priority)
        for a, b in zip(ordered, ordered[1:]):
            if a.priority == b.priority:
                raise ValueError(
                    f"context transformers {a.name!r} and {b.name!r} share priority {a.priority}; "
                    "priorities must be distinct"
                )
        self.transformers = ordered

    def names(self) -> list[str]:
        return [f"{t.priority}:{t.name}" for t in self.transformers]

    async def run(self, ctx: TurnContext) -> RefinedContext:
        canonical: list[Message] | None = None
        for t in self.transformers:
            if t.priority >= CANONICAL_LIMIT and canonical is None:
                canonical = ctx.messages
                # Transient edits (riders included) never reach the store; later transformers
                # (pruner, validator) see and count what is really sent.
                ctx.messages = with_riders(canonical, ctx.riders)
            await t.apply(ctx)
        if canonical is None:
            canonical = ctx.messages
            ctx.messages = with_riders(canonical, ctx.riders)
        return RefinedContext(canonical=canonical, payload=ctx.messages, persist=ctx.persist_requested)
