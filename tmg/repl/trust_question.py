"""The REPL's one question about an untrusted project folder, asked before the chat starts.

A one-shot never asks (SPEC §3); the REPL asks once per process, showing exactly what the
folder's tmg.yaml would run or where it would connect. "Not now" holds for the whole run
(``/new`` and ``/mode`` do not ask again) and behaves as a one-shot does.
"""

from __future__ import annotations

from pathlib import Path

from tmg.config.screen import Withheld
from tmg.environment import Environment

_YES = ("t", "trust", "y", "yes")


class TrustQuestion:
    def __init__(self, envr: Environment) -> None:
        self._envr = envr
        self.asked = False

    def __call__(self, source: Path, withheld: list[Withheld]) -> bool:
        if self.asked or self._envr.stdin is None:
            return False
        self.asked = True
        out = self._envr.stdout
        width = max(len(w.path) for w in withheld)
        out.write(f"{source} comes with this folder and you have not trusted it. It asks to:\n")
        for w in withheld:
            out.write(f"  {w.path.ljust(width)}  {w.detail}\n")
        out.write("Trust this folder? Its tmg.yaml may then run these commands and send your prompts and keys there.\n"
                  "[t] trust   [n] not now (the default: run without them): ")
        out.flush()
        answer = self._envr.stdin.readline()
        if not answer:
            out.write("\n")
        trusted = answer.strip().lower() in _YES
        if trusted:
            out.write(f"trusted {source.parent} (undo with: tmg trust --revoke {source.parent})\n")
        out.flush()
        return trusted
