"""Fault suite: a corpus of malformed configs through the real ``tmg`` (issue 9).

Every case is run as a one-shot and, where the config itself is the fault, as ``tmg config`` and
``tmg doctor``. Each must end with exit 1 or 2 (0 for a mere warning), no traceback, and ONE
clear line. "Clear" is checked mechanically (see :func:`unclear`): one line; it names the place
(the config file, a key path such as ``PROVIDERS.mock.URL``, or ``argument N``); it says what to
do (a fix verb: set, fix, remove, use, ...); and it is not an internal error.

The runs are in-process (tests/support/cli.py: ``tmg.cli.main`` with the environment, cwd and
stdin a process would have), one after another: what is checked is the exit code and the lines
the user reads, which a real process adds nothing to, so the corpus costs a few seconds, not
~0.65 s of interpreter and imports per run. The figures for BENCHMARKS.md: ``pytest e2e/test_faults_config.py
-q -s`` prints ``config corpus: N configs tried, T tracebacks, U unclear messages``.

Unreadable files: the tests run as root, who reads a ``chmod 000`` file; so the unreadable case
is a ``chmod 000`` file when not root and, always, a symlink to ``/proc/self/mem`` (reading it
fails with EIO for anyone) and a dangling symlink.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from e2e.conftest import API_KEY, TmgRunner
from e2e.mock_llm import MockLLM, Text, ToolCall
from tests.support.cli import RunTimedOut, run_tmg
from tmg.config.schema import SCHEMA

URL = "http://127.0.0.1:9/v1"  # never reached: every case fails before a request
BASE = f"PROVIDERS:\n  mock:\n    MODEL: openai/mock-model\n    API_KEY: sk-local-key\n    URL: {URL}\n"


def _provider(**keys: str) -> str:
    """The base provider with some keys replaced (a value of "" drops the key)."""
    entries = {"MODEL": "openai/mock-model", "API_KEY": "sk-local-key", "URL": URL, **keys}
    return "PROVIDERS:\n  mock:\n" + "".join(f"    {k}: {v}\n" for k, v in entries.items() if v != "")


def _bomb(levels: int = 9, width: int = 10) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return BASE + "\n".join(lines) + f"\nPERSON: *a{levels - 1}\n"


@dataclass
class Case:
    name: str
    content: str | bytes | None = None  # written to the config file
    make: Callable[[Path], None] | None = None  # or: make the odd thing at the config path
    args: tuple[str, ...] = ("hi",)  # the one-shot's arguments
    env: dict[str, str] = field(default_factory=dict)
    commands: tuple[str, ...] = ("oneshot",)
    says: tuple[str, ...] = ()  # what the line must contain, beyond the generic checks
    warn_only: bool = False  # a warning, not an error: `tmg config` exits 0 and says it once
    usage: bool = False  # exit 2


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _unreadable(path: Path) -> None:
    if os.geteuid() == 0:  # root reads a chmod 000 file: use a file no one can read instead
        path.symlink_to("/proc/self/mem")
    else:
        path.write_text(BASE)
        path.chmod(0)


def _proc_mem(path: Path) -> None:
    path.symlink_to("/proc/self/mem")


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "no-such-target.yaml")


def _endless(path: Path) -> None:
    path.symlink_to("/dev/zero")  # a character device: refused before any read


FILE_LEVEL = ("oneshot", "config", "doctor")

CASES = [
    # defect 3: an unset ${VAR} must not turn into the default endpoint (or another default)
    Case("url-unset-var", _provider(URL="${UNSET_URL_VAR}"), commands=FILE_LEVEL,
         says=("PROVIDERS.mock.URL", "${UNSET_URL_VAR} is not set")),
    Case("url-partly-unset", _provider(URL="http://${UNSET_HOST_VAR}:8080/v1"),
         says=("PROVIDERS.mock.URL", "no host", "UNSET_HOST_VAR")),
    Case("model-unset-var", _provider(MODEL="${UNSET_MODEL_VAR}"), says=("PROVIDERS.mock.MODEL", "UNSET_MODEL_VAR")),
    Case("selected-provider-unset", BASE + "SELECTED_PROVIDER: ${UNSET_SEL_VAR}\n",
         says=("SELECTED_PROVIDER", "UNSET_SEL_VAR")),
    Case("mcp-command-unset", BASE + "MCP_SERVERS:\n  tool:\n    COMMAND: ${UNSET_CMD_VAR}\n",
         says=("MCP_SERVERS.tool.COMMAND", "UNSET_CMD_VAR")),
    Case("mcp-url-unset", BASE + "MCP_SERVERS:\n  web:\n    URL: ${UNSET_MCP_URL}\n",
         says=("MCP_SERVERS.web.URL", "UNSET_MCP_URL")),
    # defect 7: URLs
    Case("url-port-out-of-range", _provider(URL="http://127.0.0.1:99999/v1"), commands=FILE_LEVEL,
         says=("PROVIDERS.mock.URL", "port", "65535")),
    Case("url-port-zero", _provider(URL="http://localhost:0/v1"), says=("PROVIDERS.mock.URL", "port")),
    Case("url-port-not-a-number", _provider(URL="http://localhost:abc/v1"), says=("PROVIDERS.mock.URL", "port")),
    Case("url-no-scheme", _provider(URL="localhost:11434/v1"), says=("PROVIDERS.mock.URL", "http://")),
    Case("url-ftp", _provider(URL="ftp://example.com/v1"), says=("PROVIDERS.mock.URL", "http://")),
    Case("url-no-host", _provider(URL="http:///v1"), says=("PROVIDERS.mock.URL", "host")),
    Case("url-with-space", _provider(URL='"http://local host/v1"'), says=("PROVIDERS.mock.URL", "spaces")),
    Case("url-a-list", _provider(URL="[http://a/v1]"), says=("PROVIDERS.mock.URL", "URL string")),
    Case("mcp-url-port", BASE + "MCP_SERVERS:\n  web:\n    URL: http://127.0.0.1:70000/mcp\n",
         says=("MCP_SERVERS.web.URL", "port")),
    # defect 7: the command line
    Case("argv-not-utf8", BASE, args=("caf\udce9",), usage=True, commands=("oneshot",),
         says=("argument 3", "UTF-8")),  # after -c PATH
    Case("argv-option-not-utf8", BASE, args=("--mode", "\udcff", "hi"), usage=True, commands=("oneshot",),
         says=("argument 4", "UTF-8")),
    # defect 7 and 6: YAML that would hang or crash
    Case("alias-bomb", _bomb(), commands=FILE_LEVEL, says=("alias",)),
    Case("alias-loop", BASE + "PERSON: &a [*a]\n", says=("PERSON",)),
    Case("deep-nesting", BASE + "PERSON: " + "[" * 5000 + "\n", says=("nested more than 64 deep",)),
    Case("int-too-long-for-python", BASE + "MAX_TURNS: " + "9" * 5000 + "\n", says=("cannot read a value",)),
    # defect 6: not a regular file, unbounded, unreadable
    Case("fifo", make=_fifo, commands=FILE_LEVEL, says=("FIFO", "not a regular file")),
    Case("directory", make=_directory, commands=FILE_LEVEL, says=("directory", "not a regular file")),
    Case("unreadable", make=_unreadable, commands=FILE_LEVEL, says=("cannot read config file",)),
    Case("proc-self-mem", make=_proc_mem, says=("cannot read config file",)),
    Case("dangling-symlink", make=_dangling, commands=FILE_LEVEL, says=("does not exist",)),
    Case("dev-zero", make=_endless, says=("character device",)),
    Case("larger-than-1-mb", commands=FILE_LEVEL, content=BASE + "PERSON: " + "x" * (1 << 20) + "\n", says=("larger than 1 MB",)),
    Case("missing-file", make=lambda p: None, says=("does not exist",)),
    # encodings
    Case("not-utf8-bytes", BASE.encode() + b"PERSON: caf\xe9\n", commands=FILE_LEVEL, says=("line 6", "UTF-8")),
    Case("utf16-file", BASE.encode("utf-16"), says=("UTF-8",)),
    Case("nul-bytes", BASE.encode() + b"PERSON: a\x00b\n", says=("line 6",)),
    # YAML syntax
    Case("unclosed-bracket", BASE + "MAX_TURNS: [1, 2\n", commands=FILE_LEVEL, says=("YAML",)),
    Case("tab-indent", BASE + "MEMORY:\n\tLEARN: off\n", says=("YAML",)),
    Case("bad-indent", BASE + "MEMORY:\n  LEARN: off\n INJECT_BUDGET: 3\n", says=("YAML",)),
    Case("unterminated-quote", BASE + 'PERSON: "open\n', says=("YAML",)),
    Case("mapping-in-scalar", BASE + "PERSON: a: b: c\n", says=("YAML",)),
    Case("undefined-alias", BASE + "PERSON: *nowhere\n", says=("YAML",)),
    Case("top-level-list", "- a\n- b\n", says=("top level",)),
    Case("top-level-scalar", "just some text\n", says=("top level",)),
    Case("bad-timestamp", BASE + "PERSON: 2001-13-45\n", says=("cannot read a value",)),
    # wrong types
    Case("max-turns-text", BASE + "MAX_TURNS: many\n", commands=FILE_LEVEL, says=("MAX_TURNS", "number")),
    Case("max-turns-list", BASE + "MAX_TURNS: [1]\n", says=("MAX_TURNS",)),
    Case("providers-a-list", "PROVIDERS: [a, b]\n", says=("PROVIDERS",)),
    Case("provider-a-string", "PROVIDERS:\n  mock: just-a-model\n", says=("PROVIDERS.mock",)),
    Case("api-key-a-list", _provider(API_KEY="[sk-a, sk-b]"), says=("PROVIDERS.mock.API_KEY",)),
    Case("headers-a-list", _provider(HEADERS="[a, b]"), says=("PROVIDERS.mock.HEADERS",)),
    Case("memory-a-number", BASE + "MEMORY: 5\n", says=("MEMORY",)),
    Case("learn-unknown", BASE + "MEMORY:\n  LEARN: sometimes\n", says=("MEMORY.LEARN",)),
    Case("tool-timeout-yes", BASE + "TOOL_TIMEOUT: yes\n", says=("TOOL_TIMEOUT",)),
    Case("failover-a-mapping", BASE + "FAILOVER_ORDER: {a: 1}\n", says=("FAILOVER_ORDER",)),
    Case("mcp-args-a-mapping", BASE + "MCP_SERVERS:\n  x:\n    COMMAND: cat\n    ARGS: {a: 1}\n",
         says=("MCP_SERVERS.x.ARGS",)),
    Case("mode-a-path", BASE + "MODE: ../../etc\n", says=("MODE",)),
    Case("model-missing", _provider(MODEL=""), says=("PROVIDERS.mock.MODEL",)),
    Case("env-override-not-a-number", BASE, env={"TMG_MAX_TURNS": "lots"}, says=("MAX_TURNS", "TMG_MAX_TURNS")),
    # huge and negative numbers
    Case("max-turns-huge", BASE + "MAX_TURNS: 99999999999999999999999999999999\n", says=("MAX_TURNS", "at most")),
    Case("max-tokens-huge", _provider(MAX_TOKENS="1.0e30"), says=("PROVIDERS.mock.MAX_TOKENS", "at most")),
    Case("tool-timeout-exponent", BASE + "TOOL_TIMEOUT: 1e308\n", says=("TOOL_TIMEOUT", "at most")),
    Case("max-turns-infinite", BASE + "MAX_TURNS: .inf\n", says=("MAX_TURNS", "finite")),
    Case("max-turns-nan", BASE + "MAX_TURNS: .nan\n", says=("MAX_TURNS", "finite")),
    Case("max-turns-negative", BASE + "MAX_TURNS: -1\n", commands=FILE_LEVEL, says=("MAX_TURNS", "at least")),
    Case("tool-timeout-negative", BASE + "TOOL_TIMEOUT: -5\n", says=("TOOL_TIMEOUT", "at least")),
    Case("inject-budget-negative", BASE + "MEMORY:\n  INJECT_BUDGET: -1\n", says=("MEMORY.INJECT_BUDGET",)),
    Case("max-tokens-zero", _provider(MAX_TOKENS="0"), says=("PROVIDERS.mock.MAX_TOKENS",)),
    Case("mcp-timeout-huge", BASE + "MCP_SERVERS:\n  x:\n    COMMAND: cat\n    TIMEOUT: 1.0e300\n",
         says=("MCP_SERVERS.x.TIMEOUT",)),
    Case("max-turns-fraction", BASE + "MAX_TURNS: 2.5\n", says=("MAX_TURNS", "whole")),
    # no provider to talk to
    Case("empty-provider-map", "PROVIDERS: {}\n", commands=("oneshot",), says=("No model provider",)),
    Case("empty-file", "", commands=("oneshot",), says=("No model provider",)),
    Case("comment-only-file", "# PROVIDERS:\n#   mock: {}\n", commands=("oneshot",), says=("No model provider",)),
    Case("provider-without-key", _provider(API_KEY="", URL=""), commands=("oneshot",),
         says=("PROVIDERS.mock.API_KEY (not set)", "needs only URL")),
    Case("selected-provider-unknown", BASE + "SELECTED_PROVIDER: nope\n", commands=FILE_LEVEL,
         says=("SELECTED_PROVIDER", "nope")),
    # warnings, not errors: the config loads; the warning is one line naming the key
    Case("unknown-top-level-key", BASE + "MAX_TURN: 5\n", commands=("config",), warn_only=True,
         says=("MAX_TURN", "MAX_TURNS")),
    Case("unknown-lowercase-typo", BASE + "persn: hi\n", commands=("config",), warn_only=True, says=("persn",)),
]

# What names a place in a message: the file, a key path, or an argument.
_KEY = "|".join(sorted(SCHEMA, key=len, reverse=True))
_PLACE = re.compile(rf"config file |\b({_KEY})\b|\bargument \d+\b|\bline \d+\b")
# What says what to do: a fix verb, a rule the value must meet, or an example of a good value.
_FIX = re.compile(r"\b(set|fix|remove|use|write|save|point|check|make|add|pass|put|flatten|raise|install|"
                  r"export|copy|run|rename|quote|give|delete|must|is required)\b|\(e\.g\. |\(available: ", re.IGNORECASE)


def unclear(line: str) -> str | None:
    """Why ``line`` is not one clear line (None when it is)."""
    if not line:
        return "no message"
    if "\n" in line.strip():
        return "more than one line"
    if "internal error" in line or "Traceback" in line:
        return "an internal error"
    if "()" in line:
        return "an empty reason"
    if "\\udc" in line or any("\udc80" <= c <= "\udcff" for c in line):
        return "raw undecodable bytes"
    if not _PLACE.search(line):
        return "names no file, key or argument"
    if not _FIX.search(line):
        return "says nothing to do"
    return None


@dataclass
class Run:
    case: Case
    command: str
    code: int | None  # None: still running at the deadline (a hang)
    out: str
    err: str

    @property
    def message(self) -> str:
        """The line the user reads: stderr's, or doctor's FAIL/warn verdict for the config."""
        if self.command == "doctor":
            return "\n".join(line for line in self.out.splitlines() if line.startswith(("FAIL  config:", "FAIL  provider:")))
        return self.err.strip()


def _prepare(case: Case, root: Path) -> Path:
    folder = root / case.name
    folder.mkdir()
    path = folder / "tmg.yaml"
    if case.make is not None:
        case.make(path)
    elif isinstance(case.content, bytes):
        path.write_bytes(case.content)
    else:
        path.write_text(case.content or "", encoding="utf-8")
    return path


def _run(runner: TmgRunner, case: Case, command: str, path: Path) -> Run:
    args = {"oneshot": ["-c", str(path), *case.args], "config": ["config", "-c", str(path)],
            "doctor": ["doctor", "-c", str(path)]}[command]
    env = runner.env(**case.env)
    env.pop("TMG_CONFIG", None)
    env.pop("MOCK_API_KEY", None)
    try:
        result = run_tmg(args, env=env, cwd=path.parent, timeout=30)
    except RunTimedOut:
        return Run(case, command, None, "", "")
    return Run(case, command, result.code, result.out, result.err)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, list[Run]]:
    root = tmp_path_factory.mktemp("config-corpus")
    with MockLLM() as llm:
        runner = TmgRunner(root / "runner", llm)
        paths = {case.name: _prepare(case, root) for case in CASES}
        runs = [_run(runner, case, command, paths[case.name]) for case in CASES for command in case.commands]
    by_case: dict[str, list[Run]] = {}
    for run in runs:
        by_case.setdefault(run.case.name, []).append(run)
    tracebacks = sum("Traceback" in r.out + r.err for r in runs)
    unclear_count = sum(_problem(r) is not None for r in runs)
    print(f"\nconfig corpus: {len(CASES)} configs tried ({len(runs)} runs), {tracebacks} tracebacks, "
          f"{unclear_count} unclear messages")
    return by_case


def _problem(run: Run) -> str | None:
    """What is wrong with one run, else None."""
    case = run.case
    if run.code is None:
        return "hung (no exit within 30 s)"
    if "Traceback" in run.out + run.err:
        return "a traceback"
    if case.warn_only:
        if run.code != 0:
            return f"exit {run.code} for a warning"
        lines = [line for line in run.err.splitlines() if line.strip()]
        if len(lines) != 1 or not lines[0].startswith("tmg: warning: "):
            return f"not one warning line: {run.err!r}"
        missing = [s for s in case.says if s not in lines[0]]
        return f"the warning lacks {missing}: {lines[0]}" if missing else None
    expected = 2 if case.usage else 1
    if run.code != expected:
        return f"exit {run.code}, not {expected}"
    message = run.message
    if run.command != "doctor":
        if not message.startswith("tmg: error: "):
            return f"not a `tmg: error:` line: {message!r}"
        if run.out.strip():
            return f"stdout is not empty: {run.out!r}"
    elif not message:
        return f"no FAIL verdict for the config: {run.out!r}"
    why = unclear(message)
    if why:
        return f"{why}: {message!r}"
    missing = [s for s in case.says if s not in message]
    if missing:
        return f"the message lacks {missing}: {message!r}"
    if API_KEY in run.out + run.err or "sk-local-key" in run.out + run.err:
        return "a secret in the output"
    return None


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_malformed_config_is_one_clear_line_and_exit_1_or_2(corpus, case):
    problems = [f"{r.command}: {p}" for r in corpus[case.name] if (p := _problem(r))]
    assert not problems, "\n".join(problems)


def test_the_corpus_covers_what_issue_9_lists():
    names = {c.name for c in CASES}
    assert len(CASES) >= 60 and len(names) == len(CASES)
    for needed in ("url-unset-var", "url-port-out-of-range", "argv-not-utf8", "alias-bomb", "fifo", "directory",
                   "unreadable", "not-utf8-bytes", "unclosed-bracket", "max-turns-text", "max-turns-huge",
                   "max-turns-negative", "unknown-top-level-key", "empty-provider-map"):
        assert needed in names


def test_clear_means_place_and_fix():
    """The checker itself: what it lets through and what it refuses."""
    assert unclear("tmg: error: invalid config in /x/tmg.yaml: line 3: MAX_TURNS is 0; it must be at least 1") is None
    assert unclear("tmg: error: config file /x/tmg.yaml: MAX_TURNS is 0") == "says nothing to do"
    assert unclear("tmg: error: did not start (); check MCP_SERVERS.mute") == "an empty reason"
    assert unclear("tmg: error: internal error: ExceptionGroup: x (run again with --debug)") == "an internal error"
    assert unclear("tmg: error: something broke; fix it") == "names no file, key or argument"
    assert unclear("tmg: error: config file /x is a FIFO (named pipe), not a regular file; point the config at "
                   "a YAML file") is None


# -- the session side of defect 6: bad saves while a prompt runs ------------------------------------

DELAY = 0.3  # each model reply waits this long: the loop runs while the test saves


def _replace(path: Path, make: Callable[[Path], None]) -> None:
    """Put a new thing at ``path`` in one rename, as editors save."""
    tmp = path.with_name(".tmg.yaml.new")
    make(tmp)
    os.replace(tmp, path)


def _wait(condition: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds:g} s for {what}"
        time.sleep(0.02)


def test_a_fifo_then_an_empty_file_saved_mid_prompt_keep_the_last_good_config(tmg, llm):
    """A one-shot in a long tool loop: the config path becomes a FIFO, then an empty file. The
    loop goes on with the last good config, each bad save is said once (stderr and transcript),
    and the next good save is picked up."""
    tmg.write_config("MAX_TURNS: 200\nPERSON: You are the original persona.\n")
    good = tmg.config.read_text()
    llm.repeat_last = True
    llm.enqueue(ToolCall("list_folder", {"path": "."}, delay=DELAY))
    out: list = []
    thread = threading.Thread(target=lambda: out.append(tmg.run("work through it")), daemon=True)
    thread.start()
    _wait(lambda: len(llm.requests) >= 1, "the first request")

    def transcript() -> str:
        sessions = tmg.session_dirs()
        path = sessions[0] / "transcript.md" if sessions else None
        return path.read_text() if path and path.exists() else ""

    _replace(tmg.config, os.mkfifo)
    _wait(lambda: "is a FIFO (named pipe)" in transcript(), "the FIFO to be refused")
    seen = len(llm.requests)
    _wait(lambda: len(llm.requests) >= seen + 2, "the loop to go on past the FIFO")
    _replace(tmg.config, lambda p: p.write_text("# everything commented out\n"))
    _wait(lambda: "is empty (no settings" in transcript(), "the empty file to be refused")
    seen = len(llm.requests)
    _wait(lambda: len(llm.requests) >= seen + 2, "the loop to go on past the empty file")
    kept = list(llm.requests)
    _replace(tmg.config, lambda p: p.write_text(good.replace("original persona", "fixed persona")))
    _wait(lambda: "fixed persona" in _system(llm.requests[-1]), "the good save to be picked up")
    llm.repeat_last = False
    llm.enqueue(Text("done"))
    thread.join(60)
    assert out, "tmg did not finish"
    r = out[0]
    assert r.code == 0, r.err
    assert r.out == "done\n"
    assert all("original persona" in _system(req) for req in kept)  # kept through both bad saves
    fifo = [line for line in r.err.splitlines() if "is a FIFO" in line]
    empty = [line for line in r.err.splitlines() if "is empty (no settings" in line]
    assert len(fifo) == 1 and len(empty) == 1, r.err
    assert fifo[0].startswith("tmg: warning: config reload failed, keeping the previous config: config file ")
    assert transcript().count("is a FIFO") == 1 and transcript().count("is empty (no settings") == 1


def _system(request) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""
