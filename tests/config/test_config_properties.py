"""Property tests: whatever the file or environment holds, loading raises only ConfigError, and
its message names a key or a line a user can go to."""

from __future__ import annotations

import math
import re
import string

import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tmg.config.loader import load_file
from tmg.config.model import LEARN_TIERS, Config
from tmg.config.schema import SCHEMA, Key
from tmg.errors import ConfigError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _key_names(fields: dict[str, Key]) -> set[str]:
    names = set(fields)
    for key in fields.values():
        names |= _key_names(key.fields)
    return names


KEY_NAMES = _key_names(SCHEMA)
_NAMES_A_PLACE = re.compile(r"\bline \d+\b|\b(" + "|".join(sorted(KEY_NAMES, key=len, reverse=True)) + r")\b")

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**20) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20) | st.sampled_from(["batch", "openai/x", "${HOME}", "${UNSET_VAR}", "1e3", "~"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _good(key: Key) -> st.SearchStrategy:
    if key.kind == "choice":
        return st.sampled_from(key.choices)
    if key.kind == "bool":
        return st.booleans()
    if key.kind == "int":
        return st.integers(int(key.minimum or 0), 10**6)
    if key.kind == "number":
        return st.floats(key.minimum or 0, 1e4)
    if key.kind == "str_list":
        return st.lists(st.text(string.ascii_lowercase, min_size=1, max_size=6), max_size=3)
    if key.kind == "str_map":
        return st.dictionaries(st.text(string.ascii_uppercase + "_", min_size=1, max_size=8), st.text(max_size=10),
                               max_size=2)
    return st.text(string.ascii_letters + string.digits + "-_/.", min_size=1, max_size=20)


def _name(name: str) -> st.SearchStrategy:
    # The real name, its lower-case form, or a typo of it (unknown keys must only warn).
    return st.sampled_from([name, name.lower(), name[:-1], name + "S"])


def _block(fields: dict[str, Key]) -> st.SearchStrategy:
    entries = {
        name: st.tuples(_name(name), _value(key)) for name, key in fields.items()
    }
    known = st.lists(st.sampled_from(sorted(entries)), unique=True, max_size=len(entries)).flatmap(
        lambda chosen: st.tuples(*(entries[n] for n in chosen)).map(dict) if chosen else st.just({})
    )
    unknown = st.dictionaries(st.text(max_size=10), junk, max_size=2)  # typos, stray keys, odd names
    return st.tuples(unknown, known).map(lambda pair: {**pair[0], **pair[1]})


def _value(key: Key) -> st.SearchStrategy:
    if key.kind == "block":
        good = _block(key.fields)
    elif key.kind == "blocks":
        good = st.dictionaries(st.sampled_from(["mock", "plur", "a", "b-2"]), _block(key.fields), max_size=2)
    else:
        good = _good(key)
    return st.one_of(good, good, good, junk)  # mostly well-typed, so the cross-checks are reached


configs = _block(SCHEMA)


def _load(tmp_path, text: str, env: dict[str, str] | None = None) -> tuple[Config, list[str]] | ConfigError:
    path = tmp_path / "tmg.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        return load_file(path, env or {})
    except ConfigError as exc:
        return exc


def _check(outcome) -> None:
    if isinstance(outcome, ConfigError):
        message = str(outcome)
        assert _NAMES_A_PLACE.search(message), f"names no key and no line: {message}"
        assert "\n" not in message, f"more than one line: {message!r}"
        return
    config, warnings = outcome
    assert all(isinstance(w, str) and w and "\n" not in w for w in warnings)
    assert config.max_turns >= 1 and config.max_history_tokens >= 1000
    assert math.isfinite(config.tool_timeout) and config.tool_timeout >= 0.1
    assert config.memory.learn in LEARN_TIERS
    for server in config.mcp_servers.values():
        assert bool(server.command) != bool(server.url)
        assert math.isfinite(server.timeout)
    if config.selected_provider:
        assert config.selected_provider in config.providers


@SETTINGS
@given(raw=configs)
def test_generated_configs_load_or_fail_naming_the_place(tmp_path, raw):
    _check(_load(tmp_path, yaml.safe_dump(raw, allow_unicode=True)))


VALID = """\
MODE: work
PERSON: |
  You are terse.
PROVIDERS:
  mock:
    MODEL: openai/mock
    API_KEY: ${KEY}
    URL: http://127.0.0.1:9/v1
    HEADERS: {X-A: b}
SELECTED_PROVIDER: mock
FAILOVER_ORDER: [mock]
MAX_TURNS: 5
TOOL_TIMEOUT: 2.5
MCP_SERVERS:
  plur:
    COMMAND: plur
    ARGS: [--x]
    ENV: {A: b}
    TIMEOUT: 3
MEMORY:
  ENABLED: true
  LEARN: full
  INJECT_BUDGET: 100
"""

_SPECIAL = ":-[]{},&*!|>'\"%@`#\t\n ?~=\\$0123456789aZ"


@st.composite
def mutated(draw) -> str:
    text = VALID
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "dup_line", "indent", "junk_value"]))
        if action == "insert":
            text = text[:where] + draw(st.text(_SPECIAL, min_size=1, max_size=4)) + text[where:]
        elif action == "delete":
            text = text[:where] + text[where + draw(st.integers(1, 12)):]
        elif action == "replace":
            text = text[:where] + draw(st.sampled_from(_SPECIAL)) + text[where + 1:]
        else:
            lines = text.splitlines(keepends=True)
            i = draw(st.integers(0, len(lines) - 1))
            if action == "dup_line":
                lines.insert(i, lines[i])
            elif action == "indent":
                lines[i] = draw(st.sampled_from(["  ", "    ", "\t", ""])) + lines[i].lstrip(" ")
            elif ":" in lines[i]:
                head = lines[i].split(":", 1)[0]
                lines[i] = f"{head}: {draw(st.sampled_from(['[', '{', '0', '-1', 'nan', '.inf', 'yes', '~', '*x', '&a [*a]', '!!binary AA==', '2024-01-01']))}\n"
            text = "".join(lines)
    return text


@SETTINGS
@given(text=mutated())
@example(text="MAX_TURNS: &a [*a]\n")  # an alias loop
@example(text="a: &a [*a, *a]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nPERSON: *c\n")  # an alias bomb
@example(text="- just\n- a list\n")
@example(text="MAX_TURNS: .nan\n")
@example(text="\ufeffMAX_TURNS: 3\n")
@example(text="PROVIDERS:\n  p:\n    MODEL:\n")
def test_mutated_files_load_or_fail_naming_the_place(tmp_path, text):
    _check(_load(tmp_path, text, {"KEY": "k-123456"}))


@SETTINGS
@given(
    name=st.sampled_from(["TMG_MAX_TURNS", "TMG_MEMORY_LEARN", "TMG_MEMORY_ENABLED", "TMG_TOOL_TIMEOUT",
                          "TMG_SELECTED_PROVIDER", "TMG_FAILOVER_ORDER", "TMG_MODE", "TMG_MEMORY_NOPE",
                          "TMG_PERSON", "TMG_MAX_HISTORY_TOKENS"]),
    value=st.text(max_size=12) | st.sampled_from(["[", "{a: 1}", "- x", ".nan", "0", "full", "mock, other"]),
)
def test_env_overrides_load_or_fail_naming_the_key_or_variable(tmp_path, name, value):
    assume("\x00" not in value)
    outcome = _load(tmp_path, VALID, {"KEY": "k-123456", name: value})
    _check(outcome)
    if isinstance(outcome, ConfigError) and name[4:] in KEY_NAMES:
        assert f"set by env {name}" in str(outcome)


@SETTINGS
@given(raw=configs)
def test_secret_values_never_appear_in_error_messages(tmp_path, raw):
    providers = raw.get("PROVIDERS") if isinstance(raw.get("PROVIDERS"), dict) else {}
    raw["PROVIDERS"] = {**providers, "vault": {"MODEL": 7, "API_KEY": ["sk-never-shown-123"],
                                               "HEADERS": {"X": ["hdr-never-shown-456"]}}}
    outcome = _load(tmp_path, yaml.safe_dump(raw))
    assert isinstance(outcome, ConfigError)
    assert "sk-never-shown-123" not in str(outcome) and "hdr-never-shown-456" not in str(outcome)
