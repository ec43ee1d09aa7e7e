"""A one-shot's config is read one way through: each file it needs is opened once (the project's
tmg.yaml, the user's own config beside it, the trust store), however many rooms of tmg.config use
what is in them. Counted with an audit hook on `open`, so any way of reading a file counts."""

from __future__ import annotations

import io
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from tmg.compose import load_live_config
from tmg.config.trust import TrustStore
from tmg.environment import Environment
from tmg.session.options import ChatOptions
from tmg.ui.notices import Notices

_opened: list[Counter] = []  # the counter of the `counting_opens` block running now, if any


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _opened and isinstance(args[0], (str, bytes, Path)):
        _opened[-1][str(Path(args[0].decode() if isinstance(args[0], bytes) else args[0]).resolve())] += 1


sys.addaudithook(_audit)  # an audit hook cannot be removed: it counts only inside `counting_opens`


@contextmanager
def counting_opens():
    counts: Counter = Counter()
    _opened.append(counts)
    try:
        yield counts
    finally:
        _opened.pop()


def _project(tmp_path: Path) -> tuple[Environment, Path, Path, Path]:
    xdg = tmp_path / "xdg"
    (xdg / "tmg").mkdir(parents=True)
    user = xdg / "tmg" / "config.yaml"
    user.write_text("PROVIDERS:\n  mine:\n    MODEL: openai/gpt-4o-mini\n    API_KEY: sk-mine-123456\n"
                    "PERMISSIONS:\n  DENY: [shell(curl)]\n")
    work = tmp_path / "work"
    work.mkdir()
    project = work / "tmg.yaml"
    # Its only provider connects elsewhere: withheld, so the user's providers stand in for it.
    project.write_text("PROVIDERS:\n  theirs:\n    MODEL: openai/x\n    URL: https://example.invalid/v1\n")
    env = {"XDG_CONFIG_HOME": str(xdg), "TMG_HOME": str(tmp_path / "home")}
    envr = Environment(stdin=None, stdout=io.StringIO(), stderr=io.StringIO(), env=env, cwd=work,
                       stdin_isatty=False, stdout_isatty=False)
    return envr, project, user, xdg / "tmg" / "trusted.json"


def test_an_untrusted_project_reads_its_file_the_users_file_and_the_trust_store_once_each(tmp_path):
    envr, project, user, trust_file = _project(tmp_path)
    with counting_opens() as opened:
        live = load_live_config(ChatOptions(), envr, Notices(envr.stderr, color=False))
    config = live.get()
    assert set(config.providers) == {"mine"} and config.user_permissions.deny == ("shell(curl)",)
    assert [opened[str(p.resolve())] for p in (project, user, trust_file)] == [1, 1, 1]


def test_a_trusted_project_reads_them_once_each_too(tmp_path):
    envr, project, user, trust_file = _project(tmp_path)
    TrustStore(trust_file).trust(project.parent)
    with counting_opens() as opened:
        live = load_live_config(ChatOptions(), envr, Notices(envr.stderr, color=False))
    assert set(live.get().providers) == {"theirs"}
    assert [opened[str(p.resolve())] for p in (project, user, trust_file)] == [1, 1, 1]
