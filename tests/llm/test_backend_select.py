"""Backend choice, and the import set that keeps one-shots fast (no litellm, no openai)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.mock_llm import MockLLM, Text
from tmg.llm.gateway import ProviderSpec
from tmg.llm.litellm_backend import LiteLLMGateway
from tmg.llm.openai_compat import OpenAICompatGateway
from tmg.llm.select import backend_for, make_gateway

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("model", "api_base", "backend", "expected"),
    [
        ("openai/gpt-4o-mini", None, "auto", "native"),
        ("openai/llama3", "http://localhost:8000/v1", "auto", "native"),
        ("llama3", "http://localhost:11434/v1", "auto", "native"),
        ("gpt-4o-mini", None, "auto", "litellm"),  # no URL: litellm knows where it lives
        ("anthropic/claude-sonnet-4-5", None, "auto", "litellm"),
        ("openrouter/anthropic/claude-sonnet-4.5", None, "auto", "litellm"),
        ("gemini/gemini-2.5-flash", "https://proxy.example/v1", "auto", "litellm"),
        ("anthropic/claude-sonnet-4-5", None, "native", "native"),
        ("openai/gpt-4o-mini", None, "litellm", "litellm"),
    ],
)
def test_backend_choice(model: str, api_base: str | None, backend: str, expected: str) -> None:
    provider = ProviderSpec("p", model, api_base=api_base, backend=backend)
    assert backend_for(provider) == expected
    gateway_type = OpenAICompatGateway if expected == "native" else LiteLLMGateway
    assert isinstance(make_gateway(provider), gateway_type)


def test_unknown_backend_names_the_key() -> None:
    with pytest.raises(ValueError, match="PROVIDERS.p.BACKEND"):
        backend_for(ProviderSpec("p", "openai/x", backend="fast"))


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


_HEAVY = "sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai'))"


def test_native_path_never_imports_litellm_or_openai() -> None:
    """A whole native completion, priced, in a fresh interpreter: litellm and openai stay out."""
    with MockLLM() as llm:
        llm.enqueue(Text("fast", usage=(10, 2)))
        code = f"""
import asyncio, json, sys
import tmg.llm.select, tmg.llm.openai_compat
from tmg.llm.gateway import CompletionRequest, ProviderSpec
from tmg.llm.select import make_gateway
p = ProviderSpec("local", "openai/gpt-4o-mini", api_key="k", api_base={llm.url!r})
async def main():
    gw = make_gateway(p)
    c = await gw.complete(CompletionRequest(p, [{{"role": "user", "content": "q"}}]), lambda d: None)
    await gw.aclose()
    return c
c = asyncio.run(main())
print(json.dumps({{"text": c.text, "cost": c.usage.cost, "heavy": {_HEAVY}}}))
"""
        proc = _run_python(code)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["text"] == "fast" and out["cost"] > 0  # priced from the JSON map, not litellm
    assert out["heavy"] == []


def test_prewarm_imports_litellm_quietly_in_the_background() -> None:
    code = f"""
import sys
from tmg.llm.gateway import ProviderSpec
from tmg.llm.select import prewarm
native = prewarm(ProviderSpec("a", "openai/x"))
native.join()
before = {_HEAVY}
t = prewarm(ProviderSpec("b", "anthropic/claude-sonnet-4-5"))
assert prewarm(ProviderSpec("c", "gemini/gemini-2.5-flash")) is t  # one import, however many asks
t.join()
import litellm
print(before, litellm.suppress_debug_info)
"""
    proc = _run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[] True"  # nothing else on stdout: no "Provider List" lines


def test_a_picked_gateway_imports_its_backend_only_at_its_first_call() -> None:
    """The engine picks the gateway before it refines the context: a one-shot's memory recall
    then runs before the backend's import, not after it (and a bad BACKEND is still refused at
    the pick)."""
    with MockLLM() as llm:
        llm.enqueue(Text("later"))
        code = f"""
import asyncio, json, sys
from tmg.llm.gateway import CompletionRequest, ProviderSpec
from tmg.llm.select import DeferredGateway
p = ProviderSpec("local", "openai/m", api_key="k", api_base={llm.url!r})
gw = DeferredGateway(p)
picked = "httpx" in sys.modules
try:
    DeferredGateway(ProviderSpec("p", "openai/x", backend="fast"))
    refused = None
except ValueError as exc:
    refused = str(exc)
async def main():
    c = await gw.complete(CompletionRequest(p, [{{"role": "user", "content": "q"}}]), lambda d: None)
    await gw.aclose()
    return c.text
text = asyncio.run(main())
print(json.dumps({{"picked": picked, "refused": refused, "text": text}}))
"""
        proc = _run_python(code)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["picked"] is False and out["text"] == "later"
    assert "PROVIDERS.p.BACKEND" in out["refused"]


def test_import_now_imports_only_the_native_backend_and_never_waits_on_a_prewarm_thread() -> None:
    """A one-shot imports the native backend on its loop while its recall is out; litellm (seconds)
    is never imported that way, and a backend a prewarm thread is importing is left to it."""
    code = f"""
import sys, threading
from tmg.llm import select
from tmg.llm.gateway import ProviderSpec
select.import_now(ProviderSpec("b", "anthropic/claude-sonnet-4-5"))
heavy = {_HEAVY}
gate = threading.Event()
select._prewarmed["native"] = threading.Thread(target=gate.wait)  # a prewarm at it: not waited for
select.import_now(ProviderSpec("a", "openai/x"))
held = "tmg.llm.openai_compat" in sys.modules
del select._prewarmed["native"]
select.import_now(ProviderSpec("a", "openai/x"))
print(heavy, held, "tmg.llm.openai_compat" in sys.modules)
"""
    proc = _run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[] False True"
