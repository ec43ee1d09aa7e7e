"""httpx, imported without the two parts of it tmg never uses.

Whenever they happen to be installed, ``import httpx`` also imports the HTTP/2 stack (httpcore
loads h2 and hpack, ~30 ms) and httpx's own command-line client (click, rich, pygments, ~40 ms):
every one-shot paid for both. tmg never asks for HTTP/2, so both are kept out of the import.
Nothing is lost: httpcore imports its HTTP/2 connection again when a client is made with
``http2=True``, and httpx checks for h2 at that moment too.

Use ``from tmg.llm.http import httpx`` wherever tmg imports httpx.
"""

from __future__ import annotations

import sys

# What ``import httpx`` may import and tmg does not need (quality.md P2').
_LEFT_OUT = ("h2", "httpx._main")


def _import_httpx():
    # Whatever is already imported (by the mcp SDK or litellm) stays as it is.
    # A None entry in sys.modules makes an import of that name fail with ImportError, which
    # httpx and httpcore both expect (they treat these parts as optional extras).
    blocked = [name for name in _LEFT_OUT if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import httpx
        import httpcore  # noqa: F401 - httpx imports it at the first client: it must be now
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return httpx


httpx = _import_httpx()
