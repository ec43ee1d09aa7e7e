"""The echo test server over Streamable HTTP: `python tests/support/http_mcp_server.py PORT [--token T]`.

Its tools are those of `echo_mcp_server.py`. With `--token`, every request must carry
`Authorization: Bearer T`, else it is answered 401 (as an auth-protected server does).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from echo_mcp_server import server  # noqa: E402


def app_with_token(app, token: str | None):
    if token is None:
        return app

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer error="invalid_token"')]})
                await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
                return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--token")
    args = parser.parse_args()
    app = app_with_token(server.streamable_http_app(), args.token)
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on")
    uvicorn_server = uvicorn.Server(config)
    uvicorn_server.run()


if __name__ == "__main__":
    main()
