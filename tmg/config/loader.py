"""Find, read and validate the config: file, then ``${VAR}`` expansion, then ``TMG_*`` overrides."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from tmg.config.model import CompactionConfig, Config, McpServerConfig, MemoryConfig, PermissionsConfig, ProviderConfig
from tmg.config.schema import DEFAULT_PROVIDERS, SCHEMA, Findings, Key, _segment, _type_name, validate_block
from tmg.config.shipped import HOW_TO_GET_IT, SHIPPED_SERVER, shipped_plur
from tmg.config.source import check_tree_size, load_yaml, read_config_text
from tmg.config.trust import (BORROWED, Ask, ProjectTrust, Withheld, decide, project_folder, screen, user_config_file,
                              withheld_line)
from tmg.errors import ConfigError

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_VAR_NAMED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")  # in an origin label: file, ${VAR}
# TMG_* names that are not config keys: where things are, and debug switches.
_NOT_KEYS = {"TMG_HOME", "TMG_CONFIG", "TMG_DEBUG", "TMG_RETRY_BASE_DELAY", "TMG_RECALL_WAIT", "TMG_MCP_WAIT", "TMG_PLUR_DIR", "TMG_PLUR_VERSION",
             "TMG_MEMORY_BROKER", "TMG_BROKER_IDLE"}  # knobs, not keys


def discover_config_path(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """``-c PATH``, else ``TMG_CONFIG``, else ``./tmg.yaml``, else the user config dir.

    A path that exists but is not a regular file (a directory, a FIFO) is returned all the
    same: reading it fails with a line saying what it is, instead of being skipped silently.
    """
    if explicit:
        path = Path(explicit).expanduser()
        if not _exists(path):
            raise ConfigError(f"config file {path} does not exist (given with -c); check the path")
        return path
    if env.get("TMG_CONFIG"):
        path = Path(env["TMG_CONFIG"]).expanduser()
        if not _exists(path):
            raise ConfigError(f"config file {path} does not exist (named by TMG_CONFIG); fix or unset it")
        return path
    local = cwd / "tmg.yaml"
    if _exists(local):
        return local
    user = user_config_file(env)
    return user if _exists(user) else None


def _exists(path: Path) -> bool:
    """True for anything at ``path``, a dangling symlink included (reading it says what is wrong)."""
    return os.path.lexists(path)


def _read_text(path: Path) -> str:
    return read_config_text(path)


def _parse_yaml(text: str, path: Path) -> Any:
    import yaml  # only paths that read a config pay for it

    try:
        tree = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        # The end of the stream is one line past the last: point at the last line instead.
        where = f" line {min(mark.line + 1, max(1, len(text.splitlines())))}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        if isinstance(exc, yaml.reader.ReaderError):  # a control character: no mark, a position
            where = f" line {text[: exc.position].count(chr(10)) + 1}"
            code = exc.character if isinstance(exc.character, int) else ord(exc.character or "\0")
            problem = f"the control character \\x{code:02x} is not allowed (remove it)"
        raise ConfigError(f"config file {path}{where}: {problem}; fix the YAML syntax there") from exc
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise these for a few odd inputs (deep nesting, bad timestamps).
        if isinstance(exc, RecursionError):
            what = "nested too deeply"
        elif "integer string conversion" in str(exc):
            what = "a number with thousands of digits"
        else:
            what = " ".join(str(exc).split())[:120]
        raise ConfigError(f"config file {path}: cannot read a value ({what or type(exc).__name__}); "
                          "fix the YAML there") from exc
    check_tree_size(tree, f"config file {path}")
    return tree


def _expand(value: Any, env: Mapping[str, str], memo: dict[int, Any] | None = None) -> Any:
    # Memoised by identity: YAML aliases share nodes, and copying them would blow up
    # exponentially on an alias bomb instead of staying one shared object.
    memo = {} if memo is None else memo
    if isinstance(value, str):
        return _VAR.sub(lambda m: env.get(m.group(1), ""), value)
    if not isinstance(value, (list, dict)):
        return value
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, list):
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(_expand(v, env, memo) for v in value)
        return items
    mapping: dict[Any, Any] = {}
    memo[id(value)] = mapping
    mapping.update((k, _expand(v, env, memo)) for k, v in value.items())
    return mapping


def _parse_env_value(text: str) -> Any:
    import yaml

    try:
        value = load_yaml(text) if text.strip() else ""
        check_tree_size(value, "")  # an alias bomb in a variable is kept as the text it is
        return value
    except (yaml.YAMLError, ConfigError, RecursionError, ValueError, TypeError, OverflowError):
        return text


def _apply_env_overrides(raw: dict[str, Any], env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Apply ``TMG_<KEY>`` and ``TMG_<KEY>_<SUB>``; return (variable, key path) of each applied."""
    applied = []
    top_keys = sorted(SCHEMA, key=len, reverse=True)  # MAX_HISTORY_TOKENS before MAX_TURNS...
    for name, text in env.items():
        if not name.startswith("TMG_") or name in _NOT_KEYS:
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


def _label(where: str, value: Any, env: Mapping[str, str]) -> str:
    """``file``, or ``file, ${VAR}`` / ``file, ${VAR} is not set`` when the value expands a variable."""
    # Only the value's own strings (a list's items, a mapping's values): never str() of a tree,
    # which would walk every use of every YAML alias in it.
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
    texts = [v for v in items if isinstance(v, str)]
    names = list(dict.fromkeys(n for t in texts for n in _VAR.findall(t)))
    if not names:
        return where
    parts = [f"${{{n}}}" + ("" if env.get(n) else " is not set") for n in names]
    return f"{where}, {', '.join(parts)}"


def _collect_origins(raw: Any, fields: dict[str, Key], prefix: str, where: str,
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
            _collect_origins(value, key.fields, path, where, env, out)
        elif key.kind == "blocks":
            if isinstance(value, dict):
                for entry, block in value.items():
                    _collect_origins(block, key.fields, f"{path}.{entry}", where, env, out)
        else:
            out[path] = _label(where, value, env)


def _key_lines(text: str) -> dict[str, int]:
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


def _locate(path: str, lines: Mapping[str, int]) -> int | None:
    path = path.upper()
    while path:
        if path in lines:
            return lines[path]
        path = path.rpartition(".")[0]
    return None


def _quoted(text: str) -> str:
    """A name in double quotes, control characters escaped so a message stays one line."""
    return json.dumps(text, ensure_ascii=False)


def _cross_check(clean: dict[str, Any], out: Findings, shipped_missing: bool = False) -> None:
    providers = clean.get("PROVIDERS", {})
    selected = clean.get("SELECTED_PROVIDER", "")
    available = ", ".join(_segment(n) for n in providers) or "none"
    if selected and selected not in providers:
        out.error("SELECTED_PROVIDER", f'SELECTED_PROVIDER {_quoted(selected)} is not a key of PROVIDERS (available: {available})')
    for name in clean.get("FAILOVER_ORDER", []):
        if name not in providers:
            out.error("FAILOVER_ORDER", f'FAILOVER_ORDER names {_quoted(name)}, which is not a key of PROVIDERS (available: {available})')
    for raw_name, server in clean.get("MCP_SERVERS", {}).items():
        name = _segment(raw_name)
        has_command, has_url = bool(server.get("COMMAND")), bool(server.get("URL"))
        if any(p.startswith(f"MCP_SERVERS.{raw_name}.") for p in out.error_paths):
            continue  # its COMMAND or URL is already reported (e.g. emptied by an unset variable)
        if has_command == has_url:
            out.error(f"MCP_SERVERS.{name}", f"MCP_SERVERS.{name} needs exactly one of COMMAND (a stdio server) "
                      f"or URL (an HTTP server); it has {'both' if has_command else 'neither'}")
        elif has_url:
            for extra in ("ARGS", "ENV", "DIR"):
                if server.get(extra):
                    out.warnings.append(f"MCP_SERVERS.{name}.{extra} is ignored for a URL server; remove it")
        elif server.get("HEADERS"):
            out.warnings.append(f"MCP_SERVERS.{name}.HEADERS is ignored for a stdio server (use ENV); remove it")
    memory = clean.get("MEMORY", {})
    server = memory.get("SERVER", SCHEMA["MEMORY"].fields["SERVER"].default)
    enabled = memory.get("ENABLED", SCHEMA["MEMORY"].fields["ENABLED"].default)
    if enabled and server not in clean.get("MCP_SERVERS", {}):
        if shipped_missing and server == SHIPPED_SERVER:
            out.warnings.append(HOW_TO_GET_IT)
            return
        out.warnings.append(
            f'MEMORY.SERVER {_quoted(server)} is not a key of MCP_SERVERS; memory is off for this session '
            f"(add MCP_SERVERS.{_segment(server)} or set MEMORY.ENABLED: false)"
        )


def build_config(clean: dict[str, Any], source: Path | None, origins: Mapping[str, str] | None = None,
                 trust: ProjectTrust | None = None, withheld: tuple[Withheld, ...] = (),
                 user_permissions: PermissionsConfig | None = None) -> Config:
    """The typed Config from a validated key tree (see :func:`validate_block`); a project's
    config carries the user's own rules beside (``user_permissions``, see :func:`_user_permissions`)."""
    providers = {
        name: ProviderConfig(
            name=name,
            model=p["MODEL"],
            api_key=p.get("API_KEY", ""),
            url=p.get("URL", ""),
            max_tokens=p.get("MAX_TOKENS"),
            headers=p.get("HEADERS", {}),
            backend=p.get("BACKEND", "auto"),
            first_byte_timeout=float(p.get("FIRST_BYTE_TIMEOUT", 60.0)),
            stream_idle_timeout=float(p.get("STREAM_IDLE_TIMEOUT", 120.0)),
            images=p.get("IMAGES"),
            context_window=p.get("CONTEXT_WINDOW"),
        )
        for name, p in clean.get("PROVIDERS", {}).items()
    }
    servers = {
        name: McpServerConfig(
            name=name,
            command=s.get("COMMAND", ""),
            args=tuple(s.get("ARGS", [])),
            env=s.get("ENV", {}),
            dir=s.get("DIR", ""),
            url=s.get("URL", ""),
            timeout=float(s.get("TIMEOUT", 30.0)),
            requires_consent=s.get("REQUIRES_CONSENT", False),
            warm=s.get("WARM", False),
            tools_include=tuple(s.get("TOOLS", {}).get("INCLUDE", [])),
            tools_exclude=tuple(s.get("TOOLS", {}).get("EXCLUDE", [])),
            headers=s.get("HEADERS", {}),
            call_timeout=float(s["CALL_TIMEOUT"]) if s.get("CALL_TIMEOUT") is not None else None,
            call_timeout_max=float(s.get("CALL_TIMEOUT_MAX", 600.0)),
            sampling=s.get("SAMPLING", False),
        )
        for name, s in clean.get("MCP_SERVERS", {}).items()
    }
    m = clean.get("MEMORY", {})
    memory = MemoryConfig(
        enabled=m.get("ENABLED", SCHEMA["MEMORY"].fields["ENABLED"].default) and m.get("SERVER", "plur") in servers,
        server=m.get("SERVER", "plur"),
        inject_budget=m.get("INJECT_BUDGET", 2000),
        learn=m.get("LEARN", "full"),
        scope=m.get("SCOPE", ""),
        max_learns_per_session=m.get("MAX_LEARNS_PER_SESSION", 3),
    )
    c = clean.get("COMPACTION", {})
    compaction = CompactionConfig(
        enabled=c.get("ENABLED", True),
        threshold=float(c.get("THRESHOLD", 0.8)),
        summary_model=c.get("SUMMARY_MODEL", ""),
    )
    permissions = _permissions(clean.get("PERMISSIONS", {}))
    return Config(
        mode=clean.get("MODE", "default") or "default",
        person=clean.get("PERSON", ""),
        providers=providers,
        selected_provider=clean.get("SELECTED_PROVIDER", ""),
        failover_order=tuple(clean.get("FAILOVER_ORDER", [])),
        max_turns=clean.get("MAX_TURNS", 200),
        max_history_tokens=clean.get("MAX_HISTORY_TOKENS", 120_000),
        max_history_turns=clean.get("MAX_HISTORY_TURNS", 0),
        context_window=clean.get("CONTEXT_WINDOW", 0),
        compaction=compaction,
        tool_timeout=float(clean.get("TOOL_TIMEOUT", 30.0)),
        roots=tuple(clean.get("ROOTS", [])),
        mcp_servers=servers,
        memory=memory,
        permissions=permissions,
        user_permissions=user_permissions,
        source=source,
        values=clean,
        origins=dict(origins or {}),
        trust=trust,
        withheld=withheld,
    )


def parse_config(
    raw: Any, env: Mapping[str, str], source: Path | None, text: str | None = None,
    trust: ProjectTrust | None = None,
) -> tuple[Config, list[str]]:
    """Validate already-parsed YAML plus the environment; return the config and its warnings.

    ``text`` (the file's YAML) lets error messages give the line of the key at fault.
    ``trust`` is the decision about a project config (None: the user's own file); an
    untrusted one is screened first (see :mod:`tmg.config.trust`).

    Raises:
        ConfigError: naming every invalid key path (and line) and the fix.
    """
    try:
        return _parse(raw, env, source, text, trust)
    except RecursionError:
        where = f"config file {source}" if source else "the config"
        raise ConfigError(f"{where}: a value refers to itself (a YAML alias loop) or is nested too "
                          "deeply; write the values out") from None


def _require_mapping(raw: Any, where: str) -> None:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: the top level must be a mapping of KEY: value lines, not {_type_name(raw)}")


def _parse(raw: Any, env: Mapping[str, str], source: Path | None, text: str | None,
           trust: ProjectTrust | None = None) -> tuple[Config, list[str]]:
    findings = Findings()
    if raw is None:
        raw = {}
    _require_mapping(raw, f"config file {source} line 1" if source else "the config")
    withheld: list[Withheld] = []
    borrowed: Path | None = None
    if trust is not None and not trust.trusted and source is not None:
        raw, withheld, borrowed = screen(raw, env)
        if withheld:
            findings.warnings.append(withheld_line(source, trust.folder, withheld))
    origins: dict[str, str] = {}
    _collect_origins(raw, SCHEMA, "", "file", env, origins)
    if borrowed is not None:  # the user's providers, standing in for the project's withheld ones
        _collect_origins({k: raw[k] for k in BORROWED if k in raw}, SCHEMA, "", f"file {borrowed}", env, origins)
    raw = _expand(dict(raw), env)
    if not any(str(k).upper() == "PROVIDERS" for k in raw):
        raw["PROVIDERS"] = _expand(DEFAULT_PROVIDERS, env)
        _collect_origins({"PROVIDERS": DEFAULT_PROVIDERS}, SCHEMA, "", "default", env, origins)
    for name, path in _apply_env_overrides(raw, env):
        origins = {p: o for p, o in origins.items() if p != path and not p.startswith(path + ".")}
        origins[path] = f"env {name}"
    shipped_missing = _add_shipped_memory_server(raw, env, origins)
    clean = validate_block(raw, SCHEMA, "", findings)
    _check_emptied(clean, origins, findings)
    _cross_check(clean, findings, shipped_missing)
    if findings.errors:
        lines = _key_lines(text) if text else {}
        problems = []
        for message, path in zip(findings.errors, findings.error_paths):
            origin = _origin_of(path, origins)
            if origin.startswith("env "):
                message += f" (set by {origin})"
                problems.append(message)
                continue
            if (unset := _UNSET.findall(origin)) and "is not set" not in message:
                message += f" ({', '.join(f'${{{n}}}' for n in unset)} not set)"
            if (line := _locate(path, lines)) is not None:
                message = f"line {line}: {message}"
            if variables := _VAR_NAMED.findall(origin):  # the value came from the environment
                message += f" (from {', '.join(variables)})"
            problems.append(message)
        where = f" in {source}" if source else ""
        first, *more = problems
        extra = f" (and {len(more)} more: {'; '.join(more)})" if more else ""
        raise ConfigError(f"invalid config{where}: {first}{extra}")
    user = None
    if trust is not None and source is not None:  # a project's file: the user's rules still hold
        found, user_warnings = _user_permissions(env)
        findings.warnings.extend(user_warnings)
        if found is not None:
            block, path = found
            _take_user_mode(clean, origins, block.get("MODE"), path, trust.trusted)
            user = _permissions(block, path)
    return build_config(clean, source, origins, trust, tuple(withheld), user), findings.warnings


def _permissions(block: Mapping[str, Any], source: Path | None = None) -> PermissionsConfig:
    return PermissionsConfig(
        mode=block.get("MODE", "default"),
        allow=tuple(block.get("ALLOW", [])),
        ask=tuple(block.get("ASK", [])),
        deny=tuple(block.get("DENY", [])),
        source=source,
    )


def _user_permissions(env: Mapping[str, str]) -> tuple[tuple[dict[str, Any], Path] | None, list[str]]:
    """The validated PERMISSIONS block of the user's own config file and that file (None when it
    has none), and warnings.

    A project's ./tmg.yaml takes the place of the user's file as the config, but not of the
    user's rules: a deny rule written once must not be bypassed by changing into a folder that
    has a tmg.yaml. They are merged with the project's by the permission engine (deny beats ask
    beats allow, wherever a rule was written). An unreadable or invalid block is an error, as it
    is for the user's file anywhere else: going on without the user's deny rules is not safe.
    """
    path = user_config_file(env)
    if not _exists(path):
        return None, []
    text = _read_text(path)
    raw = _parse_yaml(text, path)
    if raw is None:
        return None, []
    _require_mapping(raw, f"config file {path} line 1")
    wanted = {k: v for k, v in raw.items() if str(k).upper() == "PERMISSIONS"}
    if not wanted:
        return None, []
    findings = Findings()
    clean = validate_block(_expand(wanted, env), {"PERMISSIONS": SCHEMA["PERMISSIONS"]}, "", findings)
    if findings.errors:
        lines = _key_lines(text)
        problems = [f"line {line}: {m}" if (line := _locate(p, lines)) is not None else m
                    for m, p in zip(findings.errors, findings.error_paths)]
        raise ConfigError(f"invalid config in {path}: {'; '.join(problems)} (your PERMISSIONS apply in every "
                          "folder, a project's too); fix them there")
    if "PERMISSIONS" not in clean:
        return None, []
    return (clean["PERMISSIONS"], path), [f"{path}: {w}" for w in findings.warnings]


# The permission modes, each allowing less than the one before it.
_LOOSEST_FIRST = ("yolo", "accept-edits", "default", "read-only")


def _take_user_mode(clean: dict[str, Any], origins: dict[str, str], theirs: str | None, path: Path,
                    trusted: bool) -> None:
    """The user's PERMISSIONS.MODE holds in a project unless the project sets one: a trusted
    project (or a TMG_PERMISSIONS_MODE variable) wins, an untrusted one only when it allows less.
    ``--permissions`` beats them all (the engine)."""
    if theirs is None:
        return
    block = clean.setdefault("PERMISSIONS", {})
    own = block.get("MODE")
    if own is not None and (trusted or origins.get("PERMISSIONS.MODE", "").startswith("env ")
                            or _LOOSEST_FIRST.index(own) >= _LOOSEST_FIRST.index(theirs)):
        return
    block["MODE"] = theirs
    origins["PERMISSIONS.MODE"] = f"file {path}"


# Keys that an unset ${VAR} must not empty: empty means something else, silently. An empty URL is
# the provider's public endpoint (the prompt and a key meant for a local server go to the
# internet), an empty SELECTED_PROVIDER another provider, an empty DIR the current folder.
_MUST_NOT_EMPTY = {"URL", "COMMAND", "DIR", "MODEL", "SELECTED_PROVIDER"}
_UNSET = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\} is not set")


def _check_emptied(clean: Mapping[str, Any], origins: Mapping[str, str], out: Findings) -> None:
    """An error for each key in ``_MUST_NOT_EMPTY`` that the file set from variables that are not set."""
    values = _leaves(clean)
    for path, origin in origins.items():
        unset = _UNSET.findall(origin)
        if not unset or not origin.startswith("file") or path.rpartition(".")[2] not in _MUST_NOT_EMPTY:
            continue
        if values.get(path) or path in out.error_paths:
            continue  # not empty (a partly expanded URL is checked as a URL), or already reported
        names = ", ".join(f"${{{n}}}" for n in unset)
        fix = (f"; set {unset[0]}, or remove {path} to use the provider's default endpoint"
               if path.startswith("PROVIDERS.") and path.endswith(".URL") else f"; set {unset[0]} or write the value out")
        out.error(path, f"{path} is empty because {names} is not set{fix}")


def _leaves(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Key path -> value for every leaf of a validated tree (paths as origins spell them)."""
    flat: dict[str, Any] = {}
    for name, value in tree.items():
        path = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, dict) and (not prefix or name not in ("HEADERS", "ENV")):
            flat.update(_leaves(value, path))
        else:
            flat[path] = value
    return flat


def _entry(raw: Mapping[Any, Any], name: str) -> tuple[Any, Any]:
    """(key, value) of ``name`` in ``raw``, matched case-insensitively as the schema does."""
    return next(((k, v) for k, v in raw.items() if str(k).upper() == name), (name, None))


def _add_shipped_memory_server(raw: dict[str, Any], env: Mapping[str, str], origins: dict[str, str]) -> bool:
    """Add the shipped PLUR as ``MCP_SERVERS.plur`` when MEMORY.SERVER is ``plur`` and the
    config has no such entry (see :mod:`tmg.config.shipped`). Returns True when it was
    wanted for memory but is not installed, so the warning can say how to get it."""
    _, memory = _entry(raw, "MEMORY")
    memory = memory if isinstance(memory, dict) else {}
    if _entry(memory, "SERVER")[1] not in (None, SHIPPED_SERVER):
        return False
    servers_key, servers = _entry(raw, "MCP_SERVERS")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict) or SHIPPED_SERVER in servers:
        return False  # a malformed block is validation's to report; an own entry wins
    entry = shipped_plur(env)
    if entry is None:
        return _entry(memory, "ENABLED")[1] in (None, True)
    raw[servers_key] = {**servers, SHIPPED_SERVER: entry}
    _collect_origins({"MCP_SERVERS": {SHIPPED_SERVER: entry}}, SCHEMA, "", "default", env, origins)
    return False


def _origin_of(path: str, origins: Mapping[str, str]) -> str:
    while path:
        if path in origins:
            return origins[path]
        path = path.rpartition(".")[0]
    return "default"


def load_file(path: Path | None, env: Mapping[str, str],
              judge: Callable[[Any], ProjectTrust] | None = None) -> tuple[Config, list[str]]:
    """Read and validate one known config file (None: defaults plus environment).

    ``judge`` decides, from the parsed file, whether a project config is trusted."""
    if path is None:
        return parse_config({}, env, None)
    text = _read_text(path)
    raw = _parse_yaml(text, path)
    return parse_config(raw, env, path, text, judge(raw) if judge is not None else None)


def load_config(
    explicit: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    ask: Ask | None = None,
) -> tuple[Config, list[str]]:
    """Discover, read and validate the config. Returns the config and warnings to show.

    ``ask`` may trust an untrusted project folder now (the REPL asks; nothing else does)."""
    env = os.environ if env is None else env
    cwd = cwd or Path.cwd()
    path = discover_config_path(explicit, env, cwd)
    folder = project_folder(path, explicit, env, cwd) if path is not None else None
    if folder is None:
        return load_file(path, env)
    return load_file(path, env, judge=lambda raw: decide(folder, raw, env, ask, path))
