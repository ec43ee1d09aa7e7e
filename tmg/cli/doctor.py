"""``tmg doctor``: a verdict per item (config, provider, MCP servers), exit 1 if any failed."""

from __future__ import annotations

from tmg.environment import Environment


def run_doctor(config_path: str | None, envr: Environment) -> int:
    from tmg.config.loader import load_config
    from tmg.config.providers import choose_provider
    from tmg.errors import TmgError

    out = envr.stdout
    failed = False

    def verdict(ok: bool, item: str, detail: str) -> None:
        nonlocal failed
        failed |= not ok
        out.write(f"{'ok  ' if ok else 'FAIL'}  {item}: {detail}\n")

    try:
        config, warnings = load_config(config_path, envr.env, envr.cwd)
    except TmgError as exc:
        verdict(False, "config", str(exc))
        return 1
    verdict(True, "config", str(config.source or "no file: defaults + environment"))
    for w in warnings:
        out.write(f"warn  config: {w}\n")
    try:
        provider = choose_provider(config)
        verdict(True, "provider", f"{provider.name} ({provider.model}), API key set" if provider.api_key
                else f"{provider.name} ({provider.model}), no API key (fine for local servers)")
    except TmgError as exc:
        verdict(False, "provider", str(exc))
    for name in config.mcp_servers:
        out.write(f"skip  mcp server {name}: not checked yet\n")
    return 1 if failed else 0
