"""The shape of the house, read from the source with `ast` (nothing is imported): no import circle
between modules, no import that climbs a floor, no module over 400 lines.

Every import counts: at module top, inside a function (a lazy import is still a dependency), under
TYPE_CHECKING. The floors are FLOORS below, bottom first; docs/architecture.md shows the same table
(a test keeps the two alike). A module may import its own floor and the floors below it.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tmg", "fakeplur")
MAX_LINES = 400

# Bottom first. A module's floor is that of the longest entry naming it or a package above it.
FLOORS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "tmg": [
        ("ground", ("tmg", "tmg.errors", "tmg.environment", "tmg.atomic_file", "tmg.paths", "tmg.media",
                    "tmg.redaction")),
        ("llm", ("tmg.llm",)),
        ("config", ("tmg.config",)),
        ("session store", ("tmg.session",)),
        ("permissions", ("tmg.permissions",)),
        ("mcp client", ("tmg.mcp",)),
        ("context", ("tmg.context",)),
        ("tools", ("tmg.tools", "tmg.checkpoints")),
        ("broker", ("tmg.broker",)),
        # The process's MCP tool servers choose a route per server: direct, or through the broker.
        ("server sets", ("tmg.mcp.server_set",)),
        ("engine", ("tmg.engine",)),
        ("features", ("tmg.memory", "tmg.skills")),
        ("ui", ("tmg.ui",)),
        ("session runner", ("tmg.session.runner", "tmg.session.models", "tmg.compose")),
        ("repl", ("tmg.repl",)),
        ("cli", ("tmg.cli", "tmg.__main__")),
    ],
    "fakeplur": [
        ("fake data", ("fakeplur.snapshot", "fakeplur.ranking", "fakeplur.validation", "fakeplur.store",
                       "fakeplur.config")),
        ("fake tools", ("fakeplur.tools",)),
        ("fake server", ("fakeplur", "fakeplur.server", "fakeplur.__main__")),
    ],
}

# What is still wrong and known, each owned by work in progress elsewhere: the list may only shrink
# (an entry that no longer occurs fails too, so it is taken off when it is mended).
PENDING: set[str] = {
    "long: tmg/permissions/engine.py",
    "climb: tmg.permissions.engine -> tmg.tools.sensitive",
}


@cache
def modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of ours one import statement names (`from pkg import mod` names pkg.mod)."""
    known = modules()
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix for alias in node.names]
    out = []
    for name in names:
        while name not in known and "." in name:  # `import tmg.x.y` names tmg.x.y; a symbol names its module
            name = name.rpartition(".")[0]
        if name in known and name != module:
            out.append(name)
    return out


@cache
def imports() -> dict[str, frozenset[str]]:
    """Module -> the modules of ours it imports anywhere in its text."""
    graph = {}
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[module] = frozenset(t for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                                  for t in _imported(module, path, node))
    return graph


def floor_of(module: str) -> tuple[str, int] | None:
    """(tower, floor index) of a module: the longest FLOORS entry that is it or a package above it."""
    best: tuple[int, str, int] | None = None
    for tower, floors in FLOORS.items():
        for index, (_name, entries) in enumerate(floors):
            for entry in entries:
                if (module == entry or module.startswith(entry + ".")) and (best is None or len(entry) > best[0]):
                    best = (len(entry), tower, index)
    return None if best is None else (best[1], best[2])


def circles() -> list[str]:
    """Each set of modules that import each other round (Tarjan's strongly connected components)."""
    graph = imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[str] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append("circle: " + " <-> ".join(sorted(members)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def climbs() -> list[str]:
    """Each import of a module on a higher floor, or of another tower."""
    found = []
    for module, targets in sorted(imports().items()):
        here = floor_of(module)
        for target in sorted(targets):
            there = floor_of(target)
            if here is not None and there is not None and (here[0] != there[0] or there[1] > here[1]):
                found.append(f"climb: {module} -> {target}")
    return found


def long_modules() -> list[str]:
    return [f"long: {path.relative_to(ROOT)}" for path in modules().values()
            if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES]


def test_every_module_has_a_floor():
    assert [m for m in modules() if floor_of(m) is None] == []


def test_no_import_circle():
    assert sorted(set(circles()) - PENDING) == []


def test_no_import_climbs_a_floor():
    assert sorted(set(climbs()) - PENDING) == []


def test_no_module_is_over_400_lines():
    assert sorted(set(long_modules()) - PENDING) == []


def test_the_pending_list_only_names_what_is_still_wrong():
    assert sorted(PENDING - set(circles() + climbs() + long_modules())) == []


def test_the_checks_see_a_lazy_import_and_place_a_new_module():
    # The checks themselves can fail: a lazy import inside a function is an edge like any other.
    graph = imports()
    assert "tmg.repl.loop" in graph["tmg.cli.repl_entry"]  # imported inside start_repl only
    assert floor_of("tmg.cli.main_thing") == floor_of("tmg.cli")
    assert floor_of("tmg.errors")[1] < floor_of("tmg.cli")[1]


def _doc_floors() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """The floors table of docs/architecture.md: `| tower | floor | modules |`, top floor first."""
    rows: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.startswith("|") or cells[0] in ("tower", "") or set(cells[0]) <= {"-", ":"}:
            continue
        entries = tuple(re.findall(r"`([\w.]+)`", cells[2]))
        rows.setdefault(cells[0], []).insert(0, (cells[1], entries))
    return rows


def test_the_docs_show_the_same_floors():
    assert _doc_floors() == FLOORS
