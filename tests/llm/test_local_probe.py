"""The probe for a local OpenAI-compatible server: the usual ports at once within a bound, the first
of the list that answers with a model list, nothing imported for a probe that finds nothing."""

from __future__ import annotations

import asyncio
import socket
import threading

from e2e.mock_llm import MockLLM
from tmg.llm import local_probe
from tmg.llm.local_probe import DEFAULT_PORTS, find_local_server, probe_ports


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def silent_port() -> tuple[socket.socket, int]:
    """A port that accepts and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server, server.getsockname()[1]


def probe(ports: str, **kwargs):
    local_probe._found.clear()
    return asyncio.run(find_local_server({"TMG_LOCAL_PROBE_PORTS": ports}, **kwargs))


def test_the_ports_are_the_usual_ones_unless_a_test_names_others():
    assert [p for p, _ in probe_ports({})] == [11434, 8080, 1234, 8000]
    assert probe_ports({"TMG_LOCAL_PROBE_PORTS": "8080, 5, x"}) == ((8080, "llama.cpp"), (5, "local"))
    assert probe_ports({"TMG_LOCAL_PROBE_PORTS": ""}) == ()
    assert dict(DEFAULT_PORTS)[11434] == "Ollama"


def test_the_first_of_the_list_that_answers_wins_with_its_first_model():
    with MockLLM(model_ids=("second-a", "second-b")) as later, MockLLM(model_ids=("first",)) as earlier:
        ports = f"{closed_port()},{earlier.port},{later.port}"
        server, anew = probe(ports)
        assert (server.port, server.model, server.url, anew) == (earlier.port, "first", earlier.url, True)
        again, anew = asyncio.run(find_local_server({"TMG_LOCAL_PROBE_PORTS": ports}))
        assert (again, anew) == (server, False)  # the same process finds it without saying it twice


def test_a_silent_port_costs_the_bound_and_no_more(monkeypatch):
    listener, port = silent_port()
    try:
        import time

        start = time.monotonic()
        assert probe(str(port), bound=0.2) == (None, False)
        assert time.monotonic() - start < 5  # bounded (a generous ceiling: this is not a timing test)
    finally:
        listener.close()


def test_what_is_not_an_openai_compatible_model_list_is_not_a_server():
    replies = [b"HTTP/1.0 404 Not Found\r\n\r\n", b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello",
               b'HTTP/1.0 200 OK\r\n\r\n{"data": []}', b'HTTP/1.1 200 OK\r\nContent-Length: 32\r\n\r\n{"data": [{"id": "ok-model"}]}  ']
    found = []
    for reply in replies:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def serve(reply=reply, listener=listener):
            conn, _ = listener.accept()
            conn.recv(4096)
            conn.sendall(reply)
            if not reply.startswith(b"HTTP/1.1"):
                conn.close()  # HTTP/1.0: the end of the body; the 1.1 one keeps it open, with a length
            else:
                threading.Event().wait(1)
                conn.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        server, _anew = probe(str(listener.getsockname()[1]))
        found.append(server.model if server else None)
        listener.close()
    assert found == [None, None, None, "ok-model"]


def test_a_probe_that_finds_nothing_imports_no_http_client():
    import subprocess
    import sys

    code = ("import asyncio, sys; from tmg.llm.local_probe import find_local_server; "
            f"print(asyncio.run(find_local_server({{'TMG_LOCAL_PROBE_PORTS': '{closed_port()}'}})), "
            "'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "(None, False) False"
