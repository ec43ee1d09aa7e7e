"""One count of a server's tools: `tmg doctor`, `tmg mcp` (and /mcp) and the chat agree, for the
real server-everything, which offers get-roots-list only to a client that declares roots."""

from __future__ import annotations

import asyncio
import io
import re

from tests.support.reference_servers import reference_server
from tmg.cli.doctor import _contact
from tmg.cli.mcp_cmd import _status_lines
from tmg.config.model import Config, McpServerConfig
from tmg.environment import Environment


def test_doctor_and_tmg_mcp_count_the_tools_a_chat_in_the_same_folder_gets(tmp_path):
    command, *args = reference_server("everything", "stdio")
    entry = McpServerConfig(name="everything", command=command, args=tuple(args), timeout=60)
    config = Config(mcp_servers={"everything": entry})
    envr = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={"TMG_HOME": str(tmp_path / "home")},
                       cwd=tmp_path)

    _, ((status, _item, detail),) = asyncio.run(_contact(config, [], [entry], envr.cwd))
    assert status == "ok", detail
    doctor = int(re.match(r"(\d+) tools", detail).group(1))
    (line,) = asyncio.run(_status_lines(config, envr))
    listed = int(re.search(r"ready, (\d+) tools", line).group(1))

    chat = _chat_tools(config, envr)
    assert doctor == listed == len(chat)
    assert "get-roots-list" in chat  # what made them differ: the doctor's client declared no roots


def _chat_tools(config: Config, envr: Environment) -> set[str]:
    """The server's tools as a chat's tool source lists them (their names as the server gave them)."""
    from tmg.mcp.server_set import McpToolServers

    async def listed() -> set[str]:
        servers = McpToolServers()
        tools = servers.for_session(config, envr.cwd, cwd=envr.cwd)
        servers.start()
        try:
            await tools.settle()
            return {name for server in tools.servers for name in server.tools}
        finally:
            await servers.aclose()

    return asyncio.run(listed())
