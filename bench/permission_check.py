"""The permission engine's cost per tool call (issues 13 and 20: < 1 ms per check).

The real engine with a realistic rule set (20 config rules, 10 saved decisions in a real
permissions.json), judging the calls a session makes: reads, a write, an MCP call, and shell
lines from a plain `ls` to a compound line with substitutions and a `bash -c`, wrappers around a
denied command, global options before a subcommand, a secret file through a symlink, and a
line that only reads (every word resolved against the folder). Each kind is checked many times;
medians and 95th percentiles per check, after one warm-up call (the first shell line imports
bashlex: that one-time cost is shown apart).

Run: ./.venv/bin/python bench/permission_check.py [--checks 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tmg.config.model import Config, PermissionsConfig  # noqa: E402
from tmg.permissions.action import ToolAction  # noqa: E402
from tmg.permissions.engine import PermissionEngine  # noqa: E402
from tmg.permissions.store import DecisionStore  # noqa: E402

ALLOW = ["shell(git status)", "shell(git diff)", "shell(git log)", "shell(ls)", "shell(wc)", "shell(cat)",
         "shell(grep)", "shell(npm test)", "shell(pytest)", "shell(echo)", "write_file(src/**)",
         "edit_file(src/**)", "mcp_github_get_*", "mcp_time_*"]
DENY = ["shell(rm)", "shell(git push)", "shell(curl)", "write_file(/etc/**)"]
ASK = ["shell(git commit)", "mcp_github_delete_*"]

CALLS = {
    "read_file": ToolAction("read_file", "read", paths=("src/app.py",)),
    "write_file (rule)": ToolAction("write_file", "write", paths=("src/app.py",), preview="--- a\n+++ b\n"),
    "mcp tool": ToolAction("mcp_github_get_issue", "read", server="github"),
    # {i}: every check a line not seen before, so each one is parsed (a repeated line is cached)
    "shell `ls`": ToolAction("shell", "run", command="ls -la dir{i}"),
    "shell compound": ToolAction("shell", "run",
                                 command="git status && git diff --stat | wc -l; echo $(git log -1 --format=%H) {i}"),
    "shell bash -c": ToolAction("shell", "run", command="bash -c 'ls src | grep py{i} && cat README.md'"),
    "shell denied": ToolAction("shell", "run", command="env X=1 rm -rf build{i}"),
    "shell wrappers": ToolAction("shell", "run", command="timeout 5 nice -n 2 flock /tmp/l sudo -u bob rm x{i}"),
    "shell git options": ToolAction("shell", "run", command="git -C . --no-pager -c color.ui=never push origin b{i}"),
    "shell interpreter": ToolAction("shell", "run", command="python3 -c 'import os; os.system(\"ls {i}\")'"),
    "shell secret link": ToolAction("shell", "run", command="cat notes.txt src/app.py README{i}.md"),
    "shell reads only": ToolAction("shell", "run", command="git log --oneline | head -5 && wc -l src/app.py #{i}"),
    "shell parsed": ToolAction("shell", "run", command="ls src 2>/dev/null | grep -c py{i}"),
    "shell parsed if": ToolAction("shell", "run",
                                  command="if [ -d src{i} ]; then find src -name '*.py' | xargs wc -l; fi"),
    "shell repeated": ToolAction("shell", "run", command="git status && git diff --stat | wc -l"),
}


async def measure(engine: PermissionEngine, action: ToolAction, checks: int) -> list[float]:
    times = []
    for i in range(checks):
        call = action if action.command is None else replace(action, command=action.command.replace("{i}", str(i)))
        start = time.perf_counter()
        await engine.check(call)
        times.append(time.perf_counter() - start)
    return times


def parse_floor(action: ToolAction, checks: int) -> str:
    """bashlex's own median parse of the line, or "-" when the line needs no parser."""
    import bashlex

    from tmg.permissions.plain import plain_commands

    if action.command is None or plain_commands(action.command.replace("{i}", "0")) is not None:
        return "-"
    times = []
    for i in range(checks):
        line = action.command.replace("{i}", str(i))
        start = time.perf_counter()
        bashlex.parse(line)
        times.append(time.perf_counter() - start)
    return f"{statistics.median(times) * 1e6:.0f}µs"


async def main(checks: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "work" / "src").mkdir(parents=True)
        (root / "work" / "src" / "app.py").write_text("print(1)\n")
        (root / ".ssh").mkdir()
        (root / ".ssh" / "id_ed25519").write_text("key\n")
        (root / "work" / "notes.txt").symlink_to(root / ".ssh" / "id_ed25519")
        env = {"HOME": str(root), "XDG_CONFIG_HOME": str(root / "xdg"), "TMG_HOME": str(root / "home")}
        store = DecisionStore.for_env(env)
        for i in range(10):
            store.add(f"shell(tool{i} run)", str(root / "work"))
        config = Config(permissions=PermissionsConfig("default", tuple(ALLOW), tuple(ASK), tuple(DENY)))
        engine = PermissionEngine(lambda: config, cwd=str(root / "work"), env=env, store=store)
        start = time.perf_counter()
        await engine.check(ToolAction("shell", "run", command="echo $HOME"))
        first = time.perf_counter() - start
        print(f"first shell check (imports bashlex): {first * 1000:.1f} ms, once per process")
        print(f"{'call':<20} {'median':>9} {'p95':>9} {'parse':>9}   decision")
        worst = 0.0
        for name, action in CALLS.items():
            times = sorted(await measure(engine, action, checks))
            median, p95 = statistics.median(times), times[int(len(times) * 0.95)]
            worst = max(worst, median)
            print(f"{name:<20} {median * 1e6:>7.0f}µs {p95 * 1e6:>7.0f}µs {parse_floor(action, checks):>9}   "
                  f"{engine.judge(action).decision}")
        print(f"slowest median: {worst * 1000:.3f} ms per check ({'under' if worst < 0.001 else 'OVER'} 1 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=2000)
    asyncio.run(main(parser.parse_args().checks))
