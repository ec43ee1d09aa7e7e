"""How to reach one MCP server, and the environment its child process gets."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tmg.config.model import McpServerConfig

# The only variables a server inherits from tmg. Everything else (provider API keys above all)
# stays out: a server gets its declared ENV over this base, never tmg's whole environment.
BASE_ENV_KEYS: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "SYSTEMROOT",
)


def child_environment(
    declared: Mapping[str, str] | None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a server process: the minimal base, then the declared ENV over it.

    Args:
        declared: the server's ENV from config; wins over the base.
        base: where the base keys are read from (tests pass a dict; default `os.environ`).
    """
    source = os.environ if base is None else base
    env = {key: source[key] for key in BASE_ENV_KEYS if key in source}
    env.update({str(k): str(v) for k, v in (declared or {}).items()})
    return env


@dataclass(frozen=True)
class ServerSpec:
    """One entry of `MCP_SERVERS`: a stdio command, or a Streamable HTTP `url`.

    `errlog` is a file path for the server's stderr; None discards it (never the user's
    terminal). `env` is exactly the child's environment (see `child_environment`).
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # ENV may hold tokens: never in a repr
    cwd: str | None = None
    errlog: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # secrets: never in a repr
    # Folders the server is told it may work in (MCP roots): the working folder and ROOTS.
    roots: tuple[str, ...] = ()
    # SAMPLING: the client says at initialize that it takes sampling/createMessage requests.
    sampling: bool = False
    # The child's umask when tmg spawns it (a memory server's store is private); None: tmg's own.
    umask: int | None = None

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: set exactly one of COMMAND or URL")


def spec_from_config(entry: McpServerConfig, errlog: str | Path | None = None,
                     roots: tuple[str, ...] = ()) -> ServerSpec:
    """An `MCP_SERVERS` entry as a ServerSpec: the one mapping from config to a server to start.

    A stdio server gets its declared ENV over the minimal base (never tmg's own environment),
    its DIR as the working directory, and `errlog` for its stderr.
    """
    if entry.url:
        return ServerSpec(name=entry.name, url=entry.url, headers=dict(entry.headers), roots=roots,
                          sampling=entry.sampling)
    return ServerSpec(
        name=entry.name,
        command=entry.command,
        args=tuple(entry.args),
        env=child_environment(entry.env),
        cwd=entry.dir or None,
        errlog=str(errlog) if errlog else None,
        roots=roots,
        sampling=entry.sampling,
    )
