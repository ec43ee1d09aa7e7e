"""glob and grep: sorted, bounded, .gitignore respected, binary and secret-bearing files skipped;
grep gives the same answer through ripgrep and through its Python search."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tmg.tools.files import RootGuard
from tmg.tools.search import MAX_MATCHES, MAX_PATHS, GlobTool, GrepTool
from tmg.permissions.sensitive import SensitivePaths

RG = shutil.which("rg")  # installed by scripts/bootstrap; the ripgrep leg must not pass without it


def _project(root):
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "b.py").write_text("import os\ndef beta():\n    return 'needle'\n")
    (root / "src" / "a.py").write_text("def alpha():\n    return 'needle here'\n")
    (root / "README.md").write_text("a needle in the docs\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle = 'generated'\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "debug.log").write_text("needle in a log\n")
    (root / "image.dat").write_bytes(b"needle\x00\x01\x02")
    (root / ".env").write_text("TOKEN=needle-secret\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _guard(root):
    return RootGuard([root], SensitivePaths({"HOME": str(root / "no-home")}))


async def test_glob_matches_names_at_any_depth_or_whole_paths_sorted_without_ignored_files(tmp_path):
    _project(tmp_path)
    tool = GlobTool(_guard(tmp_path))
    assert (await tool.run({"pattern": "*.py"})).content.splitlines() == ["src/a.py", "src/pkg/b.py"]
    assert (await tool.run({"pattern": "src/**/*.py"})).content.splitlines() == ["src/a.py", "src/pkg/b.py"]
    assert (await tool.run({"pattern": "src/*.py"})).content.splitlines() == ["src/a.py"]
    assert (await tool.run({"pattern": "*.{md,log}"})).content.splitlines() == ["README.md"]
    assert (await tool.run({"pattern": "*.py", "path": "src/pkg"})).content.splitlines() == ["src/pkg/b.py"]
    assert (await tool.run({"pattern": "*.rs"})).content == "no files match '*.rs'"


async def test_glob_outside_a_git_work_tree_lists_every_file(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.log").write_text("")
    (tmp_path / ".gitignore").write_text("*.log\n")  # no repository: nothing says git's rules apply
    assert (await GlobTool(_guard(tmp_path)).run({"pattern": "*.log"})).content == "x/keep.log"


async def test_glob_is_bounded_and_says_how_to_narrow(tmp_path):
    for i in range(MAX_PATHS + 7):
        (tmp_path / f"f{i:04}.txt").write_text("")
    lines = (await GlobTool(_guard(tmp_path)).run({"pattern": "*.txt"})).content.splitlines()
    assert len(lines) == MAX_PATHS + 1 and lines[0] == "f0000.txt"
    assert lines[-1] == "[7 more paths not shown; narrow the pattern or the path]"


@pytest.fixture(params=["ripgrep", "python"])
def grep(request, tmp_path):
    if request.param == "ripgrep":
        assert RG, "ripgrep (rg) is not on PATH: scripts/bootstrap installs it"
    return GrepTool(_guard(tmp_path), ripgrep=RG if request.param == "ripgrep" else "")


async def test_grep_finds_lines_sorted_skipping_ignored_binary_and_secret_files(tmp_path, grep):
    _project(tmp_path)
    result = await grep.run({"pattern": "needle"})
    assert result.content.splitlines() == [
        "README.md:1:a needle in the docs",
        "src/a.py:2:    return 'needle here'",
        "src/pkg/b.py:3:    return 'needle'",
        "[skipped 1 file(s) that hold secrets (.env, keys); name one as the path to search it]",
    ]


async def test_grep_options_and_a_named_secret_file(tmp_path, grep):
    _project(tmp_path)
    assert (await grep.run({"pattern": "DEF (ALPHA|BETA)", "ignore_case": True, "glob": "*.py"})).content.splitlines() == [
        "src/a.py:1:def alpha():", "src/pkg/b.py:2:def beta():"]
    assert (await grep.run({"pattern": "needle", "glob": "src/pkg/*.py"})).content == "src/pkg/b.py:3:    return 'needle'"
    assert (await grep.run({"pattern": "needle", "path": "src/pkg"})).content == "src/pkg/b.py:3:    return 'needle'"
    # Named on purpose (its action is `sensitive`, so the engine asked): searched.
    assert (await grep.run({"pattern": "TOKEN", "path": ".env"})).content == ".env:1:TOKEN=needle-secret"
    assert grep.action({"pattern": "TOKEN", "path": ".env"}).sensitive
    assert grep.action({"pattern": "TOKEN"}).sensitive is None
    assert (await grep.run({"pattern": "nothing-like-this"})).content.startswith("no matches for 'nothing-like-this'")


async def test_grep_is_bounded_and_says_how_to_narrow(tmp_path, grep):
    (tmp_path / "many.txt").write_text("hit\n" * (MAX_MATCHES + 30))
    lines = (await grep.run({"pattern": "hit"})).content.splitlines()
    assert lines[0] == "many.txt:1:hit" and len(lines) == MAX_MATCHES + 1
    assert lines[-1] == "[30 more matching lines not shown; narrow the pattern, the path or the glob]"


async def test_grep_reports_a_bad_regular_expression(tmp_path, grep):
    (tmp_path / "a.txt").write_text("x\n")
    result = await grep.run({"pattern": "(unclosed"})
    assert result.is_error and result.content.startswith("error: invalid regular expression")
