"""The resolved config as YAML-like text (``tmg config``, ``/config``).

Every key of the schema is shown, with its value and where it came from (``# file``,
``# env TMG_MAX_TURNS``, ``# file, ${OPENAI_API_KEY} is not set``, ``# default``). Secret values
are masked, and any secret that slipped into a plain field is masked by a final redaction pass.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from tmg.config.model import _SECRET_NAME, Config
from tmg.config.schema import SCHEMA, Key
from tmg.redaction import looks_secret, make_redactor, mask, mask_url_passwords

_COMMENT_COLUMN = 44
_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_ ./:@+-]*")


def render_config(config: Config) -> str:
    """The config, one key per line, each with its origin; secrets masked."""
    source = f"config file: {config.source}" if config.source else "no config file: defaults + environment"
    lines = [f"# {source}", *_trust_lines(config), *_user_permission_lines(config),
             "# after '#': where each value came from (file, env TMG_*, --mode, default)"]
    values = dict(config.values)
    values["MODE"] = config.mode  # a --mode override is not in the file's values
    _render_block(config, SCHEMA, values, "", 0, lines)
    return make_redactor(config.secrets())("\n".join(lines) + "\n")


def _trust_lines(config: Config) -> list[str]:
    """Whether a project config's folder is trusted and, if not, what of it is ignored."""
    trust = config.trust
    if trust is None:
        return []
    if trust.trusted:
        return [f"# project config, folder trusted (undo with: tmg trust --revoke {trust.folder})"]
    if not config.withheld:
        return ["# project config, folder not trusted (nothing in it needs trust)"]
    lines = [f"# project config, folder NOT trusted: ignoring what could run code, send data elsewhere or "
             "instruct your model "
             f"(tmg trust {trust.folder} applies it):"]
    lines.extend(f"#   {w.path}: {w.detail}" for w in config.withheld)
    return lines


def _user_permission_lines(config: Config) -> list[str]:
    """A project config's session also applies the user's own PERMISSIONS rules: say which."""
    mine = config.user_permissions
    if mine is None:
        return []
    rules = [f"{name} {', '.join(texts)}" for name, texts in (("DENY", mine.deny), ("ASK", mine.ask),
                                                             ("ALLOW", mine.allow)) if texts]
    return [f"# and your PERMISSIONS rules from {mine.source}: {'; '.join(rules) or 'none'}"]


def _render_block(config: Config, fields: Mapping[str, Key], values: Mapping[str, Any], prefix: str,
                  depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    for name, key in fields.items():
        path = f"{prefix}.{name}" if prefix else name
        value = values.get(name, key.default)
        if key.kind == "block":
            lines.append(f"{pad}{name}:")
            _render_block(config, key.fields, value or {}, path, depth + 1, lines)
        elif key.kind == "blocks":
            entries = value or {}
            origin = config.origin(path) if not entries else ""
            lines.append(_with_comment(f"{pad}{name}:" + ("" if entries else " {}"), origin))
            for entry, block in entries.items():
                lines.append(f"{pad}  {entry}:")
                _render_block(config, key.fields, block, f"{path}.{entry}", depth + 2, lines)
        elif key.kind == "hooks":
            lines.extend(_hook_lines(config, pad, name, path))
        elif key.kind == "str_map" and value:
            lines.append(_with_comment(f"{pad}{name}:", config.origin(path)))
            for item, text in value.items():
                hidden = key.secret or (name == "ENV" and _SECRET_NAME.search(item)) or looks_secret(text)
                lines.append(f"{pad}  {item}: {mask(text) if hidden else _scalar(mask_url_passwords(text))}")
        else:
            hidden = isinstance(value, str) and (key.secret or looks_secret(value))
            shown = mask(value) if hidden else _scalar(_masked_urls(value))
            lines.append(_with_comment(f"{pad}{name}: {shown}", _note(config, path, config.origin(path))))


def _hook_lines(config: Config, pad: str, name: str, path: str) -> list[str]:
    """The hooks that run (the user's own beside a project's among them), one line each."""
    if not config.hooks:
        return [_with_comment(f"{pad}{name}: {{}}", config.origin(path))]
    lines = [f"{pad}{name}:"]
    for h in config.hooks:
        where = f"{h.event} {h.matcher}" if h.matcher else h.event
        lines.append(_with_comment(f"{pad}  - {where}: {_scalar(h.command)}",
                                   f"timeout {h.timeout:g} s, file {h.source}" if h.source else f"timeout {h.timeout:g} s"))
    return lines


def _note(config: Config, path: str, origin: str) -> str:
    """The origin, plus what a value means in effect when that differs from what it says."""
    if path == "SELECTED_PROVIDER" and not config.selected_provider:
        keyed = [n for n in list(config.failover_order) + list(config.providers) if n in config.providers
                 and config.providers[n].api_key]
        chosen = keyed[0] if keyed else "none: no provider has an API key"
        return f"{origin}: the first provider with an API key ({chosen})"
    if path == "MEMORY.ENABLED" and config.values.get("MEMORY", {}).get("ENABLED") and not config.memory.enabled:
        return f"{origin}; memory is off: MEMORY.SERVER {config.memory.server!r} is not in MCP_SERVERS"
    return origin


def _masked_urls(value: Any) -> Any:
    """A value with the password of each URL in it masked (a list's items each), whatever its
    length: the redaction pass after leaves a password too short to mask anywhere else."""
    if isinstance(value, str):
        return mask_url_passwords(value)
    if isinstance(value, (list, tuple)):
        return [v if not isinstance(v, str) else mask(v) if looks_secret(v) else mask_url_passwords(v) for v in value]
    return value


def _with_comment(line: str, comment: str) -> str:
    if not comment:
        return line
    return f"{line.ljust(_COMMENT_COLUMN - 1)} # {comment}"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{}" if not value else json.dumps(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.strip() == text and text.lower() not in ("true", "false", "null", "yes", "no"):
        return text
    return json.dumps(text, ensure_ascii=False)
