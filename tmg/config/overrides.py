"""What the environment changes in a config: a ``${VAR}`` inside a value expands to the variable
(empty when it is unset), and ``TMG_<KEY>`` and ``TMG_<KEY>_<SUB>`` variables set keys over the
file's (their values read as YAML: ``TMG_MAX_TURNS=5`` is a number)."""

from __future__ import annotations

import re
from typing import Any, Mapping

from tmg.config.schema import SCHEMA
from tmg.config.source import check_tree_size, load_yaml
from tmg.errors import ConfigError

VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# TMG_* names that are not config keys: where things are, and debug switches.
NOT_KEYS = {"TMG_HOME", "TMG_CONFIG", "TMG_DEBUG", "TMG_RETRY_BASE_DELAY", "TMG_RECALL_WAIT", "TMG_MCP_WAIT", "TMG_PLUR_DIR", "TMG_PLUR_VERSION",
             "TMG_MEMORY_BROKER", "TMG_BROKER_IDLE"}  # knobs, not keys


def expand(value: Any, env: Mapping[str, str], memo: dict[int, Any] | None = None) -> Any:
    # Memoised by identity: YAML aliases share nodes, and copying them would blow up
    # exponentially on an alias bomb instead of staying one shared object.
    memo = {} if memo is None else memo
    if isinstance(value, str):
        return VAR.sub(lambda m: env.get(m.group(1), ""), value)
    if not isinstance(value, (list, dict)):
        return value
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, list):
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(expand(v, env, memo) for v in value)
        return items
    mapping: dict[Any, Any] = {}
    memo[id(value)] = mapping
    mapping.update((k, expand(v, env, memo)) for k, v in value.items())
    return mapping


def _parse_env_value(text: str) -> Any:
    import yaml

    try:
        value = load_yaml(text) if text.strip() else ""
        check_tree_size(value, "")  # an alias bomb in a variable is kept as the text it is
        return value
    except (yaml.YAMLError, ConfigError, RecursionError, ValueError, TypeError, OverflowError):
        return text


def apply_env_overrides(raw: dict[str, Any], env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Apply ``TMG_<KEY>`` and ``TMG_<KEY>_<SUB>``; return (variable, key path) of each applied."""
    applied = []
    top_keys = sorted(SCHEMA, key=len, reverse=True)  # MAX_HISTORY_TOKENS before MAX_TURNS...
    for name, text in env.items():
        if not name.startswith("TMG_") or name in NOT_KEYS:
            continue
        rest = name[4:]
        for key in top_keys:
            spec = SCHEMA[key]
            if rest == key and spec.kind not in ("block", "blocks"):
                for other in [k for k in raw if str(k).upper() == key]:
                    del raw[other]  # a lower-case `max_turns:` in the file must not win over it
                raw[key] = _parse_env_value(text)
                applied.append((name, key))
                break
            if rest.startswith(key + "_") and spec.kind == "block":
                block = raw.get(key)
                if block is not None and not isinstance(block, dict):
                    break  # the file's block is malformed: validation says so, not hidden by this
                block = dict(block) if isinstance(block, dict) else {}
                block[rest[len(key) + 1:]] = _parse_env_value(text)
                raw[key] = block
                applied.append((name, f"{key}.{rest[len(key) + 1:].upper()}"))
                break
    return applied
