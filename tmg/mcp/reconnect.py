"""How a tool server comes back when its connection drops: a URL server is started afresh at once,
then in the background with backoff, bounded (`RECONNECT_DELAYS_S`), and withdrawn after the
last attempt; one restart at a time. A part of McpToolServer (tmg.mcp.tool_server).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tmg.mcp.pool import State

# Seconds before each background attempt to reconnect a URL server whose connection dropped;
# after the last one the server is withdrawn (`/mcp reconnect NAME` tries again).
RECONNECT_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


class Reconnecting:
    """The reconnecting part of a tool server."""

    name: str
    state: State
    failure: str | None
    _conn: Any
    _warn: Callable[[str], None]
    _uris: list[str] | None
    _restart_lock: asyncio.Lock
    _reconnecting: asyncio.Task[None] | None

    async def reconnect(self, *, force: bool = False) -> bool:
        """Start the server afresh (a new session over a new transport); True once it is ready.

        One restart at a time: a call and the background retries share it. Without `force`, a
        server made ready meanwhile is left as it is."""
        async with self._restart_lock:
            if self.state == "closed" or self._conn is None:
                return False
            if self.state == "ready" and not force:
                return True
            if not self._conn.restartable:  # a WARM server's broker connection: the broker restarts it
                self.failure = "kept by the broker; `tmg memory stop` restarts the broker's servers"
                return False
            was = self.state
            try:
                await self._conn.restart()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - unreachable still: said by the caller
                self.failure = str(exc)
                if was == "ready":
                    self.state = "reconnecting"
                return False
            self.state, self.failure = "ready", None
            self._uris = None  # a new session may list other resources
            if was == "reconnecting":  # came back by itself (a `/mcp reconnect` says so on its own)
                self._warn(f"MCP server {self.name} is back; its tools are offered again")
            return True

    async def recover(self, reason: str) -> bool:
        """A URL server's connection dropped: say so once and reconnect at once (a restart is
        quick); if it is not back yet, keep trying in the background with backoff. True when back."""
        if self.state != "ready":
            return False
        self.state, self.failure = "reconnecting", reason
        self._warn(f"MCP server {self.name} lost its connection ({reason}); reconnecting")
        if await self.reconnect():
            return True
        self._reconnecting = asyncio.get_running_loop().create_task(
            self._keep_reconnecting(), name=f"mcp-reconnect:{self.name}")
        return False

    async def _keep_reconnecting(self) -> None:
        for delay in RECONNECT_DELAYS_S:
            await asyncio.sleep(delay)
            if self.state != "reconnecting" or await self.reconnect():
                return
        if self.state == "reconnecting":
            self.state = "withdrawn"
            self._warn(f"MCP server {self.name} did not come back after {len(RECONNECT_DELAYS_S)} attempts "
                       f"({self.failure}); its tools are withdrawn (/mcp reconnect {self.name} tries again)")
