"""Read and validate the config, one way through: which file (discovery), its text and YAML
(source), the folder's trust (trust) and what an untrusted file may not do (screen), where each
value came from (origins), ``${VAR}`` and ``TMG_*`` (overrides), the schema and the checks across
keys, the user's rules beside a project's (layering), and the typed Config (build)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping

from tmg.config.build import build_config
from tmg.config.discovery import UserFile, discover_config_path, project_folder
from tmg.config.layering import user_hooks, user_rules
from tmg.config.model import Config
from tmg.config.origins import UNSET, collect_origins, invalid_config
from tmg.config.overrides import apply_env_overrides, expand
from tmg.config.schema import DEFAULT_PROVIDERS, SCHEMA, Findings, _segment, validate_block
from tmg.config.screen import BORROWED, Withheld, screen, withheld_line
from tmg.config.shipped import HOW_TO_GET_IT, SHIPPED_SERVER, shipped_plur
from tmg.config.source import parse_yaml, read_config_text, require_mapping
from tmg.config.trust import Ask, ProjectTrust, decide
from tmg.errors import ConfigError

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
    user = UserFile(env)  # a project's config reads the user's own file too: once
    return load_file(path, env, judge=lambda raw: decide(folder, raw, env, ask, path, user), user=user)


def load_file(path: Path | None, env: Mapping[str, str], judge: Callable[[Any], ProjectTrust] | None = None,
              user: UserFile | None = None) -> tuple[Config, list[str]]:
    """Read and validate one known config file (None: defaults plus environment).

    ``judge`` decides, from the parsed file, whether a project config is trusted."""
    if path is None:
        return parse_config({}, env, None)
    text = read_config_text(path)
    raw = parse_yaml(text, path)
    return parse_config(raw, env, path, text, judge(raw) if judge is not None else None, user)


def parse_config(
    raw: Any, env: Mapping[str, str], source: Path | None, text: str | None = None,
    trust: ProjectTrust | None = None, user: UserFile | None = None,
) -> tuple[Config, list[str]]:
    """Validate already-parsed YAML plus the environment; return the config and its warnings.

    ``text`` (the file's YAML) lets error messages give the line of the key at fault.
    ``trust`` is the decision about a project config (None: the user's own file); an
    untrusted one is screened first (see :mod:`tmg.config.screen`). ``user``: the user's own
    file as this load reads it (a project's config borrows from it).

    Raises:
        ConfigError: naming every invalid key path (and line) and the fix.
    """
    try:
        return _parse(raw, env, source, text, trust, user)
    except RecursionError:
        where = f"config file {source}" if source else "the config"
        raise ConfigError(f"{where}: a value refers to itself (a YAML alias loop) or is nested too "
                          "deeply; write the values out") from None


def _parse(raw: Any, env: Mapping[str, str], source: Path | None, text: str | None,
           trust: ProjectTrust | None, user: UserFile | None) -> tuple[Config, list[str]]:
    findings = Findings()
    if raw is None:
        raw = {}
    require_mapping(raw, f"config file {source} line 1" if source else "the config")
    project = trust is not None and source is not None
    user = (user or UserFile(env)) if project else None
    withheld: list[Withheld] = []
    borrowed: Path | None = None
    if project and not trust.trusted:
        raw, withheld, borrowed = screen(raw, env, user)
        if withheld:
            findings.warnings.append(withheld_line(source, trust.folder, withheld))
    origins: dict[str, str] = {}
    collect_origins(raw, SCHEMA, "", "file", env, origins)
    if borrowed is not None:  # the user's providers, standing in for the project's withheld ones
        collect_origins({k: raw[k] for k in BORROWED if k in raw}, SCHEMA, "", f"file {borrowed}", env, origins)
    # HOOKS are shell commands run as written: their $VARs are the shell's, at run time
    # (${TMG_PROJECT_DIR}, ${CLAUDE_PROJECT_DIR}), not the loader's.
    hooks = {k: v for k, v in raw.items() if str(k).upper() == "HOOKS"}
    raw = {**expand(dict(raw), env), **hooks}
    if not any(str(k).upper() == "PROVIDERS" for k in raw):
        raw["PROVIDERS"] = expand(DEFAULT_PROVIDERS, env)
        collect_origins({"PROVIDERS": DEFAULT_PROVIDERS}, SCHEMA, "", "default", env, origins)
    for name, path in apply_env_overrides(raw, env):
        origins = {p: o for p, o in origins.items() if p != path and not p.startswith(path + ".")}
        origins[path] = f"env {name}"
    shipped_missing = _add_shipped_memory_server(raw, env, origins)
    clean = validate_block(raw, SCHEMA, "", findings)
    _check_emptied(clean, origins, findings)
    _cross_check(clean, findings, shipped_missing)
    if findings.errors:
        raise invalid_config(findings, origins, text, source)
    rules, mine = None, ()
    if project:  # a project's file: the user's rules and hooks still hold
        rules, user_warnings = user_rules(clean, origins, user, env, trust.trusted)
        mine, hook_warnings = user_hooks(user, env)
        findings.warnings.extend(user_warnings + hook_warnings)
    return build_config(clean, source, origins, trust, tuple(withheld), rules, mine), findings.warnings


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


# Keys that an unset ${VAR} must not empty: empty means something else, silently. An empty URL is
# the provider's public endpoint (the prompt and a key meant for a local server go to the
# internet), an empty SELECTED_PROVIDER another provider, an empty DIR the current folder.
_MUST_NOT_EMPTY = {"URL", "COMMAND", "DIR", "MODEL", "SELECTED_PROVIDER"}


def _check_emptied(clean: Mapping[str, Any], origins: Mapping[str, str], out: Findings) -> None:
    """An error for each key in ``_MUST_NOT_EMPTY`` that the file set from variables that are not set."""
    values = _leaves(clean)
    for path, origin in origins.items():
        unset = UNSET.findall(origin)
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
    collect_origins({"MCP_SERVERS": {SHIPPED_SERVER: entry}}, SCHEMA, "", "default", env, origins)
    return False
