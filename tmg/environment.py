"""The process's terminal and environment, as one injectable object (the httpie pattern).

Every attribute may be overwritten by tests; nothing else in tmg reads sys.std* or os.environ
directly when it can take an Environment instead.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Mapping


def _isatty(stream: IO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):  # closed or detached stream
        return False


def debug_env(env: Mapping[str, str]) -> bool:
    """TMG_DEBUG set (not 0/false): what `--debug` sets too (a broker started then logs more)."""
    return env.get("TMG_DEBUG", "") not in ("", "0", "false")


@dataclass
class Environment:
    stdin: IO[str] | None = field(default_factory=lambda: sys.stdin)
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    cwd: Path = field(default_factory=Path.cwd)
    stdin_isatty: bool | None = None
    stdout_isatty: bool | None = None
    stderr_isatty: bool | None = None
    debug_flag: bool = False  # the command line's --debug: the same switch as TMG_DEBUG=1

    def __post_init__(self) -> None:
        if self.stdin_isatty is None:
            self.stdin_isatty = _isatty(self.stdin)
        if self.stdout_isatty is None:
            self.stdout_isatty = _isatty(self.stdout)
        if self.stderr_isatty is None:
            self.stderr_isatty = _isatty(self.stderr)

    @property
    def interactive(self) -> bool:
        """Both ends on a terminal: the only case where the REPL may start."""
        return bool(self.stdin_isatty and self.stdout_isatty)

    @property
    def no_color(self) -> bool:
        return bool(self.env.get("NO_COLOR"))

    @property
    def debug(self) -> bool:
        """Details on (tracebacks, memory's debug lines): `--debug` or TMG_DEBUG set (not 0/false)."""
        return self.debug_flag or debug_env(self.env)
