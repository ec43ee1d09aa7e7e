"""A local OpenAI-compatible server on loopback, for a run with no provider configured.

The usual ports are asked at once (Ollama 11434, llama.cpp's server 8080, LM Studio 1234, vLLM 8000),
each ``GET /v1/models`` within PROBE_BOUND_S, all together within that bound: a port nobody listens
on refuses at once, so a machine without such a server pays a few milliseconds. The first port of
the list that answered with a model list wins, with its first model. Plain HTTP/1.0 over asyncio
streams: no HTTP client is imported (and none of its TLS set-up paid) for a probe that finds nothing.

``TMG_LOCAL_PROBE_PORTS`` (comma-separated; empty: probe nothing) replaces the list: for tests only,
so that they neither depend on nor disturb what listens on the real ports of the machine.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass

PROBE_BOUND_S = 0.2
DEFAULT_PORTS: tuple[tuple[int, str], ...] = ((11434, "Ollama"), (8080, "llama.cpp"), (1234, "LM Studio"),
                                              (8000, "vLLM"))
PORTS_ENV = "TMG_LOCAL_PROBE_PORTS"
_MAX_BODY = 1 << 20  # a model list is small; a server sending more is not one


@dataclass(frozen=True)
class LocalServer:
    port: int
    kind: str  # whose port it usually is ("Ollama"), or "local"
    model: str  # the first model it lists

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def name(self) -> str:
        """The provider name it is used under (what `/model`, the transcript and errors say)."""
        return {"Ollama": "ollama", "llama.cpp": "llama.cpp", "LM Studio": "lmstudio", "vLLM": "vllm"}.get(
            self.kind, "local")


def probe_ports(env: Mapping[str, str]) -> tuple[tuple[int, str], ...]:
    """The ports to ask: the usual ones, or TMG_LOCAL_PROBE_PORTS's (tests)."""
    raw = env.get(PORTS_ENV)
    if raw is None:
        return DEFAULT_PORTS
    kinds = dict(DEFAULT_PORTS)
    ports = []
    for part in raw.split(","):
        if part.strip().isdigit():
            port = int(part)
            ports.append((port, kinds.get(port, "local")))
    return tuple(ports)


_found: dict[tuple[tuple[int, str], ...], LocalServer] = {}  # what this process found, per port list


async def find_local_server(env: Mapping[str, str], bound: float = PROBE_BOUND_S) -> tuple[LocalServer | None, bool]:
    """The first of the ports that answers with a model list, and whether it is found anew (a REPL's
    /new finds it again without saying so twice). A probe that found nothing is tried again next time."""
    ports = probe_ports(env)
    if ports in _found:
        return _found[ports], False
    if not ports:
        return None, False
    answers = await asyncio.gather(*(_first_model(port, bound) for port, _kind in ports))
    for (port, kind), model in zip(ports, answers):
        if model:
            server = _found[ports] = LocalServer(port, kind, model)
            return server, True
    return None, False


async def _first_model(port: int, bound: float) -> str | None:
    try:
        return await asyncio.wait_for(_ask(port), bound)
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        return None  # not there, not in time, or not an OpenAI-compatible server: not this one


async def _ask(port: int) -> str | None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        # HTTP/1.0 and `Connection: close`: the answer comes with a length or ends with the
        # connection, never in chunks.
        writer.write(f"GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n"
                     "Authorization: Bearer local\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split()
        if len(status) < 2 or status[1] != "200":
            return None
        length = next((int(v) for k, _, v in (line.partition(":") for line in lines[1:])
                       if k.strip().lower() == "content-length" and v.strip().isdigit()), None)
        if length is not None and length > _MAX_BODY:
            return None
        if length is not None:
            body = await reader.readexactly(length)
        else:
            body = b""
            while len(body) < _MAX_BODY and (chunk := await reader.read(_MAX_BODY - len(body))):
                body += chunk
    finally:
        writer.close()
    data = json.loads(body.decode("utf-8"))
    models = data.get("data") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return None
    ids = [str(m["id"]) for m in models if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"].strip()]
    return ids[0] if ids else None
