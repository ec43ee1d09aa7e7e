"""``tmg doctor``'s verdict on an MCP server that never answers: the same on a busy machine as on
an idle one, and never an empty reason."""

from __future__ import annotations

import asyncio
import time

from tmg.cli.doctor import _contact, _why
from tmg.config.model import Config, McpServerConfig

MUTE = McpServerConfig(name="mute", command="sleep", args=("30",), timeout=0.5)


def test_a_server_that_never_answers_gets_the_same_verdict_when_the_sdk_import_is_slow(monkeypatch):
    """A busy machine: the SDK's first import takes longer than the server's whole bound."""
    import tmg.mcp.connection as connection

    real_import, cold = connection.import_sdk, [True]

    def slow_first_import() -> None:
        if cold:
            cold.clear()
            time.sleep(3.0)  # more than TIMEOUT + doctor's 2 s of slack
        real_import()

    monkeypatch.setattr(connection, "import_sdk", slow_first_import)
    config = Config(mcp_servers={"mute": MUTE})
    _, ((status, item, detail),) = asyncio.run(_contact(config, [], [MUTE]))
    assert (status, item) == ("FAIL", "mcp server mute")
    assert detail == ("no MCP answer within 0.5 s; check that MCP_SERVERS.mute starts an MCP server, "
                      "or raise MCP_SERVERS.mute.TIMEOUT")


def test_doctors_own_bound_firing_is_named_as_a_timeout_not_an_empty_reason():
    """asyncio's TimeoutError has an empty str(): it must still say what happened."""
    detail = _why(MUTE, "MCP_SERVERS.mute", TimeoutError(), "")
    assert detail.startswith("no MCP answer within 0.5 s;")


def test_an_error_with_an_empty_message_is_named_by_its_type():
    detail = _why(MUTE, "MCP_SERVERS.mute", ConnectionResetError(), "")
    assert detail == "did not start (ConnectionResetError); check MCP_SERVERS.mute"
    assert "()" not in _why(MUTE, "MCP_SERVERS.mute", RuntimeError("mute: "), "")


def test_the_server_level_verdict_names_the_step_it_waited_for():
    from tmg.mcp.connection import McpConnection
    from tmg.mcp.errors import McpStartTimeout
    from tmg.mcp.spec import spec_from_config

    async def start() -> BaseException:
        conn = McpConnection(spec_from_config(MUTE), start_timeout=0.5)
        try:
            await conn.start()
        except BaseException as exc:  # noqa: BLE001
            return exc
        finally:
            await conn.close()
        raise AssertionError("a mute server started")

    exc = asyncio.run(start())
    assert isinstance(exc, McpStartTimeout) and str(exc) == "mute: no answer to initialize within 0.5 s"


def test_a_password_inside_a_url_never_shows_in_a_verdict_and_a_short_one_is_named():
    import io

    from tmg.cli.doctor import _check_secrets, _Verdicts
    from tmg.config.loader import parse_config
    from tmg.environment import Environment

    out = io.StringIO()
    verdicts = _Verdicts(Environment(stdout=out))
    verdicts.say("ok", "provider", "local (openai/m) at http://me:pw@localhost:8080/v1, no API key")
    config, _ = parse_config({"MCP_SERVERS": {"db": {"COMMAND": "x", "ENV": {"DB": "postgres://u:PW@h/db"}}}}, {}, None)
    _check_secrets(config, verdicts)
    lines = out.getvalue().splitlines()
    assert lines[0] == "ok    provider: local (openai/m) at http://me:***@localhost:8080/v1, no API key"
    assert lines[1].startswith("warn  secrets: MCP_SERVERS.db.ENV.DB (the password in its URL) is shorter than 8")
