"""`tmg -t` in-process: which session it reads (mode from --mode, TMG_MODE or the config; this
project's), and what a config that is wrong somewhere does to it."""

from __future__ import annotations

import io
import json

import pytest

from tmg.cli.transcript import show_transcript
from tmg.environment import Environment
from tmg.errors import ConfigError, UsageError
from tmg.project import project_root
from tmg.session.options import ChatOptions
from tmg.session.store import SessionStore


@pytest.fixture
def place(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env = {"TMG_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "TMG_CONFIG": str(tmp_path / "tmg.yaml")}
    store = SessionStore(tmp_path / "home")
    for mode in ("default", "work", "2"):
        ref = store.start_new(mode, project_root(work))
        ref.transcript_path.write_text(f"# session of mode {mode}\n")
    return work, env


def shown(place, config: str, *, mode: str | None = None, as_json: bool = False, **env: str) -> str:
    work, base = place
    with open(base["TMG_CONFIG"], "w") as f:
        f.write(config)
    out = io.StringIO()
    envr = Environment(stdin=None, stdout=out, stderr=io.StringIO(), env={**base, **env}, cwd=work,
                       stdout_isatty=False)
    assert show_transcript(ChatOptions(mode=mode), envr, None, as_json=as_json) == 0
    return out.getvalue()


PROVIDERS = "PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n"


@pytest.mark.parametrize("config,env,mode,expected", [
    (PROVIDERS, {}, None, "default"),
    (PROVIDERS + "MODE: work\n", {}, None, "work"),
    (PROVIDERS, {"TMG_MODE": "work"}, None, "work"),
    (PROVIDERS + "MODE: work\n", {"TMG_MODE": "default"}, None, "default"),
    (PROVIDERS + "MODE: default\n", {"TMG_MODE": "default"}, "work", "work"),  # --mode over both
    (PROVIDERS + "MODE: 2\n", {}, None, "2"),  # the loader's reading: the number is the text "2"
])
def test_the_mode_comes_from_the_option_the_environment_or_the_file(place, config, env, mode, expected):
    assert shown(place, config, mode=mode, **env) == f"# session of mode {expected}\n"
    assert json.loads(shown(place, config, mode=mode, as_json=True, **env))["mode"] == expected


def test_an_error_elsewhere_in_the_config_does_not_stop_it(place):
    # -t needs the mode only; a chat with this config still says what is wrong.
    assert shown(place, PROVIDERS + "MODE: work\nMAX_TURNS: many\n") == "# session of mode work\n"
    assert shown(place, "PROVIDERS: [\n") == "# session of mode default\n"  # YAML that sets no MODE


@pytest.mark.parametrize("config,says", [("MODE: work\nPROVIDERS: [\n", "fix the YAML syntax"),
                                         ("MODE: a b\n", "MODE is 'a b'")])
def test_a_config_whose_mode_cannot_be_read_is_the_error(place, config, says):
    with pytest.raises(ConfigError, match=says):
        shown(place, config)


def test_another_projects_session_is_not_this_ones(place, tmp_path):
    _work, base = place
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    envr = Environment(stdin=None, stdout=io.StringIO(), stderr=io.StringIO(), env=base, cwd=elsewhere)
    with open(base["TMG_CONFIG"], "w") as f:
        f.write(PROVIDERS)
    with pytest.raises(UsageError, match="has no session in"):
        show_transcript(ChatOptions(), envr, None, as_json=False)
