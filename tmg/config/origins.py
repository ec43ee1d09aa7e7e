"""Where each key's value came from, as `tmg config` and error messages name it: ``file``, ``file,
${VAR}`` (``${VAR} is not set``), ``env TMG_X``, ``default``; and the line of a key in the file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from tmg.config.overrides import VAR
from tmg.config.schema import Findings, Key
from tmg.errors import ConfigError

VAR_NAMED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")  # in an origin label: file, ${VAR}
UNSET = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\} is not set")


def label(where: str, value: Any, env: Mapping[str, str]) -> str:
    """``file``, or ``file, ${VAR}`` / ``file, ${VAR} is not set`` when the value expands a variable."""
    # Only the value's own strings (a list's items, a mapping's values): never str() of a tree,
    # which would walk every use of every YAML alias in it.
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
    texts = [v for v in items if isinstance(v, str)]
    names = list(dict.fromkeys(n for t in texts for n in VAR.findall(t)))
    if not names:
        return where
    parts = [f"${{{n}}}" + ("" if env.get(n) else " is not set") for n in names]
    return f"{where}, {', '.join(parts)}"


def collect_origins(raw: Any, fields: dict[str, Key], prefix: str, where: str,
                     env: Mapping[str, str], out: dict[str, str]) -> None:
    """Record ``where`` for every leaf key the (unexpanded) mapping ``raw`` sets."""
    if not isinstance(raw, dict):
        return
    for name, value in raw.items():
        key = fields.get(str(name)) or fields.get(str(name).upper())
        if key is None or value is None:
            continue
        path = f"{prefix}.{str(name).upper()}" if prefix else str(name).upper()
        if key.kind == "block":
            collect_origins(value, key.fields, path, where, env, out)
        elif key.kind == "blocks":
            if isinstance(value, dict):
                for entry, block in value.items():
                    collect_origins(block, key.fields, f"{path}.{entry}", where, env, out)
        else:
            out[path] = label(where, value, env)


def key_lines(text: str) -> dict[str, int]:
    """Key path (upper-cased) -> 1-based line of that key in the YAML text."""
    import yaml

    lines: dict[str, int] = {}
    seen: set[int] = set()  # an aliased node is one node used many times: walk it once

    def walk(node: Any, prefix: str, depth: int) -> None:
        if not isinstance(node, yaml.MappingNode) or depth > 4 or id(node) in seen:
            return
        seen.add(id(node))
        for key_node, value_node in node.value:
            name = str(getattr(key_node, "value", "")).upper()
            path = f"{prefix}.{name}" if prefix else name
            lines.setdefault(path, key_node.start_mark.line + 1)
            walk(value_node, path, depth + 1)

    try:
        walk(yaml.compose(text), "", 0)
    except Exception:  # noqa: BLE001 - line numbers are a nicety; the message stands without them
        pass
    return lines


def locate(path: str, lines: Mapping[str, int]) -> int | None:
    path = path.upper()
    while path:
        if path in lines:
            return lines[path]
        path = path.rpartition(".")[0]
    return None


def origin_of(path: str, origins: Mapping[str, str]) -> str:
    while path:
        if path in origins:
            return origins[path]
        path = path.rpartition(".")[0]
    return "default"


def invalid_config(findings: Findings, origins: Mapping[str, str], text: str | None, source: Path | None) -> ConfigError:
    """The one error for every invalid key, each named by its line in the file, or by the
    variable its value came from."""
    lines = key_lines(text) if text else {}
    problems = []
    for message, path in zip(findings.errors, findings.error_paths):
        origin = origin_of(path, origins)
        if origin.startswith("env "):
            message += f" (set by {origin})"
            problems.append(message)
            continue
        if (unset := UNSET.findall(origin)) and "is not set" not in message:
            message += f" ({', '.join(f'${{{n}}}' for n in unset)} not set)"
        if (line := locate(path, lines)) is not None:
            message = f"line {line}: {message}"
        if variables := VAR_NAMED.findall(origin):  # the value came from the environment
            message += f" (from {', '.join(variables)})"
        problems.append(message)
    where = f" in {source}" if source else ""
    first, *more = problems
    extra = f" (and {len(more)} more: {'; '.join(more)})" if more else ""
    return ConfigError(f"invalid config{where}: {first}{extra}")

