"""A stdio MCP proxy in front of a real server that never answers one write.

    python e2e/swallow_proxy.py FLAG MARKER -- COMMAND ARGS...

Starts COMMAND and forwards MCP's stdio framing (one JSON-RPC message a line) both ways,
unchanged, except for the first `tools/call` whose arguments hold MARKER: that request is neither
forwarded nor answered (the server never sees it, its client never hears back), and its line is
written to FLAG. FLAG is created exclusively, so of every proxy started with the same FLAG (the
broker runs a reader and a writer of one spec) only one ever swallows anything: a later try of the
same write passes through and lands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading


def _claims(line: bytes, marker: str, flag: str) -> bool:
    """This line is the write to swallow, and no proxy swallowed one before (the flag is ours now)."""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return False
    if marker not in json.dumps((message.get("params") or {}).get("arguments")):
        return False
    try:
        fd = os.open(flag, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as file:
        file.write(line)
    return True


def main() -> None:
    flag, marker, dash, *command = sys.argv[1:]
    assert dash == "--" and command, __doc__
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None

    def back() -> None:  # the server's lines to the client, as they come
        for line in server.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    threading.Thread(target=back, daemon=True).start()
    for line in sys.stdin.buffer:
        if _claims(line, marker, flag):
            continue
        server.stdin.write(line)
        server.stdin.flush()
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
