"""P6 groundwork: CPU the gateway spends per streamed chunk, native vs litellm vs raw httpx.

The mock LLM runs as a separate process, so the CPU measured here (``time.process_time`` of
this process, all threads) is the client's alone. Each case streams a long answer (N chunks)
and a one-chunk answer; per chunk = (CPU long - CPU short) / (N - 1), per call = CPU short.
Cases run interleaved, every round in the same order, and medians are compared to raw httpx
(stream, split SSE lines, json.loads each chunk: the floor any client pays).

Run: python bench/gateway_overhead.py [--chunks 1000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmg.llm.gateway import CompletionRequest, ProviderSpec  # noqa: E402
from tmg.llm.litellm_backend import LiteLLMGateway, load_litellm  # noqa: E402
from tmg.llm.openai_compat import OpenAICompatGateway  # noqa: E402

MESSAGES = [{"role": "user", "content": "stream please"}]
Case = Callable[[], Awaitable[str]]


def _start_mock(tmp: str) -> tuple[subprocess.Popen[bytes], str]:
    port_file = os.path.join(tmp, "port")
    proc = subprocess.Popen([sys.executable, "-m", "e2e.mock_llm", "--port-file", port_file],
                            cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not os.path.exists(port_file):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("bench: the mock LLM did not start")
        time.sleep(0.02)
    return proc, f"http://127.0.0.1:{Path(port_file).read_text().strip()}/v1"


def _cases(url: str) -> dict[str, Case]:
    provider = ProviderSpec("mock", "openai/mock", api_key="k", api_base=url)
    request = CompletionRequest(provider, MESSAGES)
    native, lite = OpenAICompatGateway(provider), LiteLLMGateway(provider)
    client = httpx.AsyncClient()
    body = {"model": "mock", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}

    async def raw() -> str:
        parts = []
        async with client.stream("POST", url + "/chat/completions", json=body) as resp:
            async for line in resp.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    for choice in json.loads(line[6:])["choices"]:
                        parts.append(choice["delta"].get("content") or "")
        return "".join(parts)

    async def via(gateway: OpenAICompatGateway | LiteLLMGateway) -> str:
        return (await gateway.complete(request, lambda _: None)).text

    return {"raw httpx": raw, "native": lambda: via(native), "litellm": lambda: via(lite)}


async def _measure(case: Case, enqueue: Callable[[int], None], chunks: int) -> float:
    enqueue(chunks)
    await asyncio.sleep(0.05)  # let the previous case's leftovers (litellm's logging tasks) finish first
    start = time.process_time()
    text = await case()
    spent = time.process_time() - start
    assert len(text) == 4 * chunks, f"got {len(text)} characters, wanted {4 * chunks}"
    return spent


async def _run(url: str, chunks: int, rounds: int) -> None:
    control = httpx.Client(base_url=url.removesuffix("/v1"))

    def enqueue(n: int) -> None:
        # Distinct chunks: litellm aborts a stream that repeats one chunk about 100 times.
        text = "".join(f"{i % 10000:04d}" for i in range(n))
        control.post("/_mock/enqueue", json=[{"kind": "Text", "text": text, "chunks": n}])

    cases = _cases(url)
    for case in cases.values():  # warm up: imports, connections, litellm's first-call set-up
        await _measure(case, enqueue, 20)
    per_chunk: dict[str, list[float]] = {name: [] for name in cases}
    per_call: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, case in cases.items():
            short = await _measure(case, enqueue, 1)
            long = await _measure(case, enqueue, chunks)
            per_call[name].append(short)
            per_chunk[name].append((long - short) / (chunks - 1))
    floor_chunk, floor_call = statistics.median(per_chunk["raw httpx"]), statistics.median(per_call["raw httpx"])
    print(f"### Gateway CPU per streamed chunk ({chunks} chunks, {rounds} rounds, medians)\n")
    print("| client | CPU per chunk (ms) | ratio to raw httpx | CPU per short call (ms) | ratio |")
    print("|---|---|---|---|---|")
    for name in cases:
        chunk, call = statistics.median(per_chunk[name]), statistics.median(per_call[name])
        print(f"| {name} | {chunk * 1e3:.4f} | {chunk / floor_chunk:.2f}x | {call * 1e3:.2f} | {call / floor_call:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    load_litellm()
    with tempfile.TemporaryDirectory(prefix="tmg-bench-") as tmp:
        proc, url = _start_mock(tmp)
        try:
            asyncio.run(_run(url, args.chunks, args.rounds))
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
