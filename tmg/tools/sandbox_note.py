"""What the sandbox stopped, read from a confined command's output: a note for the model.

A command that failed because of the sandbox looks, to the model, like any failing command: it
would retry, or tell the user that the disk is broken. The note says what was blocked (a write
outside the writable folders, a control file, the network), that it was the sandbox, and how the
user can allow it: this one command outside the sandbox (the shell tool's `unsandboxed`, which the
user is always asked about), or SANDBOX.WRITABLE / SANDBOX.NETWORK for good.
"""

from __future__ import annotations

import os
import re

from tmg.tools.sandbox import Confinement

_READ_ONLY = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)
# Root loses its capabilities in the sandbox: a file of another user it could write outside is not.
_DENIED = re.compile(r"permission denied|\bEACCES\b", re.IGNORECASE)
_NETWORK = re.compile(
    r"network is unreachable|\bENETUNREACH\b|temporary failure in name resolution|could not resolve host|"
    r"name or service not known|no address associated with hostname|nodename nor servname|\bEAI_AGAIN\b|"
    r"\bENOTFOUND\b|getaddrinfo|connection refused|\bECONNREFUSED\b|failed to establish a new connection|"
    r"could not connect to server|failed to connect to", re.IGNORECASE)
_QUOTED = re.compile(r"""['"`‘“]([^'"`‘’“”\s]+)['"`’”]""")


def sandbox_note(confinement: Confinement, output: str) -> str:
    """The note to add to a confined command's result, or "" when nothing in ``output`` points at
    the sandbox."""
    causes = []
    line = _first_line(_READ_ONLY, output) or (_first_line(_DENIED, output) if os.geteuid() == 0 else "")
    if line:
        causes.append(_write_cause(confinement, line))
    if not confinement.network and _NETWORK.search(output):
        causes.append("it has no network (SANDBOX.NETWORK is false): connections to any server, even one on "
                      "this machine's localhost, and name lookups fail")
    if "bwrap: " in output and not causes:
        said = _first_line(re.compile("bwrap: "), output).partition("bwrap: ")[2]
        causes.append(f"bubblewrap could not set the sandbox up ({said})")
    if not causes:
        return ""
    fixes = ["add the folder to SANDBOX.WRITABLE"] if line else []
    if any(c.startswith("it has no network") for c in causes):
        fixes.append("set SANDBOX.NETWORK: true")
    for_good = f"; for good, the user can {' or '.join(fixes)} in their config" if fixes else ""
    return ("\n[sandbox] This command ran in tmg's OS sandbox, and " + "; and ".join(causes) + ". That is the "
            "sandbox, not a fault of the command: tell the user what was blocked. To run this one command outside "
            "the sandbox, call shell again with \"unsandboxed\": true (the user is asked to allow it)"
            f"{for_good}.")


def _write_cause(confinement: Confinement, line: str) -> str:
    path = _path_in(line)
    path = os.path.realpath(os.path.join(confinement.cwd, path)) if path else ""
    where = f" ({path})" if path else ""
    if path and any(path == p or path.startswith(p.rstrip("/") + "/") for p in confinement.protected):
        return (f"it tried to change {path}, which the sandbox keeps read-only: git's hooks and config, tmg's config "
                "and its own folders stay the user's")
    folders = ", ".join(confinement.writable)
    return (f"it tried to write outside the folders it may write{where}: only {folders} and a private /tmp "
            "are writable there")


def _path_in(line: str) -> str:
    """The file an error line names: quoted (`touch: cannot touch 'x': ...`, Python's `...: 'x'`),
    else the part before the error (`bash: line 1: x: Read-only file system`)."""
    quoted = _QUOTED.search(line)
    if quoted:
        return quoted.group(1)
    parts = [part.strip() for part in line.split(": ")]
    at = next((i for i, part in enumerate(parts) if _READ_ONLY.search(part) or _DENIED.search(part)), 0)
    words = parts[at - 1].split() if at > 0 else []
    return words[-1] if words and (len(words) == 1 or "/" in words[-1]) else ""


def _first_line(pattern: re.Pattern[str], text: str) -> str:
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()
    return ""
