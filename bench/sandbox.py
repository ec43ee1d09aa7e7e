"""P12: the time the OS sandbox (bubblewrap) adds to a shell command.

Each command runs through the shell tool's own `run`, once sandboxed and once not, interleaved
round by round in one process, in a scratch project: a no-op, `git status`, a commit, a small
pytest run, `pip install --target` of a local wheel and `npm install --offline` of a local
package. Prints the medians, the added milliseconds and the ratio; fails when a sandboxed
command does not do what the unsandboxed one does (the sandbox must not break ordinary work).

Run: ./.venv/bin/python bench/sandbox.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tmg.config.model import Config  # noqa: E402
from tmg.tools.sandbox import Sandbox, bubblewrap  # noqa: E402
from tmg.tools.shell import ShellTool  # noqa: E402


def scratch_project(root: Path) -> None:
    """A git repository with a few files and a test, and in vendor/ a tiny wheel and a tiny npm
    package (inside the project: the sandbox's /tmp is its own)."""
    git = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@e"}
    for i in range(20):
        (root / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    (root / "test_mods.py").write_text("".join(f"from mod{i} import f{i}\n" for i in range(20))
                                       + "".join(f"def test_{i}():\n    assert f{i}() == {i}\n" for i in range(20)))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=root, check=True, env=git)
    vendor = root / "vendor"
    vendor.mkdir()
    with zipfile.ZipFile(vendor / "tiny-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("tiny.py", "VALUE = 1\n")
        wheel.writestr("tiny-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n")
        wheel.writestr("tiny-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\n"
                                                    "Tag: py3-none-any\n")
        wheel.writestr("tiny-1.0.dist-info/RECORD", "")
    package = vendor / "tiny-npm"
    package.mkdir()
    (package / "package.json").write_text('{"name": "tiny-npm", "version": "1.0.0", "main": "index.js"}\n')
    (package / "index.js").write_text("module.exports = 1;\n")
    (root / "package.json").write_text('{"name": "project", "version": "1.0.0", "private": true}\n')


def commands(root: Path) -> dict[str, tuple[str, str]]:
    """name -> (the command, a word its output must hold when it worked)."""
    py = sys.executable
    found = {
        "true": ("true", "exit code: 0"),
        "git status": ("git status --short && echo clean", "clean"),
        "git commit": ("git -c user.name=b -c user.email=b@e commit -q --allow-empty -m tick && echo committed",
                       "committed"),
        "pytest (20 tests)": (f"{py} -m pytest -q -p no:cacheprovider test_mods.py", "20 passed"),
        "pip install --target": (f"rm -rf lib && {py} -m pip install -q --no-index --no-deps --no-compile "
                                 "--disable-pip-version-check --target lib vendor/tiny-1.0-py3-none-any.whl "
                                 "&& ls lib", "tiny.py"),
    }
    if shutil.which("npm"):
        found["npm install --offline"] = ("rm -rf node_modules package-lock.json && npm install --offline --no-audit "
                                          "--no-fund ./vendor/tiny-npm >/dev/null && ls node_modules",
                                          "tiny-npm")
    return found


async def timed(tool: ShellTool, command: str, expect: str, label: str) -> float:
    start = time.perf_counter()
    result = await tool.run({"command": command, "timeout": 120})
    wall = time.perf_counter() - start
    if expect not in result.content:
        raise SystemExit(f"bench: {label} `{command}` did not work:\n{result.content}")
    return wall


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    found = bubblewrap()
    if not found.usable:
        raise SystemExit(f"bench: the sandbox cannot run here: {found.why}")
    with tempfile.TemporaryDirectory(prefix="tmg-bench-sandbox-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        scratch_project(root)
        env = dict(os.environ)
        plain = ShellTool(root, env)
        sandbox = Sandbox(root, env, Config, warn=lambda text: print(f"bench: {text}", file=sys.stderr))
        boxed = ShellTool(root, env, sandbox=sandbox)
        cases = commands(root)
        samples: dict[str, dict[str, list[float]]] = {name: {"plain": [], "sandboxed": []} for name in cases}
        for _ in range(args.rounds):
            for name, (command, expect) in cases.items():
                samples[name]["plain"].append(await timed(plain, command, expect, name))
                samples[name]["sandboxed"].append(await timed(boxed, command, expect, f"{name} (sandboxed)"))
    print(f"### P12: a shell command in the OS sandbox vs the same command unsandboxed ({args.rounds} rounds, "
          "interleaved)\n")
    print("| command | unsandboxed median (ms) | sandboxed median (ms) | added (ms) | ratio |")
    print("|---|---|---|---|---|")
    for name, runs in samples.items():
        a, b = statistics.median(runs["plain"]) * 1000, statistics.median(runs["sandboxed"]) * 1000
        print(f"| `{name}` | {a:.1f} | {b:.1f} | {b - a:+.1f} | {b / a:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
