"""Find, read and validate the config: file, then ``${VAR}`` expansion, then ``TMG_*`` overrides."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping

from tmg.config.model import Config, McpServerConfig, MemoryConfig, ProviderConfig
from tmg.config.schema import DEFAULT_PROVIDERS, SCHEMA, Findings, validate_block
from tmg.errors import ConfigError

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# TMG_* names that are not config keys: where things are, and debug switches.
_NOT_KEYS = {"TMG_HOME", "TMG_CONFIG", "TMG_DEBUG"}


def discover_config_path(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """``-c PATH``, else ``TMG_CONFIG``, else ``./tmg.yaml``, else the user config dir."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist (given with -c); check the path")
        return path
    if env.get("TMG_CONFIG"):
        path = Path(env["TMG_CONFIG"]).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist (named by TMG_CONFIG); fix or unset it")
        return path
    local = cwd / "tmg.yaml"
    if local.is_file():
        return local
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    user = base / "tmg" / "config.yaml"
    return user if user.is_file() else None


def read_yaml(path: Path) -> Any:
    """Parse a YAML file; a syntax error names the file and line."""
    import yaml  # only paths that read a config pay for it

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"config file {path}{where}: {problem}; fix the YAML syntax there") from exc


def _expand(value: Any, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _VAR.sub(lambda m: env.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [_expand(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, env) for k, v in value.items()}
    return value


def _parse_env_value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        return text


def _apply_env_overrides(raw: dict[str, Any], env: Mapping[str, str]) -> list[str]:
    """Apply ``TMG_<KEY>`` and ``TMG_<KEY>_<SUB>``; return the names applied."""
    applied = []
    top_keys = sorted(SCHEMA, key=len, reverse=True)  # MAX_HISTORY_TOKENS before MAX_TURNS...
    for name, text in env.items():
        if not name.startswith("TMG_") or name in _NOT_KEYS:
            continue
        rest = name[4:]
        for key in top_keys:
            spec = SCHEMA[key]
            if rest == key and spec.kind not in ("block", "blocks"):
                raw[key] = _parse_env_value(text)
                applied.append(name)
                break
            if rest.startswith(key + "_") and spec.kind == "block":
                block = raw.get(key)
                block = dict(block) if isinstance(block, dict) else {}
                block[rest[len(key) + 1:]] = _parse_env_value(text)
                raw[key] = block
                applied.append(name)
                break
    return applied


def _cross_check(clean: dict[str, Any], out: Findings) -> None:
    providers = clean.get("PROVIDERS", {})
    selected = clean.get("SELECTED_PROVIDER", "")
    available = ", ".join(providers) or "none"
    if selected and selected not in providers:
        out.errors.append(f'SELECTED_PROVIDER "{selected}" is not a key of PROVIDERS (available: {available})')
    for name in clean.get("FAILOVER_ORDER", []):
        if name not in providers:
            out.errors.append(f'FAILOVER_ORDER names "{name}", which is not a key of PROVIDERS (available: {available})')
    for name, server in clean.get("MCP_SERVERS", {}).items():
        has_command, has_url = bool(server.get("COMMAND")), bool(server.get("URL"))
        if has_command == has_url:
            out.errors.append(f"MCP_SERVERS.{name} needs exactly one of COMMAND (a stdio server) or URL (an HTTP server)")
    memory = clean.get("MEMORY", {})
    server = memory.get("SERVER", SCHEMA["MEMORY"].fields["SERVER"].default)
    if memory.get("ENABLED") and server not in clean.get("MCP_SERVERS", {}):
        out.warnings.append(
            f'MEMORY.SERVER "{server}" is not a key of MCP_SERVERS; memory is off for this session '
            f"(add MCP_SERVERS.{server} or set MEMORY.ENABLED: false)"
        )


def _build(clean: dict[str, Any], source: Path | None) -> Config:
    providers = {
        name: ProviderConfig(
            name=name,
            model=p["MODEL"],
            api_key=p.get("API_KEY", ""),
            url=p.get("URL", ""),
            max_tokens=p.get("MAX_TOKENS"),
            headers=p.get("HEADERS", {}),
            backend=p.get("BACKEND", "auto"),
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
        )
        for name, s in clean.get("MCP_SERVERS", {}).items()
    }
    m = clean.get("MEMORY", {})
    memory = MemoryConfig(
        enabled=m.get("ENABLED", False) and m.get("SERVER", "plur") in servers,
        server=m.get("SERVER", "plur"),
        inject_budget=m.get("INJECT_BUDGET", 2000),
        learn=m.get("LEARN", "batch"),
        scope=m.get("SCOPE", ""),
        max_learns_per_session=m.get("MAX_LEARNS_PER_SESSION", 3),
    )
    return Config(
        mode=clean.get("MODE", "default") or "default",
        person=clean.get("PERSON", ""),
        providers=providers,
        selected_provider=clean.get("SELECTED_PROVIDER", ""),
        failover_order=tuple(clean.get("FAILOVER_ORDER", [])),
        max_turns=clean.get("MAX_TURNS", 200),
        max_history_tokens=clean.get("MAX_HISTORY_TOKENS", 120_000),
        max_history_turns=clean.get("MAX_HISTORY_TURNS", 0),
        tool_timeout=float(clean.get("TOOL_TIMEOUT", 30.0)),
        mcp_servers=servers,
        memory=memory,
        source=source,
    )


def parse_config(raw: Any, env: Mapping[str, str], source: Path | None) -> tuple[Config, list[str]]:
    """Validate already-parsed YAML plus the environment; return the config and its warnings.

    Raises:
        ConfigError: naming every invalid key path and the fix.
    """
    findings = Findings()
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        where = f"config file {source}" if source else "the config"
        raise ConfigError(f"{where} must be a mapping of KEY: value at the top level, not a {type(raw).__name__}")
    raw = _expand(dict(raw), env)
    if "PROVIDERS" not in raw and "providers" not in raw:
        raw["PROVIDERS"] = _expand(DEFAULT_PROVIDERS, env)
    _apply_env_overrides(raw, env)
    clean = validate_block(raw, SCHEMA, "", findings)
    _cross_check(clean, findings)
    if findings.errors:
        where = f" in {source}" if source else ""
        first, *more = findings.errors
        extra = f" (and {len(more)} more: {'; '.join(more)})" if more else ""
        raise ConfigError(f"invalid config{where}: {first}{extra}")
    return _build(clean, source), findings.warnings


def load_config(
    explicit: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Config, list[str]]:
    """Discover, read and validate the config. Returns the config and warnings to show."""
    env = os.environ if env is None else env
    path = discover_config_path(explicit, env, cwd or Path.cwd())
    raw = read_yaml(path) if path else {}
    return parse_config(raw, env, path)
