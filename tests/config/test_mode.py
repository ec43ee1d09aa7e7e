"""`tmg -t`'s MODE without the loader (tmg.config.mode) against the loader itself: the same mode
for every config the loader accepts, in the user's file and in a project's (trusted or not),
with and without TMG_MODE; what it cannot read plainly it leaves to the loader (None)."""

from __future__ import annotations

import pytest

from tmg.config.loader import load_config
from tmg.config.mode import plain_mode
from tmg.config.trust import TrustStore
from tmg.errors import ConfigError

PROVIDERS = "PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n"
# (the file's text, TMG_MODE, what plain_mode reads: None when it leaves the mode to the loader)
CASES = [
    (None, None, "default"),  # no config file at all
    ("", None, "default"),
    (PROVIDERS, None, "default"),  # MODEL is not MODE: the YAML need not be read
    (PROVIDERS + "MODE: work\n", None, "work"),
    ("mode: work\n", None, "work"),
    ("Mode: 'work.v2'\n", None, "work.v2"),
    ("MODE:\n", None, "default"),
    ("{MODE: flow}\n", None, "flow"),
    ('"\\x4dODE": escaped\n', None, "escaped"),  # a key spelled with an escape is still MODE
    ("PERMISSIONS:\n  MODE: plan\nSANDBOX: {MODE: 'on'}\n", None, "default"),  # not the top-level MODE
    ("MODE: 2\n", None, None),  # a number the schema takes as the text "2"
    ("MODE: ${TMG_TEST_MODE}\n", None, None),  # expanded, or withheld in an untrusted folder
    (PROVIDERS + "MODE: work\n", "envmode", "envmode"),
    ("MODE: work\nmode: twice\n", "envmode", "envmode"),  # TMG_MODE replaces every spelling
    (None, "Work-2", "Work-2"),
    (None, "yes", None),  # YAML 1.1 reads it as a boolean: the loader says what is wrong
    (None, "2", None),
    (None, " spaced ", None),
]


def _env(tmp_path, tmg_mode: str | None) -> dict[str, str]:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "TMG_HOME": str(tmp_path / "home"),
           "TMG_TEST_MODE": "fromvar", "TMG_MEMORY_ENABLED": "false"}
    if tmg_mode is not None:
        env["TMG_MODE"] = tmg_mode
    return env


@pytest.mark.parametrize("where", ["user file", "untrusted project", "trusted project"])
@pytest.mark.parametrize("text,tmg_mode,plain", CASES)
def test_the_plain_reading_is_the_loaders_mode(tmp_path, where, text, tmg_mode, plain):
    env = _env(tmp_path, tmg_mode)
    work = tmp_path / "work"
    work.mkdir()
    if text is not None:
        if where == "user file":
            (tmp_path / "xdg" / "tmg").mkdir(parents=True)
            (tmp_path / "xdg" / "tmg" / "config.yaml").write_text(text)
        else:
            (work / "tmg.yaml").write_text(text)
            if where == "trusted project":
                TrustStore.for_env(env).trust(work)
    assert plain_mode(None, env, work) == plain
    if plain is not None:
        assert load_config(None, env, work)[0].mode == plain


def test_a_mode_left_to_the_loader_is_what_the_loader_makes_of_it(tmp_path):
    # The cases plain_mode leaves alone are real ones: the loader reads them, differently by trust.
    env = _env(tmp_path, None)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tmg.yaml").write_text("MODE: ${TMG_TEST_MODE}\n")
    assert load_config(None, env, work)[0].mode == "default"  # withheld: an untrusted file reads no variable
    TrustStore.for_env(env).trust(work)
    assert load_config(None, env, work)[0].mode == "fromvar"
    assert load_config(None, _env(tmp_path, "2"), work)[0].mode == "2"


@pytest.mark.parametrize("text", ["MODE: a b\n", "MODE: work\nmode: other\n", "MODE: [work]\n"])
def test_a_mode_the_schema_refuses_is_the_loaders_error(tmp_path, text):
    config = tmp_path / "c.yaml"
    config.write_text(text)
    env = _env(tmp_path, None)
    assert plain_mode(str(config), env, tmp_path) is None
    with pytest.raises(ConfigError, match="MODE"):
        load_config(str(config), env, tmp_path)


def test_a_file_that_cannot_be_found_read_or_parsed_is_the_same_error(tmp_path):
    env = _env(tmp_path, None)
    for text in ("MODE: work\nPROVIDERS: [\n", "MODE: \"\\q\"\n"):
        config = tmp_path / "c.yaml"
        config.write_text(text)
        with pytest.raises(ConfigError) as loader:
            load_config(str(config), env, tmp_path)
        with pytest.raises(ConfigError) as plain:
            plain_mode(str(config), env, tmp_path)
        assert str(plain.value) == str(loader.value)
    (tmp_path / "bad.yaml").write_bytes(b"MODE: w\xff\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        plain_mode(str(tmp_path / "bad.yaml"), env, tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        plain_mode(str(tmp_path / "missing.yaml"), env, tmp_path)


@pytest.mark.parametrize("text", [PROVIDERS.replace("mock:", "mock: 5\n  other:") + "MODE: work\n",
                                  "MODE: work\nMAX_TURNS: many\n"])
def test_an_error_elsewhere_in_the_file_does_not_hide_its_mode(tmp_path, text):
    # -t needs the mode only: a broken PROVIDERS or MAX_TURNS is the next chat's to report.
    config = tmp_path / "c.yaml"
    config.write_text(text)
    env = _env(tmp_path, None)
    with pytest.raises(ConfigError):
        load_config(str(config), env, tmp_path)
    assert plain_mode(str(config), env, tmp_path) == "work"


def test_with_tmg_mode_set_the_file_is_not_read(tmp_path):
    (tmp_path / "c.yaml").write_text("PROVIDERS: [\n")  # not even valid YAML
    env = _env(tmp_path, "envmode")
    assert plain_mode(str(tmp_path / "c.yaml"), env, tmp_path) == "envmode"
    with pytest.raises(ConfigError, match="named by TMG_CONFIG"):  # a path naming nothing is still said
        plain_mode(None, dict(env, TMG_CONFIG=str(tmp_path / "missing.yaml")), tmp_path)
