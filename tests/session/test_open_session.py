"""Opening a session is all or nothing: a failure after the lock is taken ends what was made,
the lock last, so the next tmg (or the REPL's next /new) finds the session free."""

from __future__ import annotations

import io

import pytest

from tmg.compose import load_live_config, open_session
from tmg.engine.events import NullEvents
from tmg.environment import Environment
from tmg.paths import tmg_home
from tmg.session.options import ChatOptions
from tmg.session.store import SessionLock, SessionStore
from tmg.ui.notices import Notices


def _envr(tmp_path) -> Environment:
    config = tmp_path / "config.yaml"
    config.write_text("PROVIDERS:\n  mock:\n    MODEL: openai/mock-model\n    API_KEY: sk-test-123456\n"
                      "    URL: http://127.0.0.1:9/v1\n")
    (tmp_path / "work").mkdir()
    env = {"TMG_HOME": str(tmp_path / "home"), "TMG_CONFIG": str(config), "TMG_MEMORY_ENABLED": "false",
           "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    return Environment(stdin=None, stdout=io.StringIO(), stderr=io.StringIO(), env=env, cwd=tmp_path / "work",
                       stdin_isatty=False, stdout_isatty=False)


async def test_a_failure_after_the_lock_is_taken_leaves_the_session_free(tmp_path, monkeypatch):
    envr = _envr(tmp_path)
    notices = Notices(envr.stderr, color=False)
    live = load_live_config(ChatOptions(), envr, notices)

    def broken(*_args, **_kwargs):
        raise OSError("the working folder is gone")

    monkeypatch.setattr("tmg.compose.build_tools", broken)  # a step well after the lock and the files
    with pytest.raises(OSError, match="working folder is gone"):
        await open_session(ChatOptions(), envr, live, notices, NullEvents(), interactive=True)
    ref = SessionStore(tmg_home(envr.env)).current("default")
    assert ref is not None and ref.transcript_path.exists()  # it got that far: files were open
    again = SessionLock(ref, wait=0)
    await again.acquire()  # SessionBusyError if the failed open had kept the lock
    again.release()


async def test_a_session_that_opens_releases_its_lock_at_its_end(tmp_path):
    envr = _envr(tmp_path)
    notices = Notices(envr.stderr, color=False)
    session = await open_session(ChatOptions(), envr, load_live_config(ChatOptions(), envr, notices), notices,
                                 NullEvents(), interactive=True)
    held = SessionLock(session.ref, wait=0)
    with pytest.raises(Exception, match="in use by another tmg"):
        await held.acquire()
    await session.end.run()
    await held.acquire()
    held.release()
