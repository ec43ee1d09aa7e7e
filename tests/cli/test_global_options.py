"""Options before every subcommand, one rule (issue 25 item 6): each of the chat's options, given
before any subcommand's name, is accepted, and honoured by the subcommands it concerns
(tmg.cli.given.HONOURED). The real command line, in this process: `tmg.cli.main`."""

from __future__ import annotations

import pytest

from tmg.cli import main
from tmg.cli.chat_line import FLAGS, VALUE_OPTIONS
from tmg.cli.given import HONOURED, hand_over
from tmg.cli.route import SUBCOMMANDS
from tmg.project import project_root
from tmg.session.store import SessionStore

# The chat's options; -t reads a transcript whatever follows it, so it routes nowhere.
GLOBAL = sorted((set(VALUE_OPTIONS) | set(FLAGS)) - {"-t", "--transcript"})
VALUES = {"-c": "{other}", "--config": "{other}", "--mode": "work", "-m": "openai/other-model",
          "--model": "openai/other-model", "--permissions": "read-only", "--resume": "20240101",
          "-s": "a system prompt", "--system": "a system prompt", "--max-turns": "3", "--max-budget-usd": "0.5",
          "--output-format": "json"}
# What each subcommand is run with: offline, quick, and with nothing to start.
ARGS = {"sessions": [], "config": [], "doctor": [], "trust": ["--list"], "memory": ["list"], "compact": [], "rewind": ["--list"],
        "permissions": [], "skills": [], "mcp": []}

MINE = "PROVIDERS:\n  mock:\n    MODEL: openai/mock-model\n    API_KEY: sk-test-9f8e7d6c\n    URL: http://127.0.0.1:9/v1\n" \
       "MEMORY:\n  ENABLED: false\n"
OTHER = ("MODE: work\nPERSON: the other config's persona\n"
         "PROVIDERS:\n  mock:\n    MODEL: openai/mock-model\n    API_KEY: sk-test-9f8e7d6c\n    URL: http://127.0.0.1:9/v1\n"
         "MCP_SERVERS:\n  other-server:\n    COMMAND: /bin/false\n    TIMEOUT: 2\n"
         "MEMORY:\n  ENABLED: true\n  SERVER: other-server\n"
         "PERMISSIONS:\n  DENY: [shell(rm)]\n")


@pytest.fixture
def home(tmp_path, monkeypatch):
    (tmp_path / "work").mkdir()
    (tmp_path / "mine.yaml").write_text(MINE)
    (tmp_path / "other.yaml").write_text(OTHER)
    for name in [n for n in list(__import__("os").environ) if n.startswith("TMG_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TMG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMG_CONFIG", str(tmp_path / "mine.yaml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("TMG_MEMORY_BROKER", "0")
    monkeypatch.setenv("TMG_LOCAL_PROBE_PORTS", "")
    monkeypatch.chdir(tmp_path / "work")

    def exit_here(code: int) -> None:  # not os._exit, which the CLI uses once mcp or litellm is loaded
        raise SystemExit(code)

    monkeypatch.setattr("tmg.cli.errors._exit_now", exit_here)
    store = SessionStore(tmp_path / "home")
    here = project_root(tmp_path / "work")
    for mode in ("default", "work"):
        ref = store.start_new(mode, here)
        ref.history_path.write_text(f'{{"role":"user","content":"a {mode} question","ts":1}}\n')
    return tmp_path


def tmg(home, capsys, *args: str) -> tuple[int, str, str]:
    args = tuple(a.format(other=home / "other.yaml") for a in args)
    hand_over(None)  # what an earlier command line of this process handed over
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return done.value.code or 0, out, err


def test_the_table_names_every_subcommand():
    assert set(HONOURED) == SUBCOMMANDS == set(ARGS)


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
@pytest.mark.parametrize("option", GLOBAL)
def test_every_option_is_accepted_before_every_subcommand(home, capsys, monkeypatch, command, option):
    monkeypatch.setattr("tmg.cli.compact.run_compact", lambda *_args: 0)  # routing is the point, not a summary
    given = [option, VALUES[option]] if option in VALUES else [option]
    code, out, err = tmg(home, capsys, *given, command, *ARGS[command])
    assert "no such option" not in err.lower() and "unexpected extra argument" not in err.lower(), err
    assert code != 2, err  # never a usage error: the subcommand ran


def test_sessions_honours_mode_and_the_configs_mode(home, capsys):
    assert "a default question" in tmg(home, capsys, "sessions")[1]
    for given in (["--mode", "work"], ["-c", "{other}"]):
        _code, out, _err = tmg(home, capsys, *given, "sessions")
        assert "a work question" in out and "a default question" not in out, given


def test_config_honours_config_mode_model_and_system(home, capsys):
    assert str(home / "other.yaml") in tmg(home, capsys, "-c", "{other}", "config")[1]
    out = tmg(home, capsys, "--mode", "work", "-s", "a persona for one run", "-m", "openai/other-model", "config")[1]
    assert "work" in out and "a persona for one run" in out and "# -m openai/other-model: provider mock" in out


def test_doctor_honours_config_and_model(home, capsys):
    out = tmg(home, capsys, "-c", "{other}", "doctor")[1]
    assert f"ok    config: {home / 'other.yaml'} is valid" in out and "mcp server other-server" in out
    out = tmg(home, capsys, "-m", "openai/other-model", "doctor")[1]
    assert "provider: mock (openai/other-model), chosen as -m" in out


def test_mcp_and_memory_honour_the_config(home, capsys):
    assert "other-server" in tmg(home, capsys, "-c", "{other}", "mcp")[1]
    _code, _out, err = tmg(home, capsys, "memory", "list")
    assert "memory is off" in err
    _code, _out, err = tmg(home, capsys, "-c", "{other}", "memory", "list")
    assert "tmg: memory is off" not in err and "memory server could not be used" in err  # it tried that server


def test_permissions_honours_the_config_and_the_mode(home, capsys):
    assert "deny: shell(rm)" in tmg(home, capsys, "-c", "{other}", "permissions")[1]
    assert "permissions: mode read-only (--permissions)" in tmg(home, capsys, "--permissions", "read-only",
                                                                "permissions")[1]


def test_compact_and_skills_honour_the_mode(home, capsys, monkeypatch):
    seen = []
    monkeypatch.setattr("tmg.cli.compact.run_compact", lambda options, envr, focus: seen.append(options) or 0)
    tmg(home, capsys, "-c", "{other}", "--mode", "work", "-m", "openai/other-model", "compact")
    assert (seen[0].config_path, seen[0].mode, seen[0].model) == (str(home / "other.yaml"), "work", "openai/other-model")
    asked = []
    real = SessionStore.current
    monkeypatch.setattr(SessionStore, "current", lambda self, mode, project: asked.append(mode) or real(self, mode, project))
    tmg(home, capsys, "--mode", "work", "skills")
    assert asked == ["work"]


def test_a_subcommands_own_option_wins_over_the_one_before_it(home, capsys):
    _code, out, _err = tmg(home, capsys, "--mode", "default", "sessions", "--mode", "work")
    assert "a work question" in out and "a default question" not in out


def test_rewind_honours_the_config_and_the_mode(home, capsys):
    code, _out, err = tmg(home, capsys, "--mode", "empty", "rewind", "--list")
    assert code == 2 and 'mode "empty" has no session in this project yet' in err
    code, out, err = tmg(home, capsys, "--mode", "work", "rewind", "--list")
    assert code == 0, err
    (home / "empty.yaml").write_text("MODE: empty\n" + MINE)
    code, _out, err = tmg(home, capsys, "-c", str(home / "empty.yaml"), "rewind", "--list")
    assert code == 2 and 'mode "empty" has no session in this project yet' in err  # the config's MODE
