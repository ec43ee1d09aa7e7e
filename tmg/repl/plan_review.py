"""The model's plan put to the user (plan mode, exit_plan_mode), answered with one key:

    the model proposes this plan:
      ...
    [y] yes, go on (changes ask first)  [a] yes, accept edits  [e] edit it in $EDITOR  [c] change: tell the model  [n] no

An edited plan is shown again before it is approved. Ctrl-C or Ctrl-D is "no". Typeahead is
dropped first, as for a tool's consent: a key meant for something else approves nothing.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from typing import Callable

from tmg.environment import Environment
from tmg.repl.asking import drop_typeahead, printable, read_line
from tmg.tools.plan import PlanDecision

CHOICES = ("[y] yes, go on (changes ask first)  [a] yes, and accept edits  [e] edit it in $EDITOR  "
           "[c] change: tell the model what  [n] no, keep planning")


class PlanReviewPrompt:
    def __init__(self, envr: Environment, before: Callable[[], None] = lambda: None) -> None:
        self._envr = envr
        self._before = before  # settles the answer's live region and the waiting line

    async def __call__(self, plan: str) -> PlanDecision:
        self._before()
        drop_typeahead(self._envr)
        edited = False
        while True:
            self._show(plan, edited)
            key = ((await read_line("approve? [y/a/e/c/n] ")) or "").strip().lower()[:1]
            if key in ("y", "a"):
                return PlanDecision(True, "default" if key == "y" else "accept-edits", plan, edited)
            if key == "c":
                note = ((await read_line("what should change: ")) or "").strip()
                return PlanDecision(False, plan=plan, note=note)
            if key == "e":
                changed = await asyncio.to_thread(self._edit, plan)
                if changed is not None and changed.strip() and changed.strip() != plan:
                    plan, edited = changed.strip(), True
                continue
            return PlanDecision(False, plan=plan)

    def _show(self, plan: str, edited: bool) -> None:
        out = self._envr.stdout
        head = "your edited plan:" if edited else "the model proposes this plan:"
        body = "\n".join(f"  {printable(line)}" for line in plan.splitlines())
        out.write(f"\n{head}\n{body}\n{CHOICES}\n")
        out.flush()

    def _edit(self, plan: str) -> str | None:
        """The plan after the user's $VISUAL/$EDITOR (None: no editor, or it failed: said)."""
        env = self._envr.env
        editor = env.get("VISUAL") or env.get("EDITOR") or "vi"
        fd, path = tempfile.mkstemp(prefix="tmg-plan-", suffix=".md")  # 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(plan + "\n")
            try:
                done = subprocess.run([*shlex.split(editor), path], check=False)
            except (OSError, ValueError) as exc:
                self._envr.stderr.write(f"tmg: cannot start the editor {editor!r} ({exc}); set EDITOR\n")
                return None
            if done.returncode != 0:
                self._envr.stderr.write(f"tmg: the editor exited with {done.returncode}; the plan is unchanged\n")
                return None
            with open(path, encoding="utf-8") as f:
                return f.read()
        finally:
            os.unlink(path)
