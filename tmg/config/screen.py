"""What an untrusted project's ``./tmg.yaml`` may not do (SPEC §3): a cloned repository can ship
one, and until its folder is trusted (tmg.config.trust) the keys that start processes or choose
where prompts and keys go are withheld, each named in one line:

- every ``MCP_SERVERS`` entry (a COMMAND runs code; a URL receives tool calls; SAMPLING lends
  the user's model and tokens), and a
  ``MEMORY.SERVER`` naming one of them (memory falls back to the default server);
- every ``PROVIDERS`` entry with a ``URL``, ``HEADERS`` or ``API_KEY`` (the endpoint and the
  credentials are what make the entry; ``${OPENAI_API_KEY}`` sent to a URL of the file's
  choosing is the leak). When none of the file's providers is left, the providers of the
  user's own config file are used, else the environment's keys as with no config;
- ``PERMISSIONS.ALLOW`` and a ``PERMISSIONS.MODE`` other than default, plan or read-only (its DENY and
  ASK rules apply: they only ever ask more). The user's own PERMISSIONS rules apply in every
  project, trusted or not (tmg.config.layering adds them);
- ``PERSON`` (the file would speak to the user's model in the user's name: its system prompt)
  and a ``SANDBOX`` setting that loosens the shell's sandbox (MODE other than on, NETWORK,
  WRITABLE);
- any other value that reads a ``${VAR}``: the file may not copy the user's environment (a
  token, say) into the prompt sent to the provider and into history.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from tmg.config.discovery import UserFile
from tmg.config.overrides import VAR

_PROVIDER_REACH = ("URL", "HEADERS", "API_KEY")  # where a provider connects and what it sends
BORROWED = ("PROVIDERS", "SELECTED_PROVIDER", "FAILOVER_ORDER")  # taken whole from the user's config


@dataclass(frozen=True)
class Withheld:
    """One setting of an untrusted project file that is not applied, and what it would do."""

    path: str  # the key path: MCP_SERVERS.x, PROVIDERS.y, MEMORY.SERVER
    detail: str  # "would run: cmd args" / "would connect to URL, sending API_KEY ..."


def _spelled_twice(mapping: Mapping[Any, Any]) -> bool:
    """Two keys of ``mapping`` that differ only in case (the schema would read both as one)."""
    upper = [str(k).upper() for k in mapping]
    return len(set(upper)) != len(upper)


def _key(mapping: Mapping[Any, Any], name: str) -> Any:
    """The key of ``mapping`` spelling ``name`` in any case (the schema matches keys so)."""
    return next((k for k in mapping if str(k).upper() == name), None)


def screen(raw: Any, env: Mapping[str, str], user: UserFile | None = None) -> tuple[Any, list[Withheld], Path | None]:
    """The untrusted project tree without what may run code or send data elsewhere, what was
    withheld, and the user's config file when its providers stand in for the withheld ones
    (``user``: the user's file as this load reads it). Malformed blocks are left to validation
    (they cannot run anything)."""
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
    borrowed = _borrow_user_providers(raw, user or UserFile(env)) if borrow else None
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
    if mode is not None and block[mode] not in ("default", "plan", "read-only"):
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
            names.update(dict.fromkeys(VAR.findall(item)))
        elif isinstance(item, (dict, list)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return ", ".join(f"${{{n}}}" for n in names)


def _borrow_user_providers(raw: dict[Any, Any], user: UserFile) -> Path | None:
    """Every project provider was withheld: answer with the user's own providers, if any.
    Returns the user's config file they came from."""
    if not user.path.is_file():
        return None  # the environment's keys (the defaults) remain
    _text, theirs = user.read()
    if not isinstance(theirs, dict) or _key(theirs, "PROVIDERS") is None:
        return None
    for name in BORROWED:
        for key in [k for k in raw if str(k).upper() == name]:
            del raw[key]
        key = _key(theirs, name)
        if key is not None:
            raw[name] = theirs[key]
    return user.path


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
