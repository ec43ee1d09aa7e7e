"""Choosing the gateway backend for a provider, and warming it up early.

``native`` (httpx, tens of milliseconds to import) serves OpenAI-compatible endpoints;
``litellm`` (seconds to import) serves everything else. This module imports neither backend
until asked, so the CLI's fast paths can import it freely.
"""

from __future__ import annotations

import threading

from tmg.llm.gateway import Completion, CompletionRequest, DeltaSink, ModelGateway, ProviderSpec

_prewarmed: dict[str, threading.Thread] = {}
_prewarm_lock = threading.Lock()


def backend_for(provider: ProviderSpec) -> str:
    """``native`` or ``litellm``, resolving ``backend="auto"`` from the model id.

    auto picks native for ``openai/...`` ids, and for ids without a provider prefix when a URL
    is set (a local or hosted OpenAI-compatible server); litellm for everything else.
    """
    if provider.backend in ("native", "litellm"):
        return provider.backend
    if provider.backend != "auto":
        raise ValueError(
            f"PROVIDERS.{provider.name}.BACKEND must be auto, native or litellm, not {provider.backend!r}"
        )
    model = provider.model
    if model.startswith("openai/") or ("/" not in model and provider.api_base):
        return "native"
    return "litellm"


def make_gateway(provider: ProviderSpec) -> ModelGateway:
    """A gateway for ``provider`` on the backend :func:`backend_for` picks."""
    if backend_for(provider) == "native":
        from tmg.llm.openai_compat import OpenAICompatGateway

        return OpenAICompatGateway(provider)
    from tmg.llm.litellm_backend import LiteLLMGateway

    return LiteLLMGateway(provider)


class DeferredGateway:
    """``provider``'s gateway, its backend imported at the first call rather than when it is chosen.

    The engine picks the gateway before it refines the context, where a one-shot with memory
    recalls. Importing the backend at the pick would put the whole import before the recall, or,
    with `prewarm` importing it on a thread (a cold memory start, the REPL), block the event loop
    on that import's module lock so that the memory server's start could not go on meanwhile.
    """

    def __init__(self, provider: ProviderSpec) -> None:
        backend_for(provider)  # a bad BACKEND is refused at the pick, as before
        self.provider = provider
        self._gateway: ModelGateway | None = None

    async def complete(self, request: CompletionRequest, on_text: DeltaSink) -> Completion:
        if self._gateway is None:
            self._gateway = make_gateway(self.provider)
        return await self._gateway.complete(request, on_text)

    async def aclose(self) -> None:
        if self._gateway is not None:
            await self._gateway.aclose()


def prewarm(provider: ProviderSpec) -> threading.Thread:
    """Import ``provider``'s backend in a daemon thread, so the first call does not wait for it.

    Call it while the user types. Importing litellm this way still takes the GIL in bursts
    (single stalls of about 200 ms on a small machine), which a prompt survives. Repeated calls
    for the same backend return the same thread; ``join()`` it to wait for the import.
    """
    backend = backend_for(provider)
    with _prewarm_lock:
        thread = _prewarmed.get(backend)
        if thread is None:
            thread = threading.Thread(target=_import, args=(backend,), name=f"tmg-prewarm-{backend}", daemon=True)
            _prewarmed[backend] = thread
            thread.start()
    return thread


def import_now(provider: ProviderSpec) -> None:
    """Import ``provider``'s backend on this thread when it is the native one (tens of ms), unless
    a `prewarm` thread is at it (waiting on its module lock would block this thread for the rest).
    litellm (seconds) is left to `prewarm`."""
    backend = backend_for(provider)
    with _prewarm_lock:
        if backend != "native" or backend in _prewarmed:
            return
    _import(backend)


def _import(backend: str) -> None:
    try:
        if backend == "native":
            import tmg.llm.openai_compat  # noqa: F401 - the import is the point
        else:
            from tmg.llm.litellm_backend import load_litellm

            load_litellm()
    except Exception:  # noqa: BLE001 - the real call will report the failure properly
        pass
