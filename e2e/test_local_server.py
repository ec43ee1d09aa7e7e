"""No key, no config (issue 25 item 7): a one-shot is answered by a local OpenAI-compatible server
listening on loopback, found by probing the usual ports, said in one line; without one, the error
says what was looked for. The probe runs only when no provider is configured."""

from __future__ import annotations

import errno
import socket

import pytest

from e2e.mock_llm import MockLLM, Text
from tmg.llm.local_probe import DEFAULT_PORTS

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def no_config(tmg, **env: str) -> dict[str, str]:
    """tmg's environment with no config file and no provider key anywhere."""
    tmg.config.unlink(missing_ok=True)
    environment = tmg.env(**env)
    for name in ("TMG_CONFIG", "MOCK_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"):
        environment.pop(name, None)
    return environment


def test_a_one_shot_with_no_config_and_no_key_is_answered_by_a_local_server(tmg):
    with MockLLM(model_ids=("llama3.2:latest", "qwen2.5:7b")) as local:
        local.enqueue(Text("Hello from the local model."))
        env = no_config(tmg, TMG_LOCAL_PROBE_PORTS=f"{closed_port()},{local.port}")  # the first one refuses
        r = tmg.run("-r", "hi", env=env)
        assert r.code == 0, r.err
        assert r.out == "Hello from the local model.\n"
        assert local.requests[0]["model"] == "llama3.2:latest"  # the first model it lists
        (said,) = r.err.splitlines()
        assert said == (f"tmg: no provider is configured: using the OpenAI-compatible server on 127.0.0.1:{local.port} "
                        "(found on loopback), model llama3.2:latest; configure PROVIDERS to choose another "
                        "(tmg doctor checks them)")
        doctor = tmg.run("doctor", env=env)
        assert f"ok    provider: none configured: a chat uses the OpenAI-compatible server on 127.0.0.1:{local.port}" \
            in doctor.out


def test_a_real_default_port_is_probed(tmg):
    """On one of the ports a local server really uses: the first of them free on this machine. All
    four taken is a failure that says so, never a skip (another server there would answer instead)."""
    port = free_default_port()
    with MockLLM(port=port, model_ids=("local-model",)) as local:
        local.enqueue(Text("Answered on a default port."))
        env = no_config(tmg)
        env.pop("TMG_LOCAL_PROBE_PORTS")
        r = tmg.run("-r", "hi", env=env)
        assert r.code == 0, r.err
        assert r.out == "Answered on a default port.\n"
        assert f"127.0.0.1:{port} ({dict(DEFAULT_PORTS)[port]})" in r.err


def test_no_local_server_and_no_key_says_what_was_looked_for(tmg):
    r = tmg.run("-r", "hi", env=no_config(tmg, TMG_LOCAL_PROBE_PORTS=str(closed_port())))
    assert r.code == 1
    assert "No model provider is configured, and no local OpenAI-compatible server answered on 127.0.0.1" in r.err


def test_a_configured_provider_is_used_without_probing(tmg, llm):
    with MockLLM() as local:
        tmg.config.write_text(f"PROVIDERS:\n  mine:\n    MODEL: openai/mock-model\n    URL: {llm.url}\n")
        r = tmg.run("-r", "hi", env=tmg.env(TMG_LOCAL_PROBE_PORTS=str(local.port)))
        assert r.code == 0, r.err
        assert len(llm.requests) == 1 and local.requests == [] and r.err == ""  # URL, no API_KEY: it works
        assert "authorization" not in {k.lower() for k in llm.requests[0].headers}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_default_port() -> int:
    taken = []
    for port, kind in DEFAULT_PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                taken.append(f"{port} ({kind})")
    pytest.fail(f"every default local-server port is taken on this machine: {', '.join(taken)}; "
                "free one to run this test")
