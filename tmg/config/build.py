"""The typed Config from a validated key tree: the one place a tree of keys becomes the Config
the rest of tmg reads (at start, and for every reload)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from tmg.config.mode import DEFAULT_MODE
from tmg.config.model import (CompactionConfig, Config, CostCaps, HookSpec, McpServerConfig, MemoryConfig,
                              OAuthClientConfig,
                              PermissionsConfig, ProviderConfig, SyncConfig)
from tmg.config.schema import SCHEMA

if TYPE_CHECKING:
    from tmg.config.screen import Withheld
    from tmg.config.trust import ProjectTrust


def build_config(clean: dict[str, Any], source: Path | None, origins: Mapping[str, str] | None = None,
                 trust: ProjectTrust | None = None, withheld: tuple[Withheld, ...] = (),
                 user_permissions: PermissionsConfig | None = None, user_hooks: tuple[HookSpec, ...] = ()) -> Config:
    """The typed Config from a validated key tree (see :func:`validate_block`); a project's
    config carries the user's own rules and hooks beside (``user_permissions``, ``user_hooks``,
    tmg.config.layering)."""
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
            wait=s.get("WAIT", False),
            oauth=oauth_client(s["OAUTH"]) if s.get("OAUTH") else None,
        )
        for name, s in clean.get("MCP_SERVERS", {}).items()
    }
    m = clean.get("MEMORY", {})
    sync = m.get("SYNC", {})
    memory = MemoryConfig(
        enabled=m.get("ENABLED", SCHEMA["MEMORY"].fields["ENABLED"].default) and m.get("SERVER", "plur") in servers,
        server=m.get("SERVER", "plur"),
        inject_budget=m.get("INJECT_BUDGET", 2000),
        learn=m.get("LEARN", "full"),
        scope=m.get("SCOPE", ""),
        max_learns_per_session=m.get("MAX_LEARNS_PER_SESSION", 3),
        sync=SyncConfig(remote=sync.get("REMOTE", "").strip(), type=sync.get("TYPE", "personal"),
                        when=sync.get("WHEN", "session-end")),
    )
    c = clean.get("COMPACTION", {})
    compaction = CompactionConfig(
        enabled=c.get("ENABLED", True),
        threshold=float(c.get("THRESHOLD", 0.8)),
        summary_model=c.get("SUMMARY_MODEL", ""),
    )
    permissions = permissions_config(clean.get("PERMISSIONS", {}))
    return Config(
        mode=clean.get("MODE", DEFAULT_MODE) or DEFAULT_MODE,
        person=clean.get("PERSON", ""),
        providers=providers,
        selected_provider=clean.get("SELECTED_PROVIDER", ""),
        failover_order=tuple(clean.get("FAILOVER_ORDER", [])),
        max_turns=clean.get("MAX_TURNS", 200),
        max_budget_usd=float(clean["MAX_BUDGET_USD"]) if clean.get("MAX_BUDGET_USD") is not None else None,
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
        hooks=_unique(hook_specs(clean.get("HOOKS", {}), source) + user_hooks),
        max_cost=CostCaps(session=clean.get("MAX_COST", {}).get("SESSION"), day=clean.get("MAX_COST", {}).get("DAY")),
        source=source,
        values=clean,
        origins=dict(origins or {}),
        trust=trust,
        withheld=withheld,
    )


def oauth_client(block: Mapping[str, Any]) -> OAuthClientConfig:
    return OAuthClientConfig(
        client_id=block.get("CLIENT_ID", ""), client_secret=block.get("CLIENT_SECRET", ""),
        scopes=tuple(block.get("SCOPES", [])), grant=block.get("GRANT", "authorization_code"),
        auth_method=block.get("AUTH_METHOD", ""), key_file=block.get("KEY_FILE", ""),
        key_algorithm=block.get("KEY_ALGORITHM", "RS256"), issuer=block.get("ISSUER", ""),
        client_metadata_url=block.get("CLIENT_METADATA_URL", ""), redirect_port=block.get("REDIRECT_PORT"))


def permissions_config(block: Mapping[str, Any], source: Path | None = None) -> PermissionsConfig:
    return PermissionsConfig(
        mode=block.get("MODE", "default"),
        allow=tuple(block.get("ALLOW", [])),
        ask=tuple(block.get("ASK", [])),
        deny=tuple(block.get("DENY", [])),
        source=source,
    )


def hook_specs(block: Mapping[str, Any], source: Path | None) -> tuple[HookSpec, ...]:
    """The HOOKS tree (as tmg.config.hook_schema leaves it) as hook specs, in file order."""
    return tuple(HookSpec(event, h["COMMAND"], h["MATCHER"], h["TIMEOUT"], str(source or ""))
                 for event, entries in block.items() for h in entries)


def _unique(specs: tuple[HookSpec, ...]) -> tuple[HookSpec, ...]:
    """Each (event, matcher, command) once: the same hook in the user's and the project's file runs
    once, as Claude Code runs identical commands once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for spec in specs:
        if (spec.event, spec.matcher, spec.command) not in seen:
            seen.add((spec.event, spec.matcher, spec.command))
            out.append(spec)
    return tuple(out)
