"""``tmg doctor``: a verdict per item (config, each provider it would use, contacted; memory; each MCP
server, started); exit 1 on any FAIL."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tmg.environment import Environment

if TYPE_CHECKING:
    from tmg.config.model import Config, McpServerConfig
    from tmg.llm.gateway import ProviderSpec

# The memory tools tmg calls (memory.md); a memory server must offer them, directly or via plur_admin.
_MEMORY_TOOLS = ("plur_inject_hybrid", "plur_capture", "plur_learn_batch", "plur_learn")


class _Verdicts:
    def __init__(self, envr: Environment) -> None:
        self._out = envr.stdout
        self.failed = False

    def say(self, status: str, item: str, detail: str) -> None:
        """``status`` is ok, FAIL, warn or skip. A URL's password never shows, however short."""
        from tmg.redaction import mask_url_passwords

        self.failed |= status == "FAIL"
        self._out.write(f"{status:<4}  {item}: {mask_url_passwords(detail)}\n")
        self._out.flush()


def run_doctor(config_path: str | None, envr: Environment) -> int:
    from tmg.config.loader import load_config
    from tmg.redaction import make_redactor
    from tmg.errors import TmgError

    v = _Verdicts(envr)
    try:
        config, warnings = load_config(config_path, envr.env, envr.cwd)
    except TmgError as exc:
        v.say("FAIL", "config", str(exc))
        return 1
    redact = make_redactor(config.secrets())
    v.say("ok", "config", f"{config.source} is valid" if config.source else "no file: defaults + environment")
    for w in warnings:
        v.say("warn", "config", w)
    _check_secrets(config, v)
    for w in config.withheld:  # what the untrusted project file would do, item by item
        v.say("warn", "trust", f"ignored {w.path}: it {w.detail}")
    provider_lines = _provider_verdicts(config)
    servers, skipped = _servers_to_start(config)
    probes, server_verdicts = asyncio.run(_contact(config, [p for p, _ in provider_lines if p is not None], servers,
                                                   envr.cwd))
    probed = iter(probes)
    for spec, (status, item, detail) in provider_lines:
        if spec is not None:  # contacted: the worse of the config's verdict and the answer's
            answer = next(probed)
            status = answer.status if _RANK[answer.status] > _RANK[status] else status
            detail = f"{detail}; {answer.detail}"
        v.say(status, item, redact(detail))
    _check_memory(config, v)
    for name in skipped:
        v.say("skip", f"mcp server {name}", "not started: it is the memory server and memory is off")
    for status, item, detail in server_verdicts:
        v.say(status, item, redact(detail))
    _check_sandbox(config, envr, v)
    return 1 if v.failed else 0


def _check_secrets(config: Config, v: _Verdicts) -> None:
    """A secret too short or too common to mask is left visible everywhere: say which one."""
    from tmg.redaction import unmaskable_reason

    for path, value in config.secret_entries():
        reason = unmaskable_reason(value)
        if reason is not None:
            v.say("warn", "secrets", f"{path} is {reason}, so it cannot be masked safely and is not hidden "
                                     "in history, transcript or output; use a longer, unique value if it is secret")


_RANK = {"skip": 0, "ok": 1, "warn": 2, "FAIL": 3}


def _provider_verdicts(config: Config) -> list[tuple[ProviderSpec | None, tuple[str, str, str]]]:
    """A verdict per provider tmg would use (the chosen one, then the FAILOVER_ORDER ones it
    may fall back to), each with the spec to contact, or None when there is nothing to call."""
    from tmg.config.providers import choose_provider, provider_spec
    from tmg.errors import TmgError

    try:
        provider = choose_provider(config)
    except TmgError as exc:
        return [(None, ("FAIL", "provider", str(exc)))]
    how = "SELECTED_PROVIDER" if config.selected_provider else "the first provider with an API key"
    where = f"PROVIDERS.{provider.name}.API_KEY"
    if provider.api_key:
        chosen = ("ok", "provider", f"{provider.name} ({provider.model}), chosen as {how}; API key set "
                                    f"({config.origin(where)})")
    elif provider.url:
        chosen = ("ok", "provider", f"{provider.name} ({provider.model}) at {provider.url}, no API key "
                                    "(fine for a local server)")
    else:
        return [(None, ("FAIL", "provider", f"{provider.name} ({provider.model}) has no API key "
                                            f"({config.origin(where)}); set {where} or the variable it names"))]
    lines = [(provider_spec(provider), chosen)]
    for name in config.failover_order:
        other = config.providers.get(name)
        if other is None or name == provider.name:
            continue
        item = f"failover provider {name}"
        if other.api_key or other.url:
            lines.append((provider_spec(other), ("ok", item, f"{other.model}, tried when {provider.name} fails")))
        else:
            lines.append((None, ("skip", item, "no API key nor URL: failover passes over it")))
    return lines


def _servers_to_start(config: Config) -> tuple[list[McpServerConfig], list[str]]:
    """The MCP servers to start, and the names left alone: the PLUR tmg adds for memory, while
    memory is off (no session would start it; starting it spawns node and creates a store)."""
    from tmg.mcp.server_set import is_shipped

    skipped = [name for name in config.mcp_servers if not config.memory.enabled and is_shipped(config, name)]
    return [s for n, s in config.mcp_servers.items() if n not in skipped], skipped


async def _contact(config: Config, providers: list[ProviderSpec], servers: list[McpServerConfig],
                   cwd: Path | None = None):
    """Probe the providers and start the MCP servers, all at once, each server as a chat in
    ``cwd`` starts it: told the same roots (a server may offer tools only to a client with roots,
    as server-everything's get-roots-list), so its tool count is the one `tmg mcp` and /mcp say."""
    from tmg.llm.probe import probe_all

    roots: tuple[str, ...] = ()
    if servers:
        from tmg.mcp import connection
        from tmg.mcp.server_set import mcp_roots

        roots = mcp_roots(config, cwd)

        # The SDK's import is most of a second of CPU, many on a busy machine: done before any
        # server's clock starts, so TIMEOUT measures the server and the verdict is not the load's.
        await asyncio.to_thread(connection.import_sdk)

    probes, verdicts = await asyncio.gather(
        probe_all(providers),
        asyncio.gather(*(_check_server(config, s, roots) for s in servers)),
    )
    return probes, list(verdicts)


def _check_memory(config: Config, v: _Verdicts) -> None:
    memory = config.memory
    if memory.enabled:
        v.say("ok", "memory", f"on, server {memory.server}, LEARN {memory.learn}")
    elif config.values.get("MEMORY", {}).get("ENABLED"):
        v.say("FAIL", "memory", f"MEMORY.ENABLED is true but MEMORY.SERVER {memory.server!r} is not a key of "
                                f"MCP_SERVERS; add MCP_SERVERS.{memory.server} or set MEMORY.ENABLED: false")
    else:
        v.say("ok", "memory", "off (MEMORY.ENABLED is false)")
        return
    _check_broker(v)


def _check_sandbox(config: Config, envr: Environment, v: _Verdicts) -> None:
    """The shell tool's OS sandbox: on (what it allows), off, or why it cannot work here."""
    from tmg.tools.sandbox import Sandbox

    settings = config.sandbox
    if settings.mode == "off":
        v.say("warn", "sandbox", "off (SANDBOX.MODE: off): shell commands can write anywhere you can and use the network")
        return
    sandbox = Sandbox(envr.cwd, envr.env, lambda: config)
    found = sandbox.availability()
    if not found.usable:
        if settings.mode == "on":
            v.say("FAIL", "sandbox", f"SANDBOX.MODE is on, but {found.why}; shell commands will not run")
        else:
            v.say("warn", "sandbox", f"not available: {found.why}; shell commands run without it")
        return
    confinement = sandbox.confine()
    assert confinement is not None
    network = "with network (SANDBOX.NETWORK)" if settings.network else "no network"
    v.say("ok", "sandbox", f"bubblewrap ({found.bwrap}): commands write only {', '.join(confinement.writable)} "
                           f"and a private /tmp; {network}")


def _check_broker(v: _Verdicts) -> None:
    """The warm memory broker: running, absent (fine: started on demand), or broken."""
    from tmg.broker.control import probe, summary
    from tmg.broker.paths import broker_enabled

    if not broker_enabled(os.environ):
        v.say("ok", "memory broker", "off (TMG_MEMORY_BROKER=0): each run starts its memory server")
        return
    state = probe(os.environ)
    if state.folder.exists() and state.folder.stat().st_mode & 0o077:
        v.say("FAIL", "memory broker", f"{state.folder} is open to other users; `chmod 700 {state.folder}`")
    elif state.status is not None:
        v.say("ok", "memory broker", summary(state.status))
    elif state.problem:
        v.say("warn", "memory broker", state.problem)
    else:
        v.say("ok", "memory broker", "not running; the first run that needs memory starts one")


async def _check_server(config: Config, server: McpServerConfig, roots: tuple[str, ...]) -> tuple[str, str, str]:
    from tmg.mcp.connection import McpConnection
    from tmg.mcp.oauth import OAuthStore
    from tmg.mcp.spec import spec_from_config

    item = f"mcp server {server.name}"
    key = f"MCP_SERVERS.{server.name}"
    with tempfile.TemporaryDirectory(prefix="tmg-doctor-") as tmp:
        errlog = os.path.join(tmp, "stderr.log")
        spec = spec_from_config(server, errlog, roots)
        conn = McpConnection(spec, start_timeout=server.timeout, client_name="tmg-doctor")
        conn.oauth_store = OAuthStore.for_env(os.environ)  # a stored OAuth login is used, never a new one asked for
        try:
            await asyncio.wait_for(conn.start(), server.timeout + 2)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a verdict line
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            await conn.close()
            return "FAIL", item, _why(server, key, exc, _last_line(errlog))
        try:
            tools = conn.tool_names
            detail = f"{len(tools)} tools"
            if conn.server_name:
                detail += f" ({conn.server_name} {conn.server_version or ''})".replace(" )", ")")
            if config.memory.enabled and server.name == config.memory.server:
                missing = [t for t in _MEMORY_TOOLS if t not in tools and "plur_admin" not in tools]
                if missing:
                    return "FAIL", item, (f"{detail}, but it is MEMORY.SERVER and lacks {', '.join(missing)}; "
                                          "point MEMORY.SERVER at a PLUR server")
                detail += ", memory tools present"
            return "ok", item, detail
        finally:
            await conn.close()


def _why(server: McpServerConfig, key: str, exc: BaseException, said: str) -> str:
    """One line: what went wrong, what the server said, what to fix. Never an empty reason."""
    from tmg.mcp.errors import McpStartTimeout, describe_error, is_timeout

    error = str(exc)
    if isinstance(exc, McpStartTimeout) or is_timeout(exc):
        # Our own bound around the start (spawn included) says the same as the server's clock.
        reason = (f"no MCP answer within {server.timeout:g} s; check that {key} starts an MCP server, "
                  f"or raise {key}.TIMEOUT")
    elif "FileNotFoundError" in error:
        reason = f"command {server.command!r} not found; install it or fix {key}.COMMAND"
    elif "NotADirectoryError" in error or ("No such file" in error and server.dir):
        reason = f"cannot start in DIR {server.dir!r}; fix {key}.DIR"
    else:
        detail = error.split(": ", 1)[-1].strip() or describe_error(exc)  # `name: reason`, else the type
        reason = f"did not start ({detail}); check {key}"
    return f"{reason} (server said: {said})" if said else reason


def _last_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1][:160] if lines else ""
