"""`python -m tmg.broker`: one broker per runtime folder and code version (a second one started
in a race steps aside), its log kept bounded, its pid file written for `tmg memory stop`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import logging
import logging.handlers
import os
import socket
import sys
import time
from pathlib import Path

from tmg.broker.daemon import Broker, log
from tmg.broker.paths import broker_file, fingerprint, private_dir, socket_path
from tmg.mcp.errlog import LOG_BYTES


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tmg.broker")
    parser.add_argument("--dir", required=True, help="the private runtime folder")
    parser.add_argument("--idle", type=float, default=900.0)
    parser.add_argument("--log", help="the broker's log file")
    parser.add_argument("--debug", action="store_true", help="log every forwarded call's time")
    args = parser.parse_args(argv)
    folder = private_dir(Path(args.dir))
    if args.log:
        Path(args.log).parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(args.log, maxBytes=LOG_BYTES, backupCount=1)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.DEBUG if args.debug else logging.INFO)
    # One broker per folder and version: a second one started in a race steps aside at once.
    lock = open(broker_file(folder, "lock"), "a")  # noqa: SIM115 - held for the process's life
    deadline = time.monotonic() + 5.0
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            # Another broker holds it: a live one serves (we leave), a stale one is exiting (we wait).
            if _answers(socket_path(folder)) or time.monotonic() > deadline:
                return
            time.sleep(0.05)
    pid_file = broker_file(folder, "pid")
    pid_file.write_text(str(os.getpid()))
    try:
        asyncio.run(Broker(folder, args.idle).serve())
    finally:
        with contextlib.suppress(OSError):
            if pid_file.read_text() == str(os.getpid()):
                pid_file.unlink()
    os._exit(0)


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    else:
        probe.sendall(b'{"jsonrpc":"2.0","id":1,"method":"tmg/status"}\n')
        probe.settimeout(1.0)
        try:
            data = probe.recv(65536)
        except OSError:
            return False
        return b'"fingerprint"' in data and fingerprint().encode() in data
    finally:
        probe.close()
