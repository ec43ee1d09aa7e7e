"""The loopback redirect of an OAuth login (RFC 8252): tmg listens on 127.0.0.1 for the one request
the browser makes after the user approved, and takes its code and state."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/callback"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class LoopbackRedirect:
    """The redirect URI's listener: one request on 127.0.0.1:port, its code and state."""

    def __init__(self, port: int, server_name: str) -> None:
        self.port = port
        self.server_name = server_name
        self._server: asyncio.AbstractServer | None = None
        self._result: asyncio.Future[tuple[str | None, str | None, str | None]] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def listen(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", self.port)

    async def wait(self, bound: float) -> tuple[str | None, str | None, str | None]:
        """(code, state, iss) once the browser came back; raises OAuthFlowError on an error answer."""
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), bound)
        except asyncio.TimeoutError:
            from mcp.client.auth import OAuthFlowError

            raise OAuthFlowError(f"the login was not completed within {bound:g} s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass  # the headers: nothing in them matters
            parts = line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 else None
            if target is None or target.path != CALLBACK_PATH or self._result is None or self._result.done():
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            if "error" in query:
                from mcp.client.auth import OAuthFlowError

                reason = " ".join(f"{query['error']} {query.get('error_description', '')}".split())[:200]
                self._result.set_exception(OAuthFlowError(f"the authorization server refused the login ({reason})"))
                body = f"tmg: the login to {self.server_name} was refused ({reason}). You can close this tab."
            else:
                self._result.set_result((query.get("code"), query.get("state"), query.get("iss")))
                body = f"tmg: logged in to {self.server_name}. You can close this tab."
            data = body.encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         + f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
        except (asyncio.TimeoutError, OSError, UnicodeError):
            pass
        finally:
            try:
                await writer.drain()
                writer.close()
            except OSError:
                pass
