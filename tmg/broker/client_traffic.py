"""A WARM server's own traffic as its tmg client takes it through the broker (issue 24 item 8; the
broker's side is relay.py): the server's requests (roots, forms, pages to open, sampling) answered
as a direct connection answers them (tmg.mcp.callbacks, in wire form), its progress passed to the
call it is about, and its other notifications (tool list changes, log messages) noted.

Progress tokens are made unique across clients (the process, the connection, the request): the
broker routes a server's progress by its token alone.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Callable
from typing import Any

from tmg.mcp.callbacks import ServerRequests
from tmg.mcp.errors import SamplingDeclined

log = logging.getLogger("tmg.broker")
_connections = itertools.count(1)
# What a progress notification reports: progress, total (when known), a message (when sent).
Progressed = Callable[[float, "float | None", "str | None"], None]


class ServerTraffic(ServerRequests):
    """The server-to-client part of a connection through the broker (BrokerConnection)."""

    _progress: dict[str, Progressed]

    def _init_traffic(self) -> None:
        self.elicit = self.elicit_url = self.sample = None
        self.on_log = None
        self.tools_changed = False
        self._asking = False
        self._answered_at = float("-inf")
        self._progress = {}
        self._token_prefix = f"tmg-{os.getpid()}-{next(_connections)}-"
        self._tokens = itertools.count(1)

    def progress_token(self, on_progress: Progressed) -> str:
        """A token, unique across the broker's clients, whose progress goes to `on_progress` (until `ended`)."""
        token = f"{self._token_prefix}{next(self._tokens)}"
        self._progress[token] = on_progress
        return token

    def ended(self, token: str) -> None:
        self._progress.pop(token, None)

    def traffic_from_server(self, message: dict[str, Any]) -> None:
        """A request or notification the broker passed on from the server."""
        method = str(message.get("method"))
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if "id" in message:
            asyncio.get_running_loop().create_task(self._answer(message["id"], method, params))
        elif method == "notifications/progress":
            seen = self._progress.get(str(params.get("progressToken")))
            if seen is not None:
                seen(float(params.get("progress") or 0), params.get("total"), params.get("message"))
        else:
            self.notified(method, params)

    async def _answer(self, ident: Any, method: str, params: dict[str, Any]) -> None:
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        try:
            if method == "roots/list":
                answer["result"] = self.roots()
            elif method == "elicitation/create":
                answer["result"] = await self.elicitation(params)
            elif method == "sampling/createMessage":
                answer["result"] = await self.sampling(params)
            elif method == "ping":
                answer["result"] = {}
            else:
                answer["error"] = {"code": -32601, "message": f"not supported by tmg: {method}"}
        except SamplingDeclined as exc:
            answer["error"] = {"code": -1, "message": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the question failed here: the server hears so
            log.warning("answering %s for %s failed: %s", method, self.spec.name, exc)
            answer["error"] = {"code": -32603, "message": f"tmg could not answer it ({type(exc).__name__})"}
        self._send_line(answer)

    def _send_line(self, message: dict[str, Any]) -> None:
        raise NotImplementedError  # BrokerConnection's
