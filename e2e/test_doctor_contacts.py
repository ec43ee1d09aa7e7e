"""``tmg doctor`` contacts each provider it would use, and leaves memory's server alone when memory
is off (issue 12, item 10)."""

from __future__ import annotations

import os
import socket

import pytest

from e2e.plur import FakePlur
from e2e.test_memory_shipped import stand_in_install

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_provider_fails_doctor_naming_the_url(tmg, llm, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"PROVIDERS:\n  local:\n    MODEL: openai/some-model\n    API_KEY: sk-local\n    URL: {url}\n")
    r = tmg.run("-c", str(cfg), "doctor")
    assert r.code == 1, r.out + r.err
    (line,) = [ln for ln in r.out.splitlines() if ln.startswith(("ok    provider", "FAIL  provider"))]
    assert line.startswith("FAIL  provider: local (openai/some-model)")
    assert f"cannot reach {url}/models" in line and "PROVIDERS.local.URL" in line


def test_a_reachable_provider_is_contacted_without_a_chat_request(tmg, llm):
    r = tmg.run("doctor")
    assert r.code == 0, r.out + r.err
    provider = r.out.splitlines()[1]
    assert provider.startswith("ok    provider: mock (openai/mock-model)")
    assert f"{llm.url}/models answered" in provider
    assert llm.requests == []  # no tokens spent


def test_each_failover_provider_is_contacted_too(tmg, llm):
    tmg.write_config(f"  spare:\n    MODEL: openai/other-model\n    URL: http://127.0.0.1:{closed_port()}/v1\n"
                     "FAILOVER_ORDER: [mock, spare]\n")
    r = tmg.run("doctor")
    assert r.code == 1, r.out + r.err
    verdicts = {line.split(":")[0]: line for line in r.out.splitlines()}
    assert verdicts["ok    provider"] and "it does not list mock-model (it lists mock)" in verdicts["ok    provider"]
    assert "cannot reach http://127.0.0.1:" in verdicts["FAIL  failover provider spare"]


def test_doctor_does_not_start_the_shipped_memory_server_when_memory_is_off(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    bin_dir, install, seen = stand_in_install(tmp_path, plur)
    env = tmg.env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", TMG_PLUR_DIR=str(install))
    r = tmg.run("doctor", env=env)
    assert r.code == 0, r.out + r.err
    assert "skip  mcp server plur: not started: it is the memory server and memory is off" in r.out
    assert not seen["argv"].exists()  # node was never run
