"""What a WARM tool server says to its clients through the broker (issue 24 item 8): its
notifications and its own requests, passed to the tmg client they are for, and the client's
answers passed back; and the client's requests beside tools (resources, prompts) passed to it.

A child serves every client bound to it, over one stdio pipe that says nothing of which client a
message is for, so the relay decides:
- `notifications/progress` goes to the client whose call carries that `progressToken` (clients
  make their tokens unique: tmg.broker.client_traffic);
- a server's request (`roots/list`, `elicitation/create`, `sampling/createMessage`) goes to the
  client with a request in flight to it (the latest), else to the client bound last; the answer
  goes back under the server's own id. With no client to ask it is refused, as before;
- `notifications/cancelled` for such a request goes to the client it was put to;
- `notifications/tools/list_changed` goes to every client at once (before the result of the call
  that changed the list, as the server sent it), and the child lists its tools again: a client's
  `tools/list` meanwhile waits for that list. The other list changes, a resource's update, an
  elicitation's completion and log messages (`notifications/message`: a client shows them under
  --debug only) go to every client too.
A memory child (PLUR) is initialized as before, advertising nothing: this is for tool servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Iterator
from typing import Any, Protocol

log = logging.getLogger("tmg.broker")

# A client's requests the broker passes to the child as they are (besides tools/call).
FORWARDED = frozenset({"resources/list", "resources/read", "resources/templates/list", "prompts/list",
                       "prompts/get", "completion/complete"})
_NO_CLIENT = -32601
_CLIENT_GONE = -32603


class Listener(Protocol):
    """A connected client as the relay reaches it (tmg.broker.daemon.ClientSession)."""

    def send(self, message: dict[str, Any]) -> None: ...

    @property
    def open(self) -> bool: ...


def capabilities(kind: str, sampling: bool) -> dict[str, Any]:
    """What the child tells its server it takes: a tool server's clients answer roots, forms and
    pages to open, and sampling where the spec enables it; a memory server is told nothing."""
    if kind != "tools":
        return {}
    taken: dict[str, Any] = {"roots": {"listChanged": False}, "elicitation": {"form": {}, "url": {}}}
    if sampling:
        taken["sampling"] = {}
    return taken


class Relay:
    """One child's traffic to and from its clients."""

    def __init__(self, send_to_server: Any, relist: Any) -> None:
        self._send_to_server = send_to_server  # (message) -> None: a line to the child's stdin
        self._relist = relist  # () -> awaitable: the child lists its tools again
        self._listeners: list[Listener] = []  # bound clients, the latest last
        self._calling: list[Listener] = []  # clients with a request in flight, the latest last
        self._tokens: dict[Any, Listener] = {}  # progressToken -> the client whose call carries it
        self._asked: dict[Any, tuple[Listener, str]] = {}  # the server's request id -> (client, id sent it)
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}  # id sent to a client -> its answer
        self._ids = itertools.count(1)
        self._relisting: asyncio.Task[None] | None = None

    def join(self, client: Listener) -> None:
        """A client bound itself to this child (its initialize)."""
        if client not in self._listeners:
            self._listeners.append(client)

    def leave(self, client: Listener) -> None:
        """A client went away: what was put to it is answered as unanswerable."""
        self._listeners = [c for c in self._listeners if c is not client]
        self._calling = [c for c in self._calling if c is not client]
        self._tokens = {t: c for t, c in self._tokens.items() if c is not client}
        for server_id, (asked, sent) in list(self._asked.items()):
            answer = self._answers.get(sent)
            if asked is client and answer is not None and not answer.done():
                answer.set_result({"error": {"code": _CLIENT_GONE, "message": "the tmg client went away"}})

    @contextlib.contextmanager
    def calling(self, client: Listener, params: dict[str, Any]) -> Iterator[None]:
        """While `client`'s request is in flight: the server's requests are put to it, and its
        progress reaches it."""
        token = (params.get("_meta") or {}).get("progressToken")
        self._calling.append(client)
        if token is not None:
            self._tokens[token] = client
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):
                self._calling.remove(client)
            if token is not None and self._tokens.get(token) is client:
                del self._tokens[token]

    def answered(self, message: dict[str, Any]) -> bool:
        """A client's answer to a request the relay put to it; False when it is not one."""
        answer = self._answers.get(str(message.get("id")))
        if answer is None or answer.done():
            return False
        answer.set_result(message)
        return True

    def from_server(self, message: dict[str, Any]) -> None:
        """A request or notification the child's server sent (not an answer to the broker)."""
        method = str(message.get("method"))
        if "id" in message:
            if method == "ping":
                self._send_to_server({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            else:
                asyncio.get_running_loop().create_task(self._ask(message))
            return
        params = message.get("params") or {}
        if method == "notifications/progress":
            self._tell(self._tokens.get(params.get("progressToken")), message)
        elif method == "notifications/cancelled":
            asked = self._asked.get(params.get("requestId"))
            if asked is not None:
                self._tell(asked[0], {**message, "params": {**params, "requestId": asked[1]}})
        elif method == "notifications/tools/list_changed":
            self._relisting = asyncio.get_running_loop().create_task(self._relist_tools())
            for client in self._live():
                client.send(message)
        else:  # list changes, a resource's update, an elicitation complete, log messages: everyone's
            for client in self._live():
                client.send(message)

    def _live(self) -> list[Listener]:
        return [c for c in self._listeners if c.open]

    def _target(self) -> Listener | None:
        """Who a server's request is put to: the client with a request in flight (the latest), else
        the client bound last."""
        calling = [c for c in self._calling if c.open]
        live = self._live()
        return calling[-1] if calling else (live[-1] if live else None)

    @staticmethod
    def _tell(client: Listener | None, message: dict[str, Any]) -> None:
        if client is not None and client.open:
            client.send(message)

    async def _ask(self, message: dict[str, Any]) -> None:
        """Put the server's request to a client and its answer back to the server."""
        server_id = message["id"]
        client = self._target()
        if client is None:
            self._send_to_server({"jsonrpc": "2.0", "id": server_id, "error": {
                "code": _NO_CLIENT, "message": "no tmg client is connected to answer it"}})
            return
        sent = f"broker-{next(self._ids)}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[sent], self._asked[server_id] = answer, (client, sent)
        try:
            client.send({**message, "id": sent})
            reply = await answer
        finally:
            self._answers.pop(sent, None)
            self._asked.pop(server_id, None)
        back = {"jsonrpc": "2.0", "id": server_id}
        back.update({"error": reply["error"]} if "error" in reply else {"result": reply.get("result") or {}})
        try:
            self._send_to_server(back)
        except Exception as exc:  # noqa: BLE001 - the server went away meanwhile: nothing to answer
            log.info("an answer for the server was dropped: %s", exc)

    async def tools_listed(self) -> None:
        """Once a listing the server's last change asked for is done (at once when there is none)."""
        if self._relisting is not None:
            await asyncio.shield(self._relisting)

    async def _relist_tools(self) -> None:
        try:
            await self._relist()
        except Exception as exc:  # noqa: BLE001 - the list kept stays
            log.warning("listing a server's tools again failed: %s", exc)
