"""The typed, validated configuration. Instances are immutable: a reload builds a new one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

LEARN_TIERS = ("off", "capture", "batch", "full")
# MEMORY.SYNC (docs/memory-sync.md): what the git remote is for (PLUR's remote_type), and when
# tmg syncs by itself (at a session's end, in the memory broker; or only on `tmg memory sync`).
SYNC_TYPES = ("personal", "shared")
SYNC_WHEN = ("session-end", "manual")
BACKENDS = ("auto", "native", "litellm")
PERMISSION_MODES = ("default", "accept-edits", "read-only", "plan", "yolo")
SANDBOX_MODES = ("auto", "on", "off")

# Env entries of MCP servers are secrets only when their name says so (paths and profiles are not).
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTH|CREDENTIAL", re.IGNORECASE)


def _header_secrets(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each header value, and the credential of an `Authorization: Bearer <token>`-style value on
    its own: a token quoted without its scheme (a tool result, an error) is masked too."""
    pairs = []
    for name, value in headers.items():
        pairs.append((name, value))
        scheme, _, credential = value.strip().partition(" ")
        if credential.strip() and scheme.isalpha():
            pairs.append((name, credential.strip()))
    return pairs


def _inside(path: str, value: str) -> list[tuple[str, str]]:
    """The secrets a plain value holds: all of it when it is shaped like a token, else the
    passwords of the URLs in it."""
    from tmg.redaction import looks_secret, url_passwords

    if looks_secret(value):
        return [(path, value)]
    return [(f"{path} (the password in its URL)", pw) for pw in url_passwords(value)]


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    model: str
    api_key: str = ""
    url: str = ""
    max_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    backend: str = "auto"
    first_byte_timeout: float = 60.0
    stream_idle_timeout: float = 120.0
    images: bool | None = None  # takes image input; None: as litellm's model map says
    context_window: int | None = None  # tokens the model takes in; None: CONTEXT_WINDOW or known models

    def __repr__(self) -> str:  # secrets stay out of reprs and tracebacks
        return f"ProviderConfig(name={self.name!r}, model={self.model!r}, url={self.url!r})"


@dataclass(frozen=True)
class OAuthClientConfig:
    """MCP_SERVERS.<name>.OAUTH: the user's own OAuth client for a URL server."""

    client_id: str = ""
    client_secret: str = ""
    scopes: tuple[str, ...] = ()
    grant: str = "authorization_code"  # or client_credentials: no person, no browser
    auth_method: str = ""  # "": chosen from what is given (see `token_auth`)
    key_file: str = ""  # private_key_jwt's signing key (PEM)
    key_algorithm: str = "RS256"
    issuer: str = ""  # the authorization server the credentials belong to
    client_metadata_url: str = ""  # a Client ID Metadata Document's URL, used as the client id
    redirect_port: int | None = None  # the loopback port a pre-registered client's redirect URI names

    @property
    def token_auth(self) -> str:
        """How the client authenticates at the token endpoint: AUTH_METHOD, else what is given."""
        if self.auth_method:
            return self.auth_method
        if self.key_file:
            return "private_key_jwt"
        return "client_secret_basic" if self.client_secret else "none"

    def __repr__(self) -> str:
        return f"OAuthClientConfig(client_id={self.client_id!r}, grant={self.grant!r})"


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    dir: str = ""
    url: str = ""
    timeout: float = 30.0
    requires_consent: bool = False
    warm: bool = False  # WARM: kept running between runs by the broker (tmg.broker)
    tools_include: tuple[str, ...] = ()  # glob patterns on the server's tool names; empty: all
    tools_exclude: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)
    call_timeout: float | None = None  # None: TOOL_TIMEOUT
    call_timeout_max: float = 600.0
    sampling: bool = False  # SAMPLING: the server may ask the session's model, under consent
    wait: bool = False  # WAIT: a prompt waits for it while it starts
    oauth: OAuthClientConfig | None = None  # OAUTH: the user's own OAuth client (URL servers)

    def __repr__(self) -> str:
        return f"McpServerConfig(name={self.name!r}, command={self.command!r}, url={self.url!r})"


@dataclass(frozen=True)
class SyncConfig:
    """MEMORY.SYNC: the git remote PLUR syncs the store with (empty: no automatic sync)."""

    remote: str = ""
    type: str = "personal"
    when: str = "session-end"

    def __repr__(self) -> str:  # a remote URL may carry a password
        return f"SyncConfig(type={self.type!r}, when={self.when!r})"

    @property
    def automatic(self) -> bool:
        return bool(self.remote) and self.when == "session-end"


@dataclass(frozen=True)
class MemoryConfig:
    enabled: bool = False
    server: str = "plur"
    inject_budget: int = 2000
    learn: str = "full"
    scope: str = ""
    max_learns_per_session: int = 3
    sync: SyncConfig = field(default_factory=SyncConfig)


@dataclass(frozen=True)
class CompactionConfig:
    """The budget gatekeeper's settings (COMPACTION): off means no automatic summary anywhere."""

    enabled: bool = True
    threshold: float = 0.8  # of the model's window (capped at MAX_HISTORY_TOKENS)
    summary_model: str = ""  # a model id or a PROVIDERS name; empty: the chat's own model


@dataclass(frozen=True)
class PermissionsConfig:
    mode: str = "default"
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    source: Path | None = None  # the file the rules are written in; None: the config's own


@dataclass(frozen=True)
class SandboxConfig:
    """How shell commands are confined (SANDBOX, tmg.tools.sandbox): auto is on where bubblewrap works."""

    mode: str = "auto"
    writable: tuple[str, ...] = ()  # folders besides the working folder and /tmp that commands may write
    network: bool = False


@dataclass(frozen=True)
class HookSpec:
    """One command hook of HOOKS (tmg.hooks): run on ``event`` when ``matcher`` matches."""

    event: str  # PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact
    command: str  # run by /bin/sh -c, as written
    matcher: str = ""  # "" or "*": every tool (or source, trigger); else a name, a|b, or a regex
    timeout: float = 60.0  # seconds, then it is killed
    source: str = ""  # the config file it is written in (the user's own file's beside a project's)


@dataclass(frozen=True)
class CostCaps:
    """MAX_COST: the most the model calls of one session, and of one day, may cost (USD); None: no cap."""

    session: float | None = None
    day: float | None = None


@dataclass(frozen=True)
class Config:
    mode: str = "default"
    person: str = ""
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    selected_provider: str = ""
    failover_order: tuple[str, ...] = ()
    max_turns: int = 200
    max_budget_usd: float | None = None  # the most one prompt may spend (MAX_BUDGET_USD); None: no cap
    max_history_tokens: int = 120_000
    max_history_turns: int = 0
    context_window: int = 0  # 0: from the provider, else known models, else MAX_HISTORY_TOKENS
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    tool_timeout: float = 30.0
    roots: tuple[str, ...] = ()
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    permissions: PermissionsConfig = field(default_factory=PermissionsConfig)
    # The PERMISSIONS of the user's own config file when this config is a project's: the user's
    # rules hold in every folder, beside the project's (tmg.config.loader, user_permissions).
    user_permissions: PermissionsConfig | None = None
    # HOOKS: the config file's own (a project's only when its folder is trusted), then the user's
    # own file's beside a project's, which hold in every folder (tmg.config.hooks).
    hooks: tuple[HookSpec, ...] = ()
    max_cost: CostCaps = field(default_factory=CostCaps)  # MAX_COST (tmg.session.spend)
    source: Path | None = None  # the file it came from, None for defaults + environment
    # The validated key tree this config was built from (reload compares and merges it) and,
    # per key path, where each value came from: "file", "env TMG_X", "default", "--mode".
    values: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    # A project config's trust decision (None: the user's own file) and, when untrusted, the
    # settings of the file that were not applied (tmg.config.trust).
    trust: Any = field(default=None, compare=False, repr=False)
    withheld: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def origin(self, path: str) -> str:
        """Where the value at ``path`` came from: its own entry, else its nearest parent's."""
        while path:
            if path in self.origins:
                return self.origins[path]
            path = path.rpartition(".")[0]
        return "default"

    @property
    def sandbox(self) -> SandboxConfig:
        """The SANDBOX block, read from the validated values (a reload builds a new Config)."""
        block = self.values.get("SANDBOX") or {}
        return SandboxConfig(mode=block.get("MODE", "auto"), writable=tuple(block.get("WRITABLE", ())),
                             network=bool(block.get("NETWORK", False)))

    def secret_entries(self) -> list[tuple[str, str]]:
        """(key path, value) of every secret this config holds: API keys, header values, the MCP
        server ENV entries whose name says they are secret, and, whatever a key is called, values
        shaped like a token and the passwords written inside URLs (`postgres://u:PW@host`)."""
        entries: list[tuple[str, str]] = []
        for name, provider in self.providers.items():
            entries.append((f"PROVIDERS.{name}.API_KEY", provider.api_key))
            entries.extend((f"PROVIDERS.{name}.HEADERS.{h}", v) for h, v in _header_secrets(provider.headers))
            entries.extend(_inside(f"PROVIDERS.{name}.URL", provider.url))
        for name, server in self.mcp_servers.items():
            key = f"MCP_SERVERS.{name}"
            for k, v in server.env.items():
                entries.extend([(f"{key}.ENV.{k}", v)] if _SECRET_NAME.search(k) else _inside(f"{key}.ENV.{k}", v))
            entries.extend((f"{key}.HEADERS.{h}", v) for h, v in _header_secrets(server.headers))
            entries.extend(e for i, arg in enumerate(server.args) for e in _inside(f"{key}.ARGS[{i}]", arg))
            entries.extend(_inside(f"{key}.URL", server.url))
            if server.oauth is not None:
                entries.append((f"{key}.OAUTH.CLIENT_SECRET", server.oauth.client_secret))
        entries.extend(_inside("MEMORY.SYNC.REMOTE", self.memory.sync.remote))
        return [(path, value.strip()) for path, value in entries if value and value.strip()]

    def secrets(self) -> list[str]:
        """Every secret value this config holds, for redaction of anything shown or stored
        (the redactor itself leaves alone those too short or too common to mask safely)."""
        return [value for _path, value in self.secret_entries()]
