"""`tmg -t`, `--version` and `--help` must never import litellm or mcp (quality.md P1)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from e2e.mock_llm import Text, ToolCall

HEAVY = ("litellm", "mcp", "openai", "httpx", "watchfiles", "prompt_toolkit")
# What a plain one-shot has no use for (issue 10, P2'): typer and the pydantic its adapters
# import (the chat command line is read without them), httpx's HTTP/2 stack and its CLI's
# click, rich and pygments (tmg never asks for HTTP/2; rich is for a terminal only).
ONESHOT_UNUSED = ("typer", "pydantic", "pydantic_core", "h2", "hpack", "click", "rich", "pygments")
# What a one-shot with memory off has no use for: memory's code and its broker, the MCP SDK (no
# servers), and the shell parser (bashlex: only a shell command being checked needs it).
MEMORY_OFF_UNUSED = ("tmg.memory", "tmg.broker", "mcp", "bashlex", "tmg.permissions.shell", "watchfiles")
# What `tmg -t` has no use for (P1): the config loader with its schema, typed Config and folder
# trust (it needs MODE only), PyYAML for a config whose text sets no MODE, a session's checkpoint
# code when it has no checkpoint log, and the history's code for the Markdown transcript.
TRANSCRIPT_UNUSED = ("tmg.config.loader", "tmg.config.schema", "tmg.config.model", "tmg.config.trust", "yaml",
                     "tmg.checkpoints.log", "tmg.session.history", "asyncio")

PROBE = """
import atexit, json, sys
def report():
    watched = %r  # packages: a name or anything under it
    heavy = sorted({w for w in watched for m in sys.modules if m == w or m.startswith(w + '.')})
    sys.stderr.write('\\nIMPORTED=' + json.dumps(heavy) + '\\n')
atexit.register(report)
sys.argv = ['tmg'] + %r
from tmg.cli import main
main()
"""


def imported_heavy(tmg, *args: str, watched: tuple[str, ...] = HEAVY, stdin: str | None = None,
                   out: list[str] | None = None) -> tuple[int, list[str]]:
    """tmg's exit code and which of the ``watched`` packages it imported (its stdout to ``out``)."""
    code = PROBE % (watched, list(args))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmg.work,
                          env=tmg.env(), input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          timeout=60)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("IMPORTED=")][-1]
    if out is not None:
        out.append(proc.stdout)
    return proc.returncode, json.loads(line.split("=", 1)[1])


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-t"], ["-t", "--json"], ["sessions"],
                                  ["mcp", "--help"]])
def test_fast_paths_import_no_heavy_module(tmg, llm, args):
    llm.enqueue(Text("an answer"))
    assert tmg.run("a question").code == 0  # so -t has a session to print
    code, heavy = imported_heavy(tmg, *args)
    assert code == 0
    assert heavy == []


@pytest.mark.parametrize("args", [["-t"], ["-t", "--json"], ["--mode", "default", "-t"]])
def test_a_transcript_loads_no_config_schema_no_yaml_and_no_checkpoint_code(tmg, llm, args):
    llm.enqueue(Text("an answer"))
    assert tmg.run("a question").code == 0
    out: list[str] = []
    code, unused = imported_heavy(tmg, *args, watched=TRANSCRIPT_UNUSED, out=out)
    assert code == 0 and "an answer" in out[0]
    assert unused == (["tmg.session.history"] if "--json" in args else [])


def test_the_probe_would_see_the_loader_where_the_mode_is_not_plain(tmg, llm):
    # `MODE: 2` is the text "2" by the schema's rule: -t leaves it to the loader, and the same
    # probe sees the loader and the YAML then, so the check above can fail.
    tmg.write_config("MODE: 2\n")
    llm.enqueue(Text("an answer"))
    assert tmg.run("a question").code == 0
    code, imported = imported_heavy(tmg, "-t", watched=TRANSCRIPT_UNUSED)
    assert code == 0 and {"tmg.config.loader", "tmg.config.schema", "yaml"} <= set(imported)
    assert tmg.session_dirs("2")


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_open_no_session_code(tmg, args):
    # Neither reads a session: the store's asyncio and ssl (tens of ms) stay out of them.
    code, imported = imported_heavy(tmg, *args, watched=("asyncio", "ssl", "tmg.session.store"))
    assert code == 0 and imported == []


def test_the_probe_would_see_a_heavy_import(tmg, llm):
    # The same probe around a real one-shot does see the gateway's HTTP stack: it can fail.
    llm.enqueue(Text("an answer"))
    code, heavy = imported_heavy(tmg, "question")
    assert code == 0 and "httpx" in heavy


@pytest.mark.parametrize("args,stdin", [(["a question"], None), (["--new", "-r"], "a piped question\n"),
                                        (["-m", "mock", "a", "question", "--mode", "work"], None)])
def test_a_one_shot_imports_neither_typer_nor_an_http2_stack(tmg, llm, args, stdin):
    llm.enqueue(Text("the answer"))
    out: list[str] = []
    code, unused = imported_heavy(tmg, *args, watched=ONESHOT_UNUSED, stdin=stdin, out=out)
    assert (code, out[0].strip()) == (0, "the answer")
    assert unused == []


def test_the_probe_would_see_typer_where_it_is_used(tmg):
    # --help is typer's: the same probe sees it there, so the checks above can fail.
    code, imported = imported_heavy(tmg, "--help", watched=ONESHOT_UNUSED)
    assert code == 0 and "typer" in imported


def test_a_memory_off_one_shot_loads_no_memory_code_no_mcp_sdk_and_no_shell_parser(tmg, llm):
    llm.enqueue(Text("the answer"))
    out: list[str] = []
    code, unused = imported_heavy(tmg, "--new", "-r", watched=MEMORY_OFF_UNUSED, stdin="a question\n", out=out)
    assert (code, out[0].strip()) == (0, "the answer")
    assert unused == []


def test_the_probe_would_see_the_shell_parser_when_a_command_is_checked(tmg, llm):
    # A shell call is judged part by part: the parser is loaded then (for a line with a
    # redirection; a line of plain words and quotes is cut without it), so the check above can fail.
    llm.enqueue(ToolCall("shell", {"command": "ls 2>/dev/null | wc -l"}), Text("done"))
    code, imported = imported_heavy(tmg, "count the files", watched=MEMORY_OFF_UNUSED)
    assert code == 0 and "bashlex" in imported and "tmg.permissions.shell" in imported
