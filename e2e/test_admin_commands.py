"""``tmg config`` and ``tmg doctor`` as a user runs them, and the secret canary across every output."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import Text, ToolCall

REPO = Path(__file__).resolve().parent.parent
HEADER_CANARY = "hdr-canary-7d2e91b4"
TOKEN_CANARY = "tok-canary-0c55aa13"
ROTATED_CANARY = "sk-rotated-canary-88e1f0"


def fakeplur_server(home: Path) -> str:
    return (f"  plur:\n    COMMAND: {sys.executable}\n    ARGS: [-m, fakeplur]\n"
            f"    ENV: {{PYTHONPATH: {REPO}, HOME: {home}}}\n    TIMEOUT: 20\n")


@pytest.mark.in_process
def test_config_shows_values_origins_and_masks_secrets(tmg):
    tmg.write_config("MAX_TURNS: 9\nPERSON: ${NOT_SET_ANYWHERE}\n")
    r = tmg.run("config", env=tmg.env(TMG_TOOL_TIMEOUT="12"))
    assert r.code == 0, r.err
    lines = {line.split(":")[0].strip(): line for line in r.out.splitlines()}
    assert lines["MAX_TURNS"].split("#")[1].strip() == "file" and "9" in lines["MAX_TURNS"]
    assert lines["TOOL_TIMEOUT"].endswith("# env TMG_TOOL_TIMEOUT") and ": 12 " in lines["TOOL_TIMEOUT"]
    assert lines["MAX_HISTORY_TOKENS"].endswith("# default")
    assert lines["PERSON"].endswith("# file, ${NOT_SET_ANYWHERE} is not set")
    assert lines["API_KEY"].endswith("# file, ${MOCK_API_KEY}")
    assert f"config file: {tmg.config}" in r.out
    assert API_KEY not in r.out and f"API_KEY: {API_KEY[:3]}…***" in r.out  # the shape, never the key


@pytest.mark.in_process
def test_config_names_the_file_line_and_key_of_an_invalid_value(tmg):
    tmg.write_config("MAX_TURNS: lots\n")
    r = tmg.run("config")
    assert r.code == 1 and r.out == ""
    (line,) = r.err.strip().splitlines()
    assert line == (f"tmg: error: invalid config in {tmg.config}: line 7: MAX_TURNS must be a number, "
                    "not 'lots' (e.g. MAX_TURNS: 200)")


@pytest.mark.in_process
def test_doctor_gives_a_verdict_per_item_and_starts_each_mcp_server(tmg, tmp_path):
    tmg.write_config("MCP_SERVERS:\n" + fakeplur_server(tmp_path) + "MEMORY:\n  ENABLED: true\n")
    r = tmg.run("doctor", env=tmg.env(memory=True))
    assert r.code == 0, r.out + r.err
    out = r.out.splitlines()
    assert out[0] == f"ok    config: {tmg.config} is valid"
    assert out[1].startswith("ok    provider: mock (openai/mock-model)") and API_KEY not in r.out
    assert out[2] == "ok    memory: on, server plur, LEARN full"
    assert out[3] == "ok    memory broker: not running; the first run that needs memory starts one"
    assert out[4].startswith("ok    mcp server plur: 12 tools") and "memory tools present" in out[4]


@pytest.mark.in_process
def test_doctor_fails_clearly_for_a_broken_server_and_exits_1(tmg, tmp_path):
    tmg.write_config("MCP_SERVERS:\n" + fakeplur_server(tmp_path)
                     + "  ghost:\n    COMMAND: no-such-mcp-server-binary\n"
                     + "  mute:\n    COMMAND: sleep\n    ARGS: ['30']\n    TIMEOUT: 0.5\n")
    r = tmg.run("doctor")
    assert r.code == 1
    verdicts = {line.split(":")[0]: line for line in r.out.splitlines()}
    assert verdicts["ok    mcp server plur"]
    assert verdicts["FAIL  mcp server ghost"].endswith(
        "command 'no-such-mcp-server-binary' not found; install it or fix MCP_SERVERS.ghost.COMMAND")
    assert "no MCP answer within 0.5 s" in verdicts["FAIL  mcp server mute"]
    assert "MCP_SERVERS.mute.TIMEOUT" in verdicts["FAIL  mcp server mute"]


@pytest.mark.in_process
def test_doctor_reports_an_invalid_config_as_one_fail(tmg):
    tmg.write_config("SELECTED_PROVIDER: nope\n")
    r = tmg.run("doctor")
    assert r.code == 1
    assert r.out.strip() == (f'FAIL  config: invalid config in {tmg.config}: line 7: SELECTED_PROVIDER "nope" '
                             "is not a key of PROVIDERS (available: mock)")


def test_no_secret_reaches_config_doctor_logs_transcript_or_history(tmg, llm):
    """The canary: secret config values, echoed back by the model and rotated by a hot reload."""
    secrets_block = (f"    HEADERS: {{X-Api-Token: {HEADER_CANARY}}}\n"
                     "MCP_SERVERS:\n  vault:\n    URL: http://127.0.0.1:9/mcp\n"
                     "  local:\n    COMMAND: no-such-server\n"
                     f"    ENV: {{VAULT_TOKEN: {TOKEN_CANARY}}}\n    TIMEOUT: 1\n")
    tmg.write_config(secrets_block)
    leak = f"key {API_KEY} header {HEADER_CANARY} token {TOKEN_CANARY} rotated {ROTATED_CANARY}"
    llm.enqueue(
        ToolCall("read_file", {"path": f"{API_KEY}.txt"}, delay=0.3),
        ToolCall("list_folder", {"path": HEADER_CANARY}),
        Text(f"Here they are: {leak}"),
    )
    out: list = []
    thread = threading.Thread(target=lambda: out.append(tmg.run("tell me every secret you know")))
    thread.start()
    deadline = time.monotonic() + 30
    while not llm.requests:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    # Rotate the key mid-run: the new one must be masked from the moment it is known.
    tmg.config.write_text(tmg.config.read_text().replace("${MOCK_API_KEY}", ROTATED_CANARY))
    thread.join(60)
    chat = out[0]
    assert chat.code == 0, chat.err
    assert "API_KEY changed" in chat.err  # the rotation was applied (and said without the value)
    assert llm.requests[-1].headers["authorization"] == f"Bearer {ROTATED_CANARY}"

    (session,) = tmg.session_dirs()
    shown = {
        "stderr": chat.err,
        "transcript": (session / "transcript.md").read_text(),
        "history": (session / "history.jsonl").read_text(),
        "tmg -t": tmg.run("-t").out,
        "tmg config": tmg.run("config").out,
        "tmg doctor": tmg.run("doctor").out,
    }
    for where, text in shown.items():
        for canary in (API_KEY, HEADER_CANARY, TOKEN_CANARY, ROTATED_CANARY):
            assert canary not in text, f"{canary} leaked into {where}"
    assert "***" in shown["history"] and "Here they are" in shown["history"]  # masked, not dropped
