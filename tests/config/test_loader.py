"""Config discovery, expansion, overrides and validation messages that name the key and the fix."""

from __future__ import annotations

import pytest

from tmg.config.loader import load_config
from tmg.config.providers import NO_PROVIDER_HELP, choose_provider
from tmg.errors import ConfigError, UsageError

BASE = """
PROVIDERS:
  local:
    MODEL: openai/mock
    API_KEY: ${MOCK_KEY}
    URL: http://127.0.0.1:1/v1
  other:
    MODEL: openai/other
    API_KEY: k2
"""


def write(tmp_path, text: str):
    path = tmp_path / "tmg.yaml"
    path.write_text(text)
    return path


def test_discovery_order(tmp_path):
    (tmp_path / "xdg" / "tmg").mkdir(parents=True)
    (tmp_path / "xdg" / "tmg" / "config.yaml").write_text("MODE: from-user-dir\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_config(None, env, tmp_path)[0].mode == "from-user-dir"
    write(tmp_path, "MODE: from-cwd\n")
    assert load_config(None, env, tmp_path)[0].mode == "from-cwd"
    other = tmp_path / "other.yaml"
    other.write_text("MODE: from-env\n")
    assert load_config(None, {**env, "TMG_CONFIG": str(other)}, tmp_path)[0].mode == "from-env"
    explicit = tmp_path / "explicit.yaml"
    explicit.write_text("MODE: explicit\n")
    assert load_config(str(explicit), {**env, "TMG_CONFIG": str(other)}, tmp_path)[0].mode == "explicit"


def test_no_file_is_fine(tmp_path):
    config, warnings = load_config(None, {"XDG_CONFIG_HOME": str(tmp_path)}, tmp_path)
    assert config.source is None and config.max_turns == 200 and "openai" in config.providers


def test_missing_explicit_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml does not exist"):
        load_config(str(tmp_path / "nope.yaml"), {}, tmp_path)


def test_var_expansion_and_env_overrides(tmp_path):
    path = write(tmp_path, BASE + "MAX_TURNS: 10\nMEMORY:\n  LEARN: capture\n")
    env = {"MOCK_KEY": "sekrit", "TMG_MAX_TURNS": "3", "TMG_MEMORY_LEARN": "full", "TMG_HOME": "/x"}
    config, _ = load_config(str(path), env, tmp_path)
    assert config.providers["local"].api_key == "sekrit"
    assert config.max_turns == 3 and config.memory.learn == "full"


def test_selected_provider_must_exist(tmp_path):
    path = write(tmp_path, BASE + "SELECTED_PROVIDER: x\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(path), {}, tmp_path)
    assert 'SELECTED_PROVIDER "x" is not a key of PROVIDERS (available: local, other)' in str(err.value)


@pytest.mark.parametrize("snippet, expected", [
    ("MAX_TURNS: many", "MAX_TURNS must be a number"),
    ("MAX_TURNS: 0", "MAX_TURNS is 0; it must be at least 1"),
    ("MEMORY:\n  LEARN: sometimes", "MEMORY.LEARN is 'sometimes'; use one of: off, capture, batch, full"),
    ("MEMORY:\n  ENABLED: maybe", "MEMORY.ENABLED must be true or false"),
    ("MCP_SERVERS:\n  plur:\n    TIMEOUT: 3", "MCP_SERVERS.plur needs exactly one of COMMAND"),
    ("PROVIDERS:\n  p:\n    API_KEY: x", "PROVIDERS.p.MODEL is required"),
])
def test_invalid_values_name_the_key_and_the_fix(tmp_path, snippet, expected):
    path = write(tmp_path, snippet + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(path), {}, tmp_path)
    assert expected in str(err.value) and str(path) in str(err.value)


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, "MODE: a\nPERSON: [unclosed\nMAX_TURNS: 3\n")
    with pytest.raises(ConfigError, match=r"tmg.yaml line \d+"):
        load_config(str(path), {}, tmp_path)


def test_unknown_keys_warn_with_the_closest_key(tmp_path):
    path = write(tmp_path, "MAX_TURN: 3\n")
    # memory off: whether the shipped PLUR is installed here must not add its own line
    config, warnings = load_config(str(path), {"TMG_MEMORY_ENABLED": "false"}, tmp_path)
    assert warnings == ["unknown config key MAX_TURN is ignored; did you mean MAX_TURNS?"]
    assert config.max_turns == 200


def test_memory_on_without_its_server_warns_and_stays_off(tmp_path):
    path = write(tmp_path, "MEMORY:\n  ENABLED: true\n  SERVER: mine\n")
    config, warnings = load_config(str(path), {}, tmp_path)
    assert config.memory.enabled is False
    assert any('MEMORY.SERVER "mine" is not a key of MCP_SERVERS' in w for w in warnings)


def test_provider_chosen_automatically_by_key(tmp_path):
    path = write(tmp_path, BASE)
    config, _ = load_config(str(path), {}, tmp_path)
    assert choose_provider(config).name == "other"  # local's key is empty
    config, _ = load_config(str(path), {"MOCK_KEY": "k"}, tmp_path)
    assert choose_provider(config).name == "local"
    assert choose_provider(config, "openai/zzz").model == "openai/zzz"


def test_no_key_anywhere_gives_guidance(tmp_path):
    config, _ = load_config(None, {"XDG_CONFIG_HOME": str(tmp_path)}, tmp_path)
    with pytest.raises(ConfigError) as err:
        choose_provider(config)
    assert str(err.value) == NO_PROVIDER_HELP and "OPENAI_API_KEY" in NO_PROVIDER_HELP


def test_secrets_are_collected_for_redaction(tmp_path):
    path = write(tmp_path, BASE + "MCP_SERVERS:\n  s:\n    COMMAND: x\n    ENV: {API_TOKEN: tok-123456, PLUR_TOOL_PROFILE: full}\n")
    config, _ = load_config(str(path), {"MOCK_KEY": "sekrit-key\n"}, tmp_path)
    # Every secret, stripped: the redactor itself leaves alone the ones too short to mask (k2).
    assert set(config.secrets()) == {"sekrit-key", "tok-123456", "k2"}
    assert ("MCP_SERVERS.s.ENV.API_TOKEN", "tok-123456") in config.secret_entries()


def test_a_bare_learn_off_means_the_tier_off_not_a_boolean(tmp_path):
    path = write(tmp_path, "MEMORY:\n  LEARN: off\n  SERVER: x\n")
    config, _ = load_config(str(path), {}, tmp_path)
    assert config.memory.learn == "off"
    with pytest.raises(ConfigError, match="MEMORY.LEARN"):
        load_config(str(write(tmp_path, "MEMORY:\n  LEARN: yes\n")), {}, tmp_path)


def test_a_model_override_is_a_provider_name_or_a_model_id(tmp_path):
    path = write(tmp_path, BASE)
    config, _ = load_config(str(path), {"MOCK_KEY": "k"}, tmp_path)
    assert choose_provider(config, "other").name == "other"
    for model_id in ("openai/anything", "gpt-4o", "llama3", "gpt-4o-mini"):
        assert choose_provider(config, model_id).model == model_id
    with pytest.raises(UsageError) as caught:
        choose_provider(config, "othr")
    assert str(caught.value).startswith("'othr' is neither a provider nor a model id; did you mean other? providers: ")
    assert "local, other" in str(caught.value)
