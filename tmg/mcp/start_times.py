"""How long each MCP server took to start, remembered across runs (TMG_HOME/mcp-start-times.json),
so a one-shot waits as long as a server's start needs, and no longer (issue 15, item 1).

A server is known by a digest of what starts it (command, args, folder, environment, URL): the
file never holds a command line or an ENV value. The last few starts are kept; what a run
expects is the slowest of them, since a busy machine is when waiting matters.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from tmg.atomic_file import replace_file
from tmg.mcp.spec import ServerSpec

FILE_NAME = "mcp-start-times.json"
_KEEP = 5  # starts remembered per server
_MAX_SERVERS = 200  # the file stays small: the oldest servers are forgotten first


def spec_key(spec: ServerSpec) -> str:
    """A server's identity across runs, without what it is made of (an ENV may hold a secret)."""
    parts = [spec.command or "", *spec.args, spec.cwd or "", spec.url or "",
             *(f"{k}={v}" for k, v in sorted(spec.env.items()))]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


class StartTimes:
    """The remembered start times of the servers of one tmg home."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / FILE_NAME if home is not None else None
        self._times: dict[str, list[float]] | None = None

    def _load(self) -> dict[str, list[float]]:
        if self._times is None:
            self._times = {}
            if self.path is not None:
                with contextlib.suppress(OSError, ValueError):
                    data = json.loads(self.path.read_text())
                    if isinstance(data, dict):
                        self._times = {str(k): [float(x) for x in v][-_KEEP:] for k, v in data.items()
                                       if isinstance(v, list)}
        return self._times

    def expected(self, spec: ServerSpec) -> float | None:
        """The slowest of the server's remembered starts, in seconds; None if it never started here."""
        times = self._load().get(spec_key(spec))
        return max(times) if times else None

    def record(self, spec: ServerSpec, seconds: float) -> None:
        """Remember one start (written at once: a one-shot may end any moment)."""
        if self.path is None:
            return
        self._times = None  # another tmg may have written since
        times = self._load()
        key = spec_key(spec)
        times[key] = [*times.pop(key, []), round(seconds, 3)][-_KEEP:]  # popped: the newest goes last
        while len(times) > _MAX_SERVERS:
            times.pop(next(iter(times)))
        with contextlib.suppress(OSError):
            replace_file(self.path, json.dumps(times).encode(), private_folder=True)  # under TMG_HOME
