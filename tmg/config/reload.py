"""What a reload may change: session-fixed keys keep their start values, and the change is described.

Pure functions over validated key trees (``Config.values``); the watcher decides when to call them.
"""

from __future__ import annotations

from typing import Any, Mapping

from tmg.config.build import build_config
from tmg.config.model import _SECRET_NAME, Config
from tmg.config.schema import SCHEMA, Key

_MISSING = object()
_MAX_SHOWN = 6  # changes listed in one announcement before "and N more"


def merge_fixed(session: Config, new: Config) -> tuple[Config, list[str]]:
    """``new`` with every session-fixed key (schema ``hot=False``) put back to its session value.

    Returns the config to install and the key paths whose new values wait for a restart.
    """
    changed: list[str] = []
    merged = _merge(SCHEMA, session.values, new.values, "", changed)
    if not changed:
        return new, []
    origins = {p: o for p, o in new.origins.items() if not any(_under(p, c) for c in changed)}
    origins.update({p: o for p, o in session.origins.items() if any(_under(p, c) for c in changed)})
    user_hooks = tuple(h for h in new.hooks if h.source != str(new.source or ""))  # the user's file's, beside a project's
    return build_config(merged, new.source, origins, new.trust, new.withheld, new.user_permissions, user_hooks), changed


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def _merge(fields: dict[str, Key], old: Mapping[str, Any], new: Mapping[str, Any], prefix: str,
           changed: list[str]) -> dict[str, Any]:
    merged = dict(new)
    for name, key in fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if not key.hot:
            before, after = old.get(name, _MISSING), new.get(name, _MISSING)
            if before != after:
                changed.append(path)
            if before is _MISSING:
                merged.pop(name, None)
            else:
                merged[name] = before
        elif key.kind == "block":
            block = _merge(key.fields, old.get(name, {}), new.get(name, {}), path, changed)
            if block or name in new:
                merged[name] = block
        elif key.kind == "blocks" and name in new:
            before_entries = old.get(name, {})
            merged[name] = {
                entry: _merge(key.fields, before_entries[entry], block, f"{path}.{entry}", changed)
                if entry in before_entries else block  # a new entry has no session value to keep
                for entry, block in new[name].items()
            }
    return merged


def describe_changes(old: Config, new: Config) -> list[str]:
    """One short phrase per changed key, values shown only when short and not secret."""
    before, after = _flatten(old.values), _flatten(new.values)
    secrets = set(old.secrets()) | set(new.secrets())
    phrases = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path, _MISSING), after.get(path, _MISSING)
        if a == b:
            continue
        if a is _MISSING or b is _MISSING:
            shown = "" if _secret_path(path) else _show(b if a is _MISSING else a, secrets)
            phrases.append(f"{path} {'set' if a is _MISSING else 'unset'}" + (f" ({shown})" if shown else ""))
            continue
        if _secret_path(path):
            phrases.append(f"{path} changed")
            continue
        a_shown, b_shown = _show(a, secrets), _show(b, secrets)
        phrases.append(f"{path} {a_shown} -> {b_shown}" if a_shown and b_shown else f"{path} changed")
    if old.user_permissions != new.user_permissions:
        mine = new.user_permissions or old.user_permissions
        phrases.append(f"PERMISSIONS in {mine.source if mine else 'your config'} changed")
    if len(phrases) > _MAX_SHOWN:
        phrases[_MAX_SHOWN:] = [f"and {len(phrases) - _MAX_SHOWN} more"]
    return phrases


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in tree.items():
        path = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, Mapping):
            flat.update(_flatten(value, path))  # an empty block is the same as a missing one
        else:
            flat[path] = value
    return flat


def _secret_path(path: str) -> bool:
    """Is the key at ``path`` secret by the schema (API_KEY, HEADERS, a token-like ENV name)?"""
    fields, parts, i = SCHEMA, path.split("."), 0
    while i < len(parts):
        key = fields.get(parts[i])
        if key is None:
            return False
        if key.secret:
            return True
        if key.kind == "block":
            fields, i = key.fields, i + 1
        elif key.kind == "blocks":
            fields, i = key.fields, i + 2
        else:
            return key.kind == "str_map" and i + 1 < len(parts) and bool(_SECRET_NAME.search(parts[i + 1]))
    return False


def _show(value: Any, secrets: set[str]) -> str:
    """A value short and harmless enough to print, else "" (the caller says "changed")."""
    if isinstance(value, str) and (value in secrets or any(s in value for s in secrets)):
        return ""
    if isinstance(value, (list, Mapping)):
        return ""
    text = repr(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= 40 and "\n" not in text else ""
