"""glob and grep: find files by name and lines by regex under the roots, bounded, .gitignore respected.

grep runs ripgrep when `rg` is on PATH and a Python search otherwise; both yield the same
matches in the same format (`path:line:text`, sorted by path then line), so the model never
needs to know which ran. Binary files are skipped. A file that holds secrets by nature (.env,
keys; see tmg/permissions/sensitive.py) is skipped by a search of its folder: naming it as the path asks consent.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmg.permissions.action import ToolAction
from tmg.tools.content import SNIFF_BYTES, binary_kind
from tmg.tools.files import OUTPUT_BUDGET, RootGuard
from tmg.tools.registry import Tool, ToolResult
from tmg.tools.walk import Listing, files_under, glob_matcher

MAX_PATHS = 200          # glob lists at most this many paths
MAX_MATCHES = 200        # grep shows at most this many lines
MAX_COUNTED = 10_000     # past this many matching lines grep stops looking (and says "more than")
MATCH_CHARS = 300        # a matching line is cut here
_LINE_READ = 1 << 16


class GlobTool(Tool):
    name = "glob"
    description = (f"List files whose path matches a glob pattern ('*.py' matches names at any depth, "
                   f"'src/**/*.ts' paths), sorted, at most {MAX_PATHS}; .gitignore'd files are left out.")
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern"},
            "path": {"type": "string", "description": "Folder to search, relative; default '.'"},
        },
        "required": ["pattern"],
    }

    def __init__(self, guard: RootGuard) -> None:
        self._guard = guard

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        # Names only: a listing shows no file's content, so it is never `sensitive`.
        return self._guard.listing(self.name, str(arguments.get("path") or "."))

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        pattern = str(arguments.get("pattern") or "").strip()
        if not pattern:
            return ToolResult("error: give a pattern, e.g. '**/*.py'", is_error=True)
        try:
            base = self._guard.resolve(str(arguments.get("path") or "."))
            listing = await asyncio.to_thread(files_under, base)
        except (OSError, PermissionError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        matches = glob_matcher(pattern)
        found = [p for p in listing.files if matches(_relative(p, base))]
        if not found:
            return ToolResult(f"no files match {pattern!r}" + _capped_note(listing))
        lines = [_shown(p, self._guard) for p in found[:MAX_PATHS]]
        if len(found) > MAX_PATHS:
            lines.append(f"[{len(found) - MAX_PATHS} more paths not shown; narrow the pattern or the path]")
        return ToolResult("\n".join(lines) + _capped_note(listing))


@dataclass(frozen=True)
class Match:
    path: Path
    line: int
    text: str


@dataclass
class Found:
    matches: list[Match]
    more: bool = False        # MAX_COUNTED reached: there are more than len(matches)
    capped: bool = False      # the file walk stopped at its cap
    skipped_secret: int = 0   # files skipped because they hold secrets


class GrepTool(Tool):
    name = "grep"
    description = (f"Search file contents for a regular expression; prints path:line:text, sorted, "
                   f"at most {MAX_MATCHES} lines. .gitignore'd and binary files are skipped.")
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression"},
            "path": {"type": "string", "description": "File or folder to search, relative; default '.'"},
            "glob": {"type": "string", "description": "Only files matching this glob, e.g. '*.py'"},
            "ignore_case": {"type": "boolean"},
        },
        "required": ["pattern"],
    }

    def __init__(self, guard: RootGuard, ripgrep: str | None = None) -> None:
        self._guard = guard
        self._rg = ripgrep if ripgrep is not None else shutil.which("rg")  # "" forces the Python search

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        return self._guard.action(self.name, "read", str(arguments.get("path") or "."))

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        pattern = str(arguments.get("pattern") or "")
        if not pattern:
            return ToolResult("error: give a pattern (a regular expression)", is_error=True)
        ignore_case = bool(arguments.get("ignore_case"))
        only = str(arguments.get("glob") or "").strip() or None
        try:
            base = self._guard.resolve(str(arguments.get("path") or "."))
            if not base.exists():
                return ToolResult(f"error: {arguments.get('path')} does not exist", is_error=True)
            if self._rg:
                found = await _ripgrep(self._rg, pattern, base, only, ignore_case)
            else:
                regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
                found = await asyncio.to_thread(_python_grep, regex, base, only)
        except re.error as exc:
            return ToolResult(f"error: invalid regular expression: {exc}", is_error=True)
        except (OSError, PermissionError, ValueError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        found = self._without_secrets(found, base)
        return ToolResult(_format(found, pattern, base, self._guard))

    def _without_secrets(self, found: Found, base: Path) -> Found:
        """Matches in files that hold secrets, unless the search named them (and so asked)."""
        secret = self._guard.sensitive
        if secret is None or secret.reason(base):
            return found
        verdicts: dict[Path, bool] = {}
        for m in found.matches:
            if m.path not in verdicts:
                verdicts[m.path] = secret.reason(m.path) is not None
        found.matches = [m for m in found.matches if not verdicts[m.path]]
        found.skipped_secret += sum(verdicts.values())
        return found


def _python_grep(regex: re.Pattern[str], base: Path, only: str | None) -> Found:
    listing = files_under(base)
    wanted = glob_matcher(only) if only else None
    found = Found([], capped=listing.capped)
    for path in listing.files:
        if wanted is not None and path != base and not wanted(_relative(path, base)):
            continue
        try:
            with path.open("rb") as f:
                if binary_kind(path, f.read(SNIFF_BYTES)) is not None:
                    continue
                f.seek(0)
                number, fresh = 0, True
                while chunk := f.readline(_LINE_READ):
                    starts, fresh = fresh, chunk.endswith(b"\n")
                    if not starts:
                        continue
                    number += 1
                    text = chunk.decode("utf-8", errors="replace").rstrip("\r\n")
                    if regex.search(text):
                        found.matches.append(Match(path, number, text))
                        if len(found.matches) >= MAX_COUNTED:
                            found.more = True
                            return found
        except OSError:
            continue  # unreadable (permissions, vanished): as ripgrep, skip it
    return found


async def _ripgrep(rg: str, pattern: str, base: Path, only: str | None, ignore_case: bool) -> Found:
    # --no-messages: unreadable files are skipped quietly (as by the Python search); a bad regex still speaks.
    argv = [rg, "--json", "--hidden", "--no-messages", "--sort", "path", "--glob", "!.git", "--regexp", pattern]
    if ignore_case:
        argv.append("--ignore-case")
    if only and "/" not in only:  # rg's name-only globs mean what ours do; others are filtered below
        argv += ["--glob", only]
    argv += ["--", str(base)]
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                limit=1 << 24)  # one JSON line per match: minified code is long
    wanted = glob_matcher(only) if only else None
    found = Found([])
    binary: dict[Path, bool] = {}
    read_all = False
    assert proc.stdout is not None and proc.stderr is not None
    errors = asyncio.ensure_future(proc.stderr.read(1 << 16))  # read beside stdout: a full pipe would stall rg
    try:
        async for raw in proc.stdout:
            event = json.loads(raw)
            if event.get("type") != "match":
                continue
            data = event["data"]
            path = Path(_text(data["path"]))
            if wanted is not None and path != base and not wanted(_relative(path, base)):
                continue
            if path not in binary:  # the Python search's test, so both skip the same files
                binary[path] = await asyncio.to_thread(_is_binary, path)
            if binary[path]:
                continue
            found.matches.append(Match(path, int(data["line_number"]), _text(data["lines"]).rstrip("\r\n")))
            if len(found.matches) >= MAX_COUNTED:
                found.more = True
                break
        else:
            read_all = True
    finally:
        if not read_all and proc.returncode is None:  # enough found, or cancelled: rg stops here
            # os.kill, not proc.kill(): Popen.kill() polls first, reaping the child under asyncio's
            # watcher ("Unknown child process" on stderr). Unreaped, the pid is still rg's.
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        await proc.wait()
    message = (await errors).decode("utf-8", errors="replace")
    if "regex parse error" in message:  # an unreadable file is only skipped, as by the Python search
        raise re.error(" ".join(message.split()))
    return found


def _text(field: dict[str, Any]) -> str:
    if "text" in field:
        return field["text"]
    return base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return binary_kind(path, f.read(SNIFF_BYTES)) is not None
    except OSError:
        return True


def _format(found: Found, pattern: str, base: Path, guard: RootGuard) -> str:
    notes = []
    if found.skipped_secret:
        notes.append(f"[skipped {found.skipped_secret} file(s) that hold secrets (.env, keys); "
                     "name one as the path to search it]")
    if found.capped:
        notes.append("[the search stopped at its file limit; give a narrower path]")
    if not found.matches:
        return "\n".join([f"no matches for {pattern!r}", *notes])
    lines, used = [], 0
    found.matches.sort(key=lambda m: (m.path, m.line))
    for m in found.matches[:MAX_MATCHES]:
        text = m.text if len(m.text) <= MATCH_CHARS else m.text[:MATCH_CHARS] + " [line cut]"
        row = f"{_shown(m.path, guard)}:{m.line}:{text}"
        if lines and used + len(row) + 1 > OUTPUT_BUDGET:
            break
        lines.append(row)
        used += len(row) + 1
    rest = len(found.matches) - len(lines)
    if rest or found.more:
        count = f"more than {rest}" if found.more else str(rest)
        lines.append(f"[{count} more matching lines not shown; narrow the pattern, the path or the glob]")
    return "\n".join(lines + notes)


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.name


def _shown(path: Path, guard: RootGuard) -> str:
    """A path as the model should write it back: relative to the working directory when under it."""
    try:
        return path.relative_to(guard.roots[0]).as_posix()
    except ValueError:
        return str(path)


def _capped_note(listing: Listing) -> str:
    return "\n[the search stopped at its file limit; give a narrower path]" if listing.capped else ""
