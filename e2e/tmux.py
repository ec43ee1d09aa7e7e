"""A real terminal for the interactive tests and benchmarks: one private tmux server per use.

Each :class:`Terminal` runs its own tmux server (``-L`` with a unique name, ``-f /dev/null``),
so tests never meet a user's tmux or each other, and the command inherits exactly the
environment given. The pane stays after the command exits (``remain-on-exit``), so its exit
status can be read. Screens are polled with a bounded wait; nothing sleeps blindly.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

_counter = itertools.count()


def flat(text: str) -> str:
    """`text` without whitespace, to find a line on screen however it wraps: tmux trims the blank
    at a wrap point, and where a line wraps moves with the length of the run's temporary paths."""
    return "".join(text.split())


PROMPT = r"^default · openai/mock-model >"  # the REPL's prompt line in the default mode


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


class Terminal:
    """A ``width`` x ``height`` terminal running ``command`` (started by :meth:`start`)."""

    def __init__(self, width: int = 100, height: int = 30) -> None:
        self.socket = f"tmg-{os.getpid()}-{next(_counter)}"
        self.name = "main"
        self.width = width
        self.height = height
        self.started = False

    def _tmux(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                              text=True, env=dict(env) if env is not None else None, timeout=10)
        if check and proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def start(self, command: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
        env = {**env, "TERM": "xterm-256color"}
        env.pop("TMUX", None)
        self._tmux("new-session", "-d", "-s", self.name, "-x", str(self.width), "-y", str(self.height),
                   "-c", str(cwd), *command, ";", "set-option", "-t", self.name, "remain-on-exit", "on", env=env)
        self.started = True

    def start_tmg(self, runner, *args: str, prompt: str = PROMPT, timeout: float = 20.0, cwd: Path | None = None,
                  **env) -> str:
        """Start the real `tmg` (with `args`) in this terminal, as `runner`'s user in its work folder
        (or `cwd`), with `env` over its environment; wait for `prompt` and return the screen."""
        from e2e.conftest import tmg_command

        environment = runner.env(LANG=os.environ.get("LANG") or "C.UTF-8", **env)
        self.start(tmg_command() + list(args), environment, cwd or runner.work)
        return self.wait_for(prompt, timeout)

    def ask(self, text: str) -> None:
        """Type a line and press Enter."""
        self.type(text)
        self.send("Enter")

    def send(self, *keys: str) -> None:
        """tmux key names: ``Enter``, ``C-c``, ``C-d``, ``Up``, ``M-Enter``..."""
        self._tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        """Type ``text`` literally (no key-name lookup)."""
        self._tmux("send-keys", "-t", self.name, "-l", text)

    def screen(self) -> str:
        """The visible screen (tmux strips trailing spaces)."""
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def scrollback(self) -> str:
        """Everything the terminal has shown, scrolled-off lines included."""
        return self._tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", self.name)

    def wait_for(self, what: str | re.Pattern | Callable[[str], bool], timeout: float = 20.0,
                 scrollback: bool = False) -> str:
        """Poll until the screen matches ``what`` (a regex, multiline, or a predicate); return it."""
        check = what if callable(what) else (lambda s, rx=re.compile(what, re.M): rx.search(s) is not None)
        deadline = time.monotonic() + timeout
        while True:
            text = self.scrollback() if scrollback else self.screen()
            if check(text):
                return text
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what!r}; the screen:\n{text}")
            time.sleep(0.02)

    def pane(self, fmt: str) -> str:
        return self._tmux("display-message", "-p", "-t", self.name, fmt).strip()

    def pid(self) -> int:
        return int(self.pane("#{pane_pid}"))

    def exit_status(self, timeout: float = 20.0) -> int:
        """Wait for the command to exit; its exit status."""
        deadline = time.monotonic() + timeout
        pid, server = self.pid(), int(self.pane("#{pid}"))
        while True:
            # tmux marks the pane dead a moment before it records the status.
            dead, status, sig = self.pane("#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}").split("|")
            if dead == "1" and (status or sig):
                return int(status) if status else 128 + int(sig)
            if _is_zombie(pid):
                # tmux 3.3a, polled by many clients, now and then misses the SIGCHLD of a pane's
                # exit and leaves it a zombie, "alive" forever; a repeated SIGCHLD makes it reap.
                os.kill(server, signal.SIGCHLD)
            if time.monotonic() >= deadline:
                raise AssertionError(f"the command did not exit within {timeout}s; the screen:\n{self.screen()}")
            time.sleep(0.02)

    def close(self) -> None:
        if self.started:
            socket_path = self._tmux("display-message", "-p", "#{socket_path}", check=False).strip()
            self._tmux("kill-server", check=False)
            if socket_path:  # tmux 3.3a leaves the socket file behind after kill-server
                Path(socket_path).unlink(missing_ok=True)
            self.started = False
