"""The resolved config as YAML-like text, secrets masked (``tmg config``, ``/config``)."""

from __future__ import annotations

from tmg.config.model import Config
from tmg.config.secrets import make_redactor, mask


def render_config(config: Config) -> str:
    lines = [f"# source: {config.source or 'defaults + environment (no config file)'}"]
    lines += [f"MODE: {config.mode}", f"PERSON: {config.person!r}",
              f"SELECTED_PROVIDER: {config.selected_provider or '(first provider with an API key)'}",
              f"FAILOVER_ORDER: {list(config.failover_order)}", "PROVIDERS:"]
    for p in config.providers.values():
        lines += [f"  {p.name}:", f"    MODEL: {p.model}", f"    API_KEY: {mask(p.api_key)}"]
        if p.url:
            lines.append(f"    URL: {p.url}")
        if p.max_tokens:
            lines.append(f"    MAX_TOKENS: {p.max_tokens}")
        for h, v in p.headers.items():
            lines.append(f"    HEADERS.{h}: {mask(v)}")
        lines.append(f"    BACKEND: {p.backend}")
    lines += [f"MAX_TURNS: {config.max_turns}", f"MAX_HISTORY_TOKENS: {config.max_history_tokens}",
              f"MAX_HISTORY_TURNS: {config.max_history_turns}", f"TOOL_TIMEOUT: {config.tool_timeout:g}",
              "MCP_SERVERS:"]
    for s in config.mcp_servers.values():
        target = f"URL: {s.url}" if s.url else f"COMMAND: {s.command} {' '.join(s.args)}".rstrip()
        lines += [f"  {s.name}:", f"    {target}", f"    TIMEOUT: {s.timeout:g}"]
        for k, v in s.env.items():
            lines.append(f"    ENV.{k}: {v}")
    m = config.memory
    lines += ["MEMORY:", f"  ENABLED: {str(m.enabled).lower()}", f"  SERVER: {m.server}",
              f"  INJECT_BUDGET: {m.inject_budget}", f"  LEARN: {m.learn}", f"  SCOPE: {m.scope!r}",
              f"  MAX_LEARNS_PER_SESSION: {m.max_learns_per_session}"]
    # Anything secret that slipped into a plain field (a key pasted into a URL) is masked too.
    return make_redactor(config.secrets())("\n".join(lines) + "\n")
