"""The seam between the phase engine and a model provider.

The engine only sees :class:`ModelGateway`. Backends (the native OpenAI-compatible one over
httpx, and litellm for everything else) live beside this module and are imported lazily:
importing this module must stay cheap, because the CLI's fast paths import it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol


@dataclass(frozen=True)
class ProviderSpec:
    """One resolved entry of PROVIDERS, ready to call.

    ``api_key`` and ``headers`` are secrets: never log or persist them.
    """

    name: str
    model: str
    api_key: str | None = None
    api_base: str | None = None
    max_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    backend: str = "auto"  # auto | native | litellm
    first_byte_timeout: float = 60.0  # seconds from the request to the provider's first byte
    stream_idle_timeout: float = 120.0  # seconds the stream may stay silent between two pieces
    images: bool | None = None  # takes image input (PROVIDERS.x.IMAGES); None: litellm's model map says
    context_window: int | None = None  # tokens the model takes in, when the config says

    def __repr__(self) -> str:  # keep secrets out of tracebacks and debug logs
        return f"ProviderSpec(name={self.name!r}, model={self.model!r}, api_base={self.api_base!r})"


@dataclass(frozen=True)
class CompletionRequest:
    provider: ProviderSpec
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)  # OpenAI "function" tool schemas
    timeout: float = 120.0  # seconds the provider may stay silent between two streamed pieces
    first_byte_timeout: float | None = None  # seconds until its first byte; None: ``timeout``

    @property
    def first_byte_wait(self) -> float:
        return self.timeout if self.first_byte_timeout is None else self.first_byte_timeout


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for; ``arguments`` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # None: the model is not priced
    # False: the provider sent no usage (llama.cpp's server never does); the zeros are unknowns.
    reported: bool = True


@dataclass(frozen=True)
class Completion:
    text: str
    tool_calls: list[ToolCallRequest]
    usage: Usage
    finish_reason: str | None = None

    @property
    def is_empty(self) -> bool:
        return not self.text.strip() and not self.tool_calls


class ErrorKind(enum.Enum):
    TRANSIENT = "transient"  # 5xx, connection reset, timeout: retry with backoff
    RATE_LIMIT = "rate_limit"  # 429: retry with backoff (honouring Retry-After)
    AUTH = "auth"  # 401/403: never retry
    CONTEXT_OVERFLOW = "context_overflow"  # prompt too long: compact once, then give up
    # A 200 whose stream carried no event at all: llama.cpp's server answers a prompt longer than
    # its window this way when streaming. Overflow-like: compact once, then give up (no retries).
    EMPTY_STREAM = "empty_stream"
    TERMINAL = "terminal"  # anything else: fail the prompt


class GatewayError(Exception):
    """A classified provider failure. ``str(err)`` is a user-facing sentence."""

    exit_code = 1  # a runtime failure (SPEC §1), as for a TmgError

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        stalled: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.stalled = stalled  # the provider went silent: retried only as RetryPolicy.stall_retries says

    @property
    def retryable(self) -> bool:
        return self.kind in (ErrorKind.TRANSIENT, ErrorKind.RATE_LIMIT)


DeltaSink = Callable[[str], None]


class ModelGateway(Protocol):
    """Streams one completion. Cancelling the awaiting task closes the HTTP stream."""

    async def complete(self, request: CompletionRequest, on_text: DeltaSink) -> Completion:
        """Stream ``request``; call ``on_text`` with each text delta; return the whole message.

        Raises:
            GatewayError: every provider failure, classified.
        """
        ...

    async def aclose(self) -> None: ...
