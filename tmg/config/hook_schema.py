"""The HOOKS block: command hooks in Claude Code's shape (its settings.json ``hooks``), in YAML.

    HOOKS:
      PreToolUse:
        - MATCHER: shell|write_file      # a tool name, names joined by |, or a regex; "" or * for all
          HOOKS:
            - TYPE: command              # the only type tmg runs
              COMMAND: ./.tmg/hooks/check.sh
              TIMEOUT: 10                # seconds (default 60, as Claude Code)

Keys match in any case (Claude Code's lower-case ``matcher``/``hooks``/``command`` paste in as
they are); a group may also give one COMMAND itself instead of a HOOKS list. Validation only:
the runtime is tmg.hooks, what a hook may do is docs/hooks.md.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

# The events tmg runs, in Claude Code's names; a matcher is matched against what each names.
EVENTS = {
    "PreToolUse": "the tool's name",
    "PostToolUse": "the tool's name",
    "UserPromptSubmit": "",
    "Stop": "",
    "SessionStart": "the source: startup or resume",
    "PreCompact": "the trigger: manual or auto",
}
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 86_400.0
_GROUP_KEYS = ("MATCHER", "HOOKS", "TYPE", "COMMAND", "TIMEOUT")
_HOOK_KEYS = ("TYPE", "COMMAND", "TIMEOUT")


def validate_hooks(raw: Any, path: str, out: Any) -> dict[str, list[dict[str, Any]]]:
    """The HOOKS tree, checked and normalised to ``{event: [{MATCHER, COMMAND, TIMEOUT}, ...]}``.

    ``out`` is the schema's Findings (``error(path, text)``, ``warnings``)."""
    if not isinstance(raw, dict):
        out.error(path, f"{path} must be a mapping of hook events ({', '.join(EVENTS)}) to lists of hooks")
        return {}
    by_upper = {name.upper(): name for name in EVENTS}
    clean: dict[str, list[dict[str, Any]]] = {}
    for given, groups in raw.items():
        event = by_upper.get(str(given).upper())
        where = f"{path}.{given}"
        if event is None:
            close = difflib.get_close_matches(str(given), list(EVENTS), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else f" (tmg runs: {', '.join(EVENTS)})"
            out.warnings.append(f"{where} is not a hook event tmg runs, so it is ignored{hint}")
            continue
        if groups is None:
            continue
        if not isinstance(groups, list):
            out.error(where, f"{where} must be a list of matcher groups (- MATCHER: ... HOOKS: [...])")
            continue
        entries = clean.setdefault(event, [])
        for i, group in enumerate(groups):
            entries.extend(_group(group, f"{where}[{i}]", event, out))
    return clean


def _group(group: Any, where: str, event: str, out: Any) -> list[dict[str, Any]]:
    fields = _fields(group, where, _GROUP_KEYS, out)
    if fields is None:
        return []
    matcher = fields.get("MATCHER", "")
    if matcher is None:
        matcher = ""
    if not isinstance(matcher, str):
        out.error(f"{where}.MATCHER", f"{where}.MATCHER must be a string (a tool name, a|b, or a regex)")
        return []
    if matcher and not EVENTS[event]:
        out.warnings.append(f"{where}.MATCHER is ignored: {event} hooks have no matcher")
        matcher = ""
    problem = matcher_problem(matcher)
    if problem:
        out.error(f"{where}.MATCHER", f"{where}.MATCHER {problem}")
        return []
    hooks = fields.get("HOOKS")
    if hooks is None and "COMMAND" in fields:
        hooks = [{k: v for k, v in fields.items() if k in _HOOK_KEYS}]  # the short form: one hook
    elif not isinstance(hooks, list) or "COMMAND" in fields:
        out.error(where, f"{where} needs HOOKS, a list of commands (- COMMAND: ...), or one COMMAND")
        return []
    specs = []
    for j, hook in enumerate(hooks):
        spec = _hook(hook, f"{where}.HOOKS[{j}]" if "HOOKS" in fields else where, out)
        if spec is not None:
            specs.append({"MATCHER": matcher, **spec})
    return specs


def _hook(hook: Any, where: str, out: Any) -> dict[str, Any] | None:
    fields = _fields(hook, where, _HOOK_KEYS, out)
    if fields is None:
        return None
    kind = fields.get("TYPE", "command")
    if kind != "command":
        out.error(f"{where}.TYPE", f"{where}.TYPE is {kind!r}; tmg runs only command hooks (TYPE: command)")
        return None
    command = fields.get("COMMAND")
    if not isinstance(command, str) or not command.strip():
        out.error(f"{where}.COMMAND", f"{where}.COMMAND is required: the shell command to run")
        return None
    timeout = fields.get("TIMEOUT", DEFAULT_TIMEOUT_S)
    if timeout is None:
        timeout = DEFAULT_TIMEOUT_S
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT_S:
        out.error(f"{where}.TIMEOUT", f"{where}.TIMEOUT must be a number of seconds above 0 "
                  f"(at most {MAX_TIMEOUT_S:g}; e.g. TIMEOUT: 60)")
        return None
    return {"COMMAND": command, "TIMEOUT": float(timeout)}


def _fields(value: Any, where: str, known: tuple[str, ...], out: Any) -> dict[str, Any] | None:
    """``value``'s keys upper-cased; unknown ones warned about; None (said) when it is no mapping."""
    if not isinstance(value, dict):
        out.error(where, f"{where} must be a mapping (e.g. COMMAND: ./check.sh)")
        return None
    fields: dict[str, Any] = {}
    for name, item in value.items():
        upper = str(name).upper()
        if upper not in known:
            out.warnings.append(f"unknown config key {where}.{name} is ignored")
            continue
        if upper in fields:
            out.error(f"{where}.{upper}", f"{where}.{upper} is given twice; keep one")
            return None
        fields[upper] = item
    return fields


def matcher_problem(matcher: str) -> str | None:
    """What is wrong with a matcher, as the end of a sentence about it; None when it compiles."""
    if is_plain(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"is not a valid regular expression ({exc})"
    return None


def is_plain(matcher: str) -> bool:
    """A name or names joined by ``|`` (matched exactly, as Claude Code does), or match-all."""
    return matcher in ("", "*") or re.fullmatch(r"[A-Za-z0-9_-]+(\|[A-Za-z0-9_-]+)*", matcher) is not None


def matches(matcher: str, name: str) -> bool:
    """Whether ``matcher`` picks ``name``: all for "" and ``*``; an exact name or one of ``a|b``;
    else the regex found anywhere in the name (Claude Code's rule: ``mcp_.*`` or ``Edit|Write``)."""
    if matcher in ("", "*"):
        return True
    if is_plain(matcher):
        return name in matcher.split("|")
    return re.search(matcher, name) is not None
