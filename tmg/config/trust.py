"""Folder trust (SPEC §3): a project's ``./tmg.yaml`` may not run code or send data elsewhere
until the user trusts its folder.

A cloned repository can ship a ``tmg.yaml``. Until its folder is trusted, the keys of that file
that start processes or choose where prompts and keys go are withheld:

- every ``MCP_SERVERS`` entry (a COMMAND runs code; a URL receives tool calls; SAMPLING lends
  the user's model and tokens), and a
  ``MEMORY.SERVER`` naming one of them (memory falls back to the default server);
- every ``PROVIDERS`` entry with a ``URL``, ``HEADERS`` or ``API_KEY`` (the endpoint and the
  credentials are what make the entry; ``${OPENAI_API_KEY}`` sent to a URL of the file's
  choosing is the leak). When none of the file's providers is left, the providers of the
  user's own config file are used, else the environment's keys as with no config;
- ``PERMISSIONS.ALLOW`` and a ``PERMISSIONS.MODE`` other than default or read-only (its DENY and
  ASK rules apply: they only ever ask more). The user's own PERMISSIONS rules apply in every
  project, trusted or not (tmg.config.loader adds them);
- ``PERSON`` (the file would speak to the user's model in the user's name: its system prompt)
  and a ``SANDBOX`` setting that loosens the shell's sandbox (MODE other than on, NETWORK,
  WRITABLE);
- any other value that reads a ``${VAR}``: the file may not copy the user's environment (a
  token, say) into the prompt sent to the provider and into history.

The user's own config (``-c``, ``TMG_CONFIG``, the XDG file) is always trusted.

Trust is kept in ``$XDG_CONFIG_HOME/tmg/trusted.json`` (0600, replaced atomically), one entry
per folder: its resolved real path plus the folder's device and inode. Resolving means trusting
through a symlink trusts the folder it points at, and a link re-pointed elsewhere is not trusted;
the inode means a folder deleted and re-cloned (or another one moved in) at the same path is
asked about again.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from tmg.config.private_file import write_private_json
from tmg.errors import ConfigError

TRUST_FILE = "trusted.json"
PROJECT_FILE = "tmg.yaml"
USER_FILE = "config.yaml"
_PROVIDER_REACH = ("URL", "HEADERS", "API_KEY")  # where a provider connects and what it sends
BORROWED = ("PROVIDERS", "SELECTED_PROVIDER", "FAILOVER_ORDER")  # taken whole from the user's config
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # as the loader expands them


@dataclass(frozen=True)
class Withheld:
    """One setting of an untrusted project file that is not applied, and what it would do."""

    path: str  # the key path: MCP_SERVERS.x, PROVIDERS.y, MEMORY.SERVER
    detail: str  # "would run: cmd args" / "would connect to URL, sending API_KEY ..."


@dataclass(frozen=True)
class ProjectTrust:
    """The decision for one session's project config; fixed for the session (reloads keep it)."""

    folder: Path  # the resolved folder holding the project tmg.yaml
    trusted: bool


Ask = Callable[[Path, list[Withheld]], bool]


# -- the store -------------------------------------------------------------------------------


def user_config_dir(env: Mapping[str, str]) -> Path:
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "tmg"


def user_config_file(env: Mapping[str, str]) -> Path:
    """The user's own config file (it may not exist)."""
    return user_config_dir(env) / USER_FILE


def _identity(folder: Path) -> tuple[str, int, int] | None:
    """(real path, device, inode) of an existing folder, else None."""
    real = os.path.realpath(folder)
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (real, st.st_dev, st.st_ino) if os.path.isdir(real) else None


class TrustStore:
    """The user's trusted folders."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> "TrustStore":
        return cls(user_config_dir(env) / TRUST_FILE)

    def entries(self) -> list[dict[str, Any]]:
        """The stored entries; a missing file is none. Raises ConfigError on a damaged file."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the trust file {self.path} ({exc}); fix or delete it") from exc
        try:
            data = json.loads(text)
            entries = data["folders"]
            if not isinstance(entries, list) or not all(
                isinstance(e, dict) and isinstance(e.get("path"), str) for e in entries
            ):
                raise ValueError
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the trust file {self.path} is damaged; delete it and run `tmg trust` again") from exc
        return entries

    def is_trusted(self, folder: Path) -> bool:
        """True when ``folder`` (resolved) is stored with the same device and inode.

        A damaged store trusts nothing (the warning about withheld keys still names the fix)."""
        ident = _identity(folder)
        if ident is None:
            return False
        try:
            entries = self.entries()
        except ConfigError:
            return False
        return any(_matches(e, ident) for e in entries)

    def trust(self, folder: Path) -> str:
        """Trust ``folder``; returns its resolved path. Raises ConfigError if it is not a folder."""
        ident = _identity(folder)
        if ident is None:
            raise ConfigError(f"{folder} is not a folder; give the folder that holds the tmg.yaml to trust")
        real, dev, ino = ident
        kept = [e for e in self.entries() if e.get("path") != real]
        kept.append({"path": real, "device": dev, "inode": ino,
                     "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self._write(kept)
        return real

    def revoke(self, folder: Path) -> str | None:
        """Forget ``folder`` (resolved, or as stored when it is gone); returns the path forgotten."""
        entries = self.entries()
        names = {os.path.realpath(folder), os.path.abspath(folder)}
        kept = [e for e in entries if e.get("path") not in names]
        if len(kept) == len(entries):
            return None
        self._write(kept)
        return next(e["path"] for e in entries if e.get("path") in names)

    def listing(self) -> list[tuple[str, bool]]:
        """(path, still the same folder) for each entry."""
        out = []
        for e in self.entries():
            ident = _identity(Path(e["path"]))
            out.append((e["path"], ident is not None and _matches(e, ident)))
        return out

    def _write(self, entries: list[dict[str, Any]]) -> None:
        write_private_json(self.path, {"version": 1, "folders": entries})


def _matches(entry: Mapping[str, Any], ident: tuple[str, int, int]) -> bool:
    real, dev, ino = ident
    return entry.get("path") == real and entry.get("device") == dev and entry.get("inode") == ino


# -- the project file ------------------------------------------------------------------------


def project_folder(path: Path, explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The folder of ``path`` when it is a project config (``./tmg.yaml`` found in the working
    folder, not named by ``-c`` or ``TMG_CONFIG``), else None."""
    if explicit or env.get("TMG_CONFIG") or path != cwd / PROJECT_FILE:
        return None
    return Path(os.path.realpath(cwd))


def decide(folder: Path, raw: Any, env: Mapping[str, str], ask: Ask | None, source: Path) -> ProjectTrust:
    """Trusted when the store says so; otherwise ``ask`` (the REPL) may trust it now, once."""
    store = TrustStore.for_env(env)
    if store.is_trusted(folder):
        return ProjectTrust(folder, True)
    if ask is not None:
        _, withheld, _ = screen(raw, env)
        if withheld and ask(source, withheld):
            store.trust(folder)
            return ProjectTrust(folder, True)
    return ProjectTrust(folder, False)


def _spelled_twice(mapping: Mapping[Any, Any]) -> bool:
    """Two keys of ``mapping`` that differ only in case (the schema would read both as one)."""
    upper = [str(k).upper() for k in mapping]
    return len(set(upper)) != len(upper)


def _key(mapping: Mapping[Any, Any], name: str) -> Any:
    """The key of ``mapping`` spelling ``name`` in any case (the schema matches keys so)."""
    return next((k for k in mapping if str(k).upper() == name), None)


def screen(raw: Any, env: Mapping[str, str]) -> tuple[Any, list[Withheld], Path | None]:
    """The untrusted project tree without what may run code or send data elsewhere, what was
    withheld, and the user's config file when its providers stand in for the withheld ones.
    Malformed blocks are left to validation (they cannot run anything)."""
    if not isinstance(raw, dict):
        return raw, [], None
    memory = raw.get(_key(raw, "MEMORY"))
    if _spelled_twice(raw) or (isinstance(memory, dict) and _spelled_twice(memory)):
        # The screen reads one spelling of each key; validation refuses a key spelled twice, so
        # leave the tree whole for it to refuse rather than screen one spelling and pass the other.
        return raw, [], None
    raw = dict(raw)
    withheld: list[Withheld] = []
    servers_key = _key(raw, "MCP_SERVERS")
    servers = raw.pop(servers_key) if servers_key is not None else None
    if isinstance(servers, dict):
        withheld.extend(Withheld(f"MCP_SERVERS.{_shown(name)}", _server_detail(block)) for name, block in servers.items())
    elif servers is not None:
        withheld.append(Withheld("MCP_SERVERS", "would start MCP servers"))
    memory_key = _key(raw, "MEMORY")
    if isinstance(servers, dict) and memory_key is not None and isinstance(raw[memory_key], dict):
        memory = dict(raw[memory_key])
        server_key = _key(memory, "SERVER")
        if server_key is not None and isinstance(memory[server_key], str) and memory[server_key] in servers:
            withheld.append(Withheld("MEMORY.SERVER", f"would keep memories with {_shown(memory[server_key])}"))
            del memory[server_key]
            raw[memory_key] = memory
    borrow = _screen_providers(raw, withheld)
    _screen_permissions(raw, withheld)
    _screen_words_and_sandbox(raw, withheld)
    _screen_variables(raw, withheld)
    # After the variable screen: the user's own file may read the environment.
    borrowed = _borrow_user_providers(raw, env) if borrow else None
    return raw, withheld, borrowed


def _screen_providers(raw: dict[Any, Any], withheld: list[Withheld]) -> bool:
    """Withhold every provider that sets where it connects or what it sends, or reads the
    environment; returns True when that left the file with none of its own."""
    providers_key = _key(raw, "PROVIDERS")
    providers = raw.get(providers_key) if providers_key is not None else None
    if not isinstance(providers, dict):
        return False
    dropped = set()
    kept = {}
    for name, block in providers.items():
        reach = [k for k in block if str(k).upper() in _PROVIDER_REACH] if isinstance(block, dict) else []
        reads = _variables(block)
        if reach or reads:
            dropped.add(name)
            detail = _provider_detail(block) if reach else f"would read {reads} from your environment"
            withheld.append(Withheld(f"PROVIDERS.{_shown(name)}", detail))
        else:
            kept[name] = block
    if not dropped:
        return False
    selected_key = _key(raw, "SELECTED_PROVIDER")
    if selected_key is not None and isinstance(raw[selected_key], str) and raw[selected_key] in dropped:
        del raw[selected_key]
    order_key = _key(raw, "FAILOVER_ORDER")
    if order_key is not None:
        order = raw[order_key]
        names = [p.strip() for p in order.split(",")] if isinstance(order, str) else order
        if isinstance(names, list):
            raw[order_key] = [n for n in names if not (isinstance(n, str) and n in dropped)]
    if kept:
        raw[providers_key] = kept
        return False
    del raw[providers_key]
    return True


def _screen_permissions(raw: dict[Any, Any], withheld: list[Withheld]) -> None:
    """An untrusted file may deny or ask, never allow: its ALLOW rules and a MODE that allows
    more than the default would let the model run what the user never agreed to."""
    key = _key(raw, "PERMISSIONS")
    if key is None or not isinstance(raw[key], dict) or _spelled_twice(raw[key]):
        return
    block = dict(raw[key])
    allow = _key(block, "ALLOW")
    if allow is not None:
        withheld.append(Withheld("PERMISSIONS.ALLOW", f"would allow {_shown(block[allow])} without asking"))
        del block[allow]
    mode = _key(block, "MODE")
    if mode is not None and block[mode] not in ("default", "read-only"):
        withheld.append(Withheld("PERMISSIONS.MODE", f"would set permission mode {_shown(block[mode])}"))
        del block[mode]
    raw[key] = block


def _screen_words_and_sandbox(raw: dict[Any, Any], withheld: list[Withheld]) -> None:
    """An untrusted file may not speak to the user's model (PERSON is its system prompt: "always run
    rm -rf ~ first") nor loosen the shell's sandbox (MODE off or auto, NETWORK, WRITABLE)."""
    person = _key(raw, "PERSON")
    if person is not None and raw[person] not in (None, ""):
        said = _shown(raw[person])
        withheld.append(Withheld("PERSON", f"would instruct your model: {said[:77] + '...' if len(said) > 80 else said}"))
        del raw[person]
    key = _key(raw, "SANDBOX")
    if key is None or not isinstance(raw[key], dict) or _spelled_twice(raw[key]):
        return
    block = dict(raw[key])
    for name, loosens in (("MODE", lambda v: v not in ("on", True)), ("NETWORK", lambda v: v is not False),
                          ("WRITABLE", lambda v: v not in (None, [], ""))):
        sub = _key(block, name)
        if sub is not None and loosens(block[sub]):
            withheld.append(Withheld(f"SANDBOX.{name}", f"would set the shell's sandbox {name} to {_shown(block[sub])}"))
            del block[sub]
    raw[key] = block


def _screen_variables(raw: dict[Any, Any], withheld: list[Withheld]) -> None:
    """An untrusted file may not read the user's environment: a ``${VAR}`` would put its value
    (a token, say) into the prompt sent to the provider and into history."""
    for key in list(raw):
        name = _shown(key).upper()
        value = raw[key]
        if isinstance(value, dict) and name != "PROVIDERS":  # MEMORY: withhold key by key
            block = dict(value)
            for sub in list(block):
                reads = _variables(block[sub])
                if reads:
                    withheld.append(Withheld(f"{name}.{_shown(sub).upper()}", f"would read {reads} from your environment"))
                    del block[sub]
            raw[key] = block
        elif name != "PROVIDERS" and (reads := _variables(value)):
            withheld.append(Withheld(name, f"would read {reads} from your environment"))
            del raw[key]


def _variables(value: Any) -> str:
    """The ``${VAR}`` names ``value`` reads, as ``${A}, ${B}`` ("" for none). Containers are
    walked once each: a YAML alias bomb shares nodes, and must not be walked exponentially."""
    names: dict[str, None] = {}
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            names.update(dict.fromkeys(_VAR.findall(item)))
        elif isinstance(item, (dict, list)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return ", ".join(f"${{{n}}}" for n in names)


def _borrow_user_providers(raw: dict[Any, Any], env: Mapping[str, str]) -> Path | None:
    """Every project provider was withheld: answer with the user's own providers, if any.
    Returns the user's config file they came from."""
    from tmg.config.loader import _parse_yaml, _read_text

    user = user_config_file(env)
    if not user.is_file():
        return None  # the environment's keys (the defaults) remain
    theirs = _parse_yaml(_read_text(user), user)
    if not isinstance(theirs, dict) or _key(theirs, "PROVIDERS") is None:
        return None
    for name in BORROWED:
        for key in [k for k in raw if str(k).upper() == name]:
            del raw[key]
        key = _key(theirs, name)
        if key is not None:
            raw[name] = theirs[key]
    return user


def _shown(value: Any) -> str:
    """A value as written in the file, one line, control characters escaped (a command must
    not be able to hide part of itself on the terminal). Only scalars are spelled out: a
    container may be an alias bomb whose text is astronomically long."""
    if isinstance(value, (dict, list)):
        return "(a list)" if isinstance(value, list) else "(a mapping)"
    text = str(value)[:500]
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _server_detail(block: Any) -> str:
    if not isinstance(block, dict):
        return "would start an MCP server"
    get = {str(k).upper(): v for k, v in block.items()}
    if get.get("URL"):
        return f"would connect to {_shown(get['URL'])}"
    args = get.get("ARGS") or []
    args = args if isinstance(args, list) else [args]
    detail = f"would run: {_shown(shlex.join([_shown(get.get('COMMAND', ''))] + [_shown(a) for a in args]))}"
    if isinstance(get.get("ENV"), dict) and get["ENV"]:
        detail += f" (with ENV {', '.join(_shown(k) for k in get['ENV'])})"
    if get.get("DIR"):
        detail += f" in {_shown(get['DIR'])}"
    if get.get("SAMPLING") is True:
        detail += ", and let it ask your model (SAMPLING)"
    return detail


def _provider_detail(block: dict[Any, Any]) -> str:
    get = {str(k).upper(): v for k, v in block.items()}
    parts = [f"would connect to {_shown(get['URL'])}" if get.get("URL") else "would connect to its model's API"]
    sends = []
    if "API_KEY" in get:
        sends.append(f"API_KEY {_secret_source(get['API_KEY'])}")
    if isinstance(get.get("HEADERS"), dict) and get["HEADERS"]:
        sends.append("HEADERS " + ", ".join(f"{_shown(k)} {_secret_source(v)}" for k, v in get["HEADERS"].items()))
    if sends:
        parts.append("sending " + " and ".join(sends))
    return ", ".join(parts)


def _secret_source(value: Any) -> str:
    """Where a secret value comes from (the variables it names), never the value itself."""
    names = _variables(value)
    return f"(from {names})" if names else "(a value written in the file)"


def withheld_line(source: Path, folder: Path, withheld: list[Withheld]) -> str:
    """The one line a run that does not apply them says about the withheld settings."""
    names = ", ".join(w.path for w in withheld)
    return (f"{source} is in a folder you have not trusted; ignoring {names} (they could run code, send "
            f"data elsewhere or instruct your model); to use them run: tmg trust {_shown(folder)}")
