"""The config schema: every key, its type, default, range, and whether it reloads live.

Keys are upper-case, as in tell-me-go, so its MEMORY and MCP_SERVERS blocks carry over.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from tmg.config.hook_schema import validate_hooks
from tmg.config.key import DAY as _DAY
from tmg.config.key import Key
from tmg.config.mcp_schema import MCP_SERVER
from tmg.config.mode import DEFAULT_MODE, MODE_PATTERN
from tmg.config.model import BACKENDS, LEARN_TIERS, PERMISSION_MODES, SANDBOX_MODES, SYNC_TYPES, SYNC_WHEN
from tmg.config.source import _type_name

PROVIDER = {
    "MODEL": Key("str", required=True, example="openai/gpt-4.1-mini"),
    "API_KEY": Key("str", "", secret=True),
    "URL": Key("url", "", example="http://localhost:11434/v1"),
    "MAX_TOKENS": Key("int", None, minimum=1, maximum=10_000_000, hot=False),
    "HEADERS": Key("str_map", {}, secret=True),
    "BACKEND": Key("choice", "auto", choices=BACKENDS),
    # Seconds a provider may stay silent: until its first byte, then between two pieces.
    "FIRST_BYTE_TIMEOUT": Key("number", 60.0, minimum=0.1),
    "STREAM_IDLE_TIMEOUT": Key("number", 120.0, minimum=0.1),
    # Whether the model takes image input (tool results' images); unset: litellm's model map says.
    "IMAGES": Key("bool", None),
    # Tokens the model takes in, when tmg cannot know it (a local server, a new model).
    "CONTEXT_WINDOW": Key("int", None, minimum=1000, maximum=100_000_000),
}

MEMORY = {
    "ENABLED": Key("bool", True),  # the shipped PLUR serves it when MCP_SERVERS has no entry
    "SERVER": Key("str", "plur", hot=False),
    "INJECT_BUDGET": Key("int", 2000, minimum=1, maximum=1_000_000),
    "LEARN": Key("choice", "full", choices=LEARN_TIERS),
    "SCOPE": Key("str", ""),
    "MAX_LEARNS_PER_SESSION": Key("int", 3, minimum=0, maximum=10_000),
    # Keeping the store in a git remote through PLUR's plur_sync (docs/memory-sync.md).
    "SYNC": Key("block", {}, fields={
        "REMOTE": Key("str", "", example="git@github.com:you/tmg-memory.git"),
        "TYPE": Key("choice", "personal", choices=SYNC_TYPES),
        "WHEN": Key("choice", "session-end", choices=SYNC_WHEN),
    }),
}

COMPACTION = {
    "ENABLED": Key("bool", True),
    "THRESHOLD": Key("number", 0.8, minimum=0.1, maximum=1.0, example="0.8"),
    "SUMMARY_MODEL": Key("str", "", example="openai/gpt-4.1-mini"),
}

# Who may do what with the tools (SPEC §7, tmg.permissions): rules as `TOOL` or `TOOL(what)`.
PERMISSIONS = {
    "MODE": Key("choice", "default", choices=PERMISSION_MODES),
    "ALLOW": Key("str_list", [], example="[shell(git status), mcp_github_*]"),
    "ASK": Key("str_list", []),
    "DENY": Key("str_list", [], example="[shell(rm), write_file(/etc/**)]"),
}

# How shell commands are confined (tmg.tools.sandbox): bubblewrap, where it works.
SANDBOX = {
    "MODE": Key("choice", "auto", choices=SANDBOX_MODES),
    # Folders commands may write besides the working folder and a private /tmp (~ expands;
    # a relative path is the working folder's).
    "WRITABLE": Key("str_list", [], example="[~/.m2, /srv/data]"),
    "NETWORK": Key("bool", False),
}

# The most the model calls may cost, in USD, from the cost meter (tmg.session.spend); unset: no cap.
MAX_COST = {
    "SESSION": Key("number", None, minimum=0.0, maximum=1_000_000.0, example="2.50"),
    "DAY": Key("number", None, minimum=0.0, maximum=1_000_000.0, example="10"),
}

SCHEMA: dict[str, Key] = {
    # MODE names the session folder, so it is a plain name; it is fixed once a session is open.
    "MODE": Key("str", DEFAULT_MODE, pattern=MODE_PATTERN, hot=False),
    "PERSON": Key("str", ""),
    "PROVIDERS": Key("blocks", {}, fields=PROVIDER),
    "SELECTED_PROVIDER": Key("str", ""),
    "FAILOVER_ORDER": Key("str_list", []),
    "MAX_TURNS": Key("int", 200, minimum=1, maximum=1_000_000),
    "MAX_HISTORY_TOKENS": Key("int", 120_000, minimum=1000, maximum=100_000_000),
    "MAX_HISTORY_TURNS": Key("int", 0, minimum=0, maximum=1_000_000),
    "CONTEXT_WINDOW": Key("int", 0, minimum=0, maximum=100_000_000),
    "COMPACTION": Key("block", {}, fields=COMPACTION),
    "TOOL_TIMEOUT": Key("number", 30.0, minimum=0.1, maximum=_DAY),
    # Folders besides the working folder that MCP servers are told they may work in (MCP roots).
    "ROOTS": Key("str_list", [], hot=False),
    "MCP_SERVERS": Key("blocks", {}, fields=MCP_SERVER, hot=False),
    "MEMORY": Key("block", {}, fields=MEMORY),
    "PERMISSIONS": Key("block", {}, fields=PERMISSIONS),
    "SANDBOX": Key("block", {}, fields=SANDBOX, example="{MODE: off}"),
    # -- issue 25: the one-shot's spend cap and command hooks --
    # The most one prompt may spend in USD (its model calls, priced by the price map); unset: no cap.
    "MAX_BUDGET_USD": Key("number", None, minimum=0.0, maximum=1_000_000.0, example="0.50"),
    # Command hooks in Claude Code's protocol (docs/hooks.md); a project's run only once it is trusted.
    "HOOKS": Key("hooks", {}),
    "MAX_COST": Key("block", {}, fields=MAX_COST),
}

# Used when the config names no provider at all: the usual hosted APIs, keyed from the env.
DEFAULT_PROVIDERS: dict[str, dict[str, str]] = {
    "openai": {"MODEL": "openai/gpt-4.1-mini", "API_KEY": "${OPENAI_API_KEY}"},
    "anthropic": {"MODEL": "anthropic/claude-sonnet-4-5", "API_KEY": "${ANTHROPIC_API_KEY}"},
    "openrouter": {"MODEL": "openrouter/anthropic/claude-sonnet-4.5", "API_KEY": "${OPENROUTER_API_KEY}"},
    "gemini": {"MODEL": "gemini/gemini-2.5-flash", "API_KEY": "${GEMINI_API_KEY}"},
}


@dataclass
class Findings:
    """What validation found: errors block loading, warnings do not.

    ``error_paths[i]`` is the key path ``errors[i]`` is about, so the loader can add the
    file's line number and where a value came from (an environment override).
    """

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error_paths: list[str] = field(default_factory=list)

    def error(self, path: str, text: str) -> None:
        self.errors.append(text)
        self.error_paths.append(path)


def _shown(key: Key, value: Any) -> str:
    """A value quoted back in an error message; never the value of a secret key."""
    if key.secret:
        return _type_name(value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_EXPONENT = re.compile(r"[-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+")


def _number(value: float) -> str:
    """A number for a message: whole numbers without ``.0``, a huge one by its size."""
    if isinstance(value, int):
        text = str(value)
        return text if len(text) <= 20 else f"a {len(text)}-digit number"
    return f"{int(value)}" if value.is_integer() and abs(value) < 1e16 else f"{value:g}"


def _example(path: str, key: Key) -> str:
    leaf = path.rsplit(".", 1)[-1]
    if key.example:
        return f" (e.g. {leaf}: {key.example})"
    if key.kind in ("int", "number") and key.default is not None:
        return f" (e.g. {leaf}: {key.default:g})"
    return ""


def url_problem(url: str) -> str | None:
    """What is wrong with an http(s) URL, as the end of a sentence about it; None when fine.

    Checked at load, so a bad port or a missing host is a config error naming the key, not a
    failure deep in the HTTP client at the first request. The URL itself is not quoted back:
    it may hold credentials (``https://user:token@host``).
    """
    from urllib.parse import urlsplit  # only configs with a URL pay for it

    if any(c.isspace() or not c.isprintable() for c in url):
        return "contains spaces or control characters; remove them"
    try:
        parts = urlsplit(url)
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "has no host name after the scheme"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        shown = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        return f"has port {json.dumps(shown)}; a port is a number from 1 to 65535"
    return None


def _check_scalar(path: str, key: Key, value: Any, out: Findings) -> Any:
    if key.kind == "url":
        if not isinstance(value, str):
            out.error(path, f"{path} must be a URL string, not {_type_name(value)}{_example(path, key)}")
            return None
        problem = url_problem(value) if value else None
        if problem:
            out.error(path, f"{path} {problem}{_example(path, key)}")
            return None
        return value
    if key.kind in ("str", "choice"):
        if isinstance(value, bool) and key.kind == "choice" and ("on" if value else "off") in key.choices:
            value = "on" if value else "off"  # YAML 1.1 reads a bare `LEARN: off` as false
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key.kind == "str":
            value = str(value)  # MODE: 2 or MODEL: 4 are meant as text
        if not isinstance(value, str):
            out.error(path, f"{path} must be a string, not {_type_name(value)}; put the value in quotes")
            return None
        if key.kind == "choice" and value not in key.choices:
            close = difflib.get_close_matches(value, key.choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            out.error(path, f"{path} is {_shown(key, value)}; use one of: {', '.join(key.choices)}{hint}")
            return None
        if key.secret:
            return _clean_secret(path, value, out)
        if key.pattern and not re.fullmatch(key.pattern, value):
            out.error(path, f"{path} is {_shown(key, value)}; use a plain name: letters, digits, '.', '_' or '-'")
            return None
        return value
    if key.kind == "bool":
        if not isinstance(value, bool):
            out.error(path, f"{path} must be true or false, not {_shown(key, value)}")
            return None
        return value
    if key.kind in ("int", "number"):
        if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
            value = float(value)  # YAML 1.1 reads `1e5` (no dot) as a string; it is meant as a number
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            out.error(path, f"{path} must be a number, not {_shown(key, value)}{_example(path, key)}")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            out.error(path, f"{path} must be a finite number, not {value}{_example(path, key)}")
            return None
        if key.kind == "int" and isinstance(value, float):
            if not value.is_integer():
                out.error(path, f"{path} must be a whole number, not {value!r}{_example(path, key)}")
                return None
            value = int(value)
        if key.minimum is not None and value < key.minimum:
            out.error(path, f"{path} is {_number(value)}; it must be at least {_number(key.minimum)}")
            return None
        if key.maximum is not None and value > key.maximum:
            out.error(path, f"{path} is {_number(value)}; it must be at most {_number(key.maximum)}{_example(path, key)}")
            return None
        return value
    if key.kind == "str_list":
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
        ):
            out.error(path, f"{path} must be a list of strings, e.g. [a, b]")
            return None
        return [str(v) for v in value]
    if key.kind == "str_map":
        if not isinstance(value, dict):
            out.error(path, f"{path} must be a mapping of names to strings (NAME: value)")
            return None
        clean = {}
        for k, v in value.items():
            if isinstance(v, (dict, list)) or v is None:
                out.error(f"{path}.{k}", f"{path}.{k} must be a string")
                continue
            text = str(v).lower() if isinstance(v, bool) else str(v)
            if key.secret:  # HEADERS: each name and value goes on the wire as it is
                if not _HEADER_NAME.fullmatch(str(k)):
                    out.error(f"{path}.{k}", f"{path}.{_segment(str(k))} is not a valid HTTP header name; use "
                              "letters, digits and '-' only")
                    continue
                text = _clean_secret(f"{path}.{k}", text, out)
                if text is None:
                    continue
            clean[str(k)] = text
        return clean
    raise AssertionError(f"unknown kind {key.kind}")  # pragma: no cover - schema bug


# RFC 9110 token characters: what a header name may be made of.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _clean_secret(path: str, value: str, out: Findings) -> str | None:
    """An API key or header value as it must go on the wire: surrounding whitespace (the newline a
    key file or a k8s secret ends with) stripped; a line break, control or non-ASCII character
    inside is an error naming the key, never the value (HTTP cannot send it, and it must not leak)."""
    value = value.strip()
    bad = next((c for c in value if not " " <= c <= "~"), None)
    if bad is None:
        return value
    what = ("a line break" if bad in "\r\n" else "a control character" if bad.isascii()
            else "a non-ASCII character")
    out.error(path, f"{path} has {what} inside; an API key or header value must be one line of plain "
              "ASCII: fix it where it is set")
    return None


def _segment(name: str) -> str:
    """A key or entry name as shown in a path: quoted when blank or holding control characters."""
    return name if name.isprintable() and name.strip() == name and name else json.dumps(name)


# A block written as a plain value (`SANDBOX: off`) is answered with the mapping it means.
_BLOCK_EXAMPLES = {name: key.example for name, key in SCHEMA.items() if key.kind == "block" and key.example}


def validate_block(raw: Any, fields: dict[str, Key], path: str, out: Findings) -> dict[str, Any]:
    """Validate one mapping against ``fields``; unknown keys warn with the closest known key."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        example = _BLOCK_EXAMPLES.get(path, "")
        out.error(path, f"{path or 'the config'} must be a mapping of KEY: value, not {_type_name(raw)}"
                  + (f" (e.g. {path}: {example})" if example else ""))
        return {}
    clean: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for name, value in raw.items():
        name = str(name)
        where = f"{path}.{_segment(name)}" if path else _segment(name)
        key = fields.get(name) or fields.get(name.upper())
        if key is not None and (first := spelled.setdefault(name.upper(), name)) != name:
            # Keys match in any case, so a second spelling would silently win over the first
            # (and could slip past the folder-trust screen, which reads one): refuse both.
            out.error(where, f"{where} is given twice ({_segment(first)} and {_segment(name)}); keep one")
            continue
        if key is None:
            close = difflib.get_close_matches(name.upper(), fields, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else ""
            out.warnings.append(f"unknown config key {where} is ignored{hint}")
            continue
        name = name.upper()
        where = f"{path}.{name}" if path else name
        if value is None:
            continue  # `KEY:` with nothing after it means "use the default" (or "required")
        if key.kind == "block":
            clean[name] = validate_block(value, key.fields, where, out)
        elif key.kind == "hooks":
            clean[name] = validate_hooks(value, where, out)
        elif key.kind == "blocks":
            if not isinstance(value, dict):
                out.error(where, f"{where} must be a mapping of names to settings")
                continue
            clean[name] = {str(n): validate_block(b, key.fields, f"{where}.{_segment(str(n))}", out)
                           for n, b in value.items()}
        else:
            checked = _check_scalar(where, key, value, out)
            if checked is not None:
                clean[name] = checked
    for name, key in fields.items():
        if key.required and clean.get(name) in (None, ""):
            where = f"{path}.{name}" if path else name
            if not any(p == where for p in out.error_paths):
                hint = f"; add it{_example(where, key)}" if key.example else ""
                out.error(where, f"{where} is required{hint}")
    return clean
