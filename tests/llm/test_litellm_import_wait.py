"""The first litellm call waits for a prewarm thread's import without blocking the event loop
(issue 12, item 15): Ctrl-C, the memory server's start and notices keep running meanwhile."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import pytest

from tmg.llm import litellm_backend
from tmg.llm.gateway import CompletionRequest, GatewayError, ProviderSpec


async def test_the_loop_runs_while_a_prewarm_thread_holds_the_import(monkeypatch) -> None:
    async def acompletion(**_kwargs):
        raise RuntimeError("the stand-in litellm answers nothing")

    monkeypatch.setattr(litellm_backend, "_litellm", None)
    held, loop_ran, seen = threading.Event(), threading.Event(), {}

    def prewarm() -> None:  # as select.prewarm's thread: holds the import lock while importing
        with litellm_backend._lock:
            held.set()
            seen["loop ran during the import"] = loop_ran.wait(10)
            litellm_backend._litellm = SimpleNamespace(acompletion=acompletion)

    thread = threading.Thread(target=prewarm, daemon=True)
    thread.start()
    held.wait()
    provider = ProviderSpec(name="anth", model="anthropic/claude-x", api_key="k")
    call = asyncio.create_task(litellm_backend.LiteLLMGateway(provider).complete(
        CompletionRequest(provider, [{"role": "user", "content": "hi"}]), lambda _t: None))
    await asyncio.sleep(0)  # the call starts and waits for the import
    loop_ran.set()  # reached only if that wait left the loop free
    with pytest.raises(GatewayError):
        await call
    thread.join()
    assert seen["loop ran during the import"]
