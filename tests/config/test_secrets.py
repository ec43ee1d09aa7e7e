"""Redaction: secrets masked in record values in every quoted form, never in JSON, keys or
structural fields; secrets too short or too common left alone; keys cleaned at load."""

from __future__ import annotations

import json

import pytest

from tmg.config.loader import load_config
from tmg.redaction import MASK, Redactor, redact_values, unmaskable_reason
from tmg.errors import ConfigError
from tmg.session.history import History

KEY = "sk-canary-0123456789"


def _record(text: str) -> dict:
    return {
        "role": "assistant", "content": text, "ts": 1.5,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": text})}}],
        "meta": {"turn": 1, "model": "openai/mock", "usage": {"in": 3, "out": 4, "cost": None}},
    }


def test_values_are_masked_and_keys_syntax_and_structure_are_not():
    redact = Redactor([KEY])
    record = _record(f"your key is {KEY}")
    line = json.dumps(redact_values(record, redact))
    assert KEY not in line
    back = json.loads(line)  # still a valid record of the same shape
    assert back["content"] == f"your key is {MASK}"
    assert KEY not in back["tool_calls"][0]["function"]["arguments"]
    assert back["role"] == "assistant" and back["meta"]["usage"]["cost"] is None
    assert back["tool_calls"][0]["id"] == "call_1" and back["tool_calls"][0]["function"]["name"] == "read_file"
    assert record["content"] == f"your key is {KEY}"  # the message in memory keeps what was said


@pytest.mark.parametrize("secret", ["null", "user", "true", "content", "assistant", "Assistant", "tool_calls"])
def test_a_short_or_common_secret_is_not_masked_anywhere(secret):
    redact = Redactor([secret])
    record = {"role": "user", "content": f"the {secret} is here", "meta": {"usage": {"cost": None}}}
    assert redact_values(record, redact) == record
    assert redact(f"/home/{secret}/project/tmg.yaml") == f"/home/{secret}/project/tmg.yaml"
    assert unmaskable_reason(secret) is not None


def test_a_long_unique_secret_is_maskable():
    assert unmaskable_reason(KEY) is None
    assert unmaskable_reason("  " + KEY + "\n") is None  # judged as loaded: stripped


def test_every_quoted_form_is_masked():
    odd = "sk-odd\\slash'quote\"x"  # a backslash and quotes: each escaping spells it differently
    redact = Redactor([KEY, odd])
    quoted = [
        f"Illegal header value b'Bearer {KEY}\\n'",  # httpx quoting the bytes it refused
        repr(odd), repr(odd.encode()), json.dumps({"k": odd}), json.dumps(f"Bearer {KEY}"),
    ]
    for text in quoted:
        shown = redact(text)
        assert KEY not in shown and odd not in shown and "odd" not in shown, shown


def test_secrets_added_later_are_masked_and_earlier_ones_stay_masked():
    redact = Redactor(["first-secret-123"])
    redact.add(["second-secret-456\n"])
    assert redact("first-secret-123 second-secret-456") == f"{MASK} {MASK}"


def test_history_with_token_like_secrets_reloads_every_record_intact(tmp_path):
    path = tmp_path / "h.jsonl"
    redact = Redactor(["null", "user", "content", "assistant", KEY])
    h = History(path, redact=redact)
    h.append({"role": "user", "content": f"what is {KEY}?"})
    h.append(_record("it is a key"))
    h.sync()
    h.close()
    warnings: list[str] = []
    again = History(path, warn=warnings.append)
    assert warnings == []
    assert [m["role"] for m in again.messages] == ["user", "assistant"]
    assert again.messages[0]["content"] == f"what is {MASK}?"
    assert again.messages[1]["meta"]["usage"]["cost"] is None
    assert again.messages[1]["tool_calls"][0]["function"]["name"] == "read_file"


def _config(tmp_path, env: dict[str, str], headers: str = ""):
    path = tmp_path / "tmg.yaml"
    path.write_text("PROVIDERS:\n  p:\n    MODEL: openai/m\n    API_KEY: ${K}\n    URL: http://127.0.0.1:1/v1\n"
                    + headers)
    return load_config(str(path), env, tmp_path)[0]


def test_surrounding_whitespace_is_stripped_from_keys_and_header_values(tmp_path):
    config = _config(tmp_path, {"K": f"  {KEY}\r\n"}, "    HEADERS: {X-Token: \" tok-abcdefgh \\n\"}\n")
    assert config.providers["p"].api_key == KEY
    assert config.providers["p"].headers == {"X-Token": "tok-abcdefgh"}


@pytest.mark.parametrize("value, what", [
    ("sk-canary\n-inner", "a line break"),
    ("sk-canary\r-inner", "a line break"),
    ("sk-canary\x00-inner", "a control character"),
    ("sk-canaryé-inner", "a non-ASCII character"),
])
def test_a_key_that_http_cannot_send_is_a_config_error_naming_it(tmp_path, value, what):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, {"K": value})
    text = str(err.value)
    assert "PROVIDERS.p.API_KEY" in text and what in text and "${K}" in text
    assert "\n" not in text and "canary" not in text


def test_a_header_value_or_name_that_http_cannot_send_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, {"K": KEY}, "    HEADERS: {X-Token: \"a\\nb-secret\"}\n")
    assert "PROVIDERS.p.HEADERS.X-Token has a line break" in str(err.value) and "b-secret" not in str(err.value)
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, {"K": KEY}, "    HEADERS: {\"X Token\": abc}\n")
    assert "not a valid HTTP header name" in str(err.value)


def test_credentials_in_urls_and_token_shaped_values_are_masked_whatever_the_key_is_called():
    from tmg.config.inspect import render_config
    from tmg.config.loader import parse_config

    token = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4"
    random_value = "Xk9pQ2mN8vL4tR7wZ1yB5cF3"
    raw = {"MCP_SERVERS": {
        "db": {"COMMAND": "db-mcp", "ARGS": ["--dsn", "mysql://root:hunter2x@db:3306/app", "--token", token],
               "ENV": {"DATABASE_URL": "postgres://u:PW@db.example/app", "SETTING": random_value, "REGION": "eu-1"}},
        "web": {"URL": "https://me:s3cr3t-pass@mcp.example/mcp"}}}
    config, _ = parse_config(raw, {}, None)
    shown = render_config(config)
    assert ":PW@" not in shown  # two letters: masked by position, too short to mask as text
    for secret in ("hunter2x", token, random_value, "s3cr3t-pass"):
        assert secret not in shown, secret
    assert "postgres://u:***@db.example/app" in shown and "mysql://root:***@db:3306/app" in shown
    assert "REGION: eu-1" in shown  # a plain value stays readable
    paths = dict(config.secret_entries())
    assert paths["MCP_SERVERS.db.ENV.DATABASE_URL (the password in its URL)"] == "PW"
    assert paths["MCP_SERVERS.db.ENV.SETTING"] == random_value and paths["MCP_SERVERS.db.ARGS[3]"] == token
    assert paths["MCP_SERVERS.web.URL (the password in its URL)"] == "s3cr3t-pass"
    history_redact = Redactor(config.secrets())  # what history and transcript mask
    assert history_redact(f"connect with {token} and hunter2x") == f"connect with {MASK} and {MASK}"


def test_ordinary_values_do_not_look_like_secrets():
    from tmg.redaction import looks_secret

    for plain in ("openai/gpt-4.1-mini", "production", "my-app-name-for-staging-2", "/home/me/project2024/v123/x",
                  "550e8400-e29b-41d4-a716-446655440000", "feature-branch-2024-10-01-final", "eu-west-1"):
        assert not looks_secret(plain), plain
    for secret in ("sk-canary-0123456789", "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4", "AKIAIOSFODNN7EXAMPLE",
                   "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6", "Xk9pQ2mN8vL4tR7wZ1yB5cF3"):
        assert looks_secret(secret), secret


def test_a_password_in_the_sync_remote_is_a_secret_and_never_in_a_repr(tmp_path):
    from tmg.config.loader import load_config

    path = tmp_path / "tmg.yaml"
    path.write_text("MEMORY:\n  SYNC:\n    REMOTE: https://me:s3cret-pass-99@git.example/m.git\n    TYPE: shared\n")
    config, _ = load_config(str(path), {"HOME": str(tmp_path)}, tmp_path)
    assert config.memory.sync.type == "shared" and config.memory.sync.automatic
    assert "s3cret-pass-99" in " ".join(config.secrets())
    assert "s3cret-pass-99" not in repr(config.memory)
