"""Hot reload: the boundary check, the watcher thread, broken saves, session-fixed keys, secrets."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from tmg.config.live import LiveConfig
from tmg.config.loader import load_config
from tmg.config.reload import describe_changes, merge_fixed
from tmg.redaction import Redactor
from tmg.config.watcher import ConfigWatcher

BASE = """\
PROVIDERS:
  mock:
    MODEL: openai/mock
    API_KEY: sk-start-key-0001
    MAX_TOKENS: 100
MCP_SERVERS:
  plur:
    COMMAND: plur-mcp
MEMORY:
  SERVER: plur
"""


class Reports(list):
    def __call__(self, level: str, text: str) -> None:
        self.append((level, text))

    def texts(self, level: str | None = None) -> list[str]:
        return [t for lv, t in self if level is None or lv == level]


def save(path, text: str) -> None:
    """Write and make sure the (mtime, size, inode) signature changes even on a coarse clock."""
    before = os.stat(path).st_mtime_ns if path.exists() else 0
    path.write_text(text)
    if os.stat(path).st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def make(tmp_path, text: str = BASE + "MAX_TURNS: 1\n", mode: str | None = None):
    path = tmp_path / "tmg.yaml"
    path.write_text(text)
    config, warnings = load_config(str(path), {}, tmp_path)
    live = LiveConfig(config, mode=mode)
    reports = Reports()
    return path, live, ConfigWatcher(live, {}, reports, warnings=warnings), reports


def test_a_save_is_picked_up_at_the_next_boundary_and_announced(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    assert watcher.current().max_turns == 1
    save(path, BASE + "MAX_TURNS: 3\nPERSON: terse\n")
    assert watcher.current().max_turns == 3
    assert live.get().person == "terse"
    assert reports == [("notice", f"config reloaded from {path}: MAX_TURNS 1 -> 3, PERSON set ('terse')")]
    assert watcher.current().max_turns == 3 and len(reports) == 1  # nothing new: nothing said


def test_a_broken_save_keeps_the_last_good_config_and_is_reported_once(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    save(path, BASE + "MAX_TURNS: [unclosed\n")
    assert watcher.current().max_turns == 1
    save(path, BASE + "MAX_TURNS: [unclosed\n")  # saved again (an editor's autosave)
    assert watcher.current().max_turns == 1
    (warning,) = reports.texts("warn")
    assert warning.startswith("config reload failed, keeping the previous config: ")
    assert f"config file {path} line " in warning
    save(path, BASE + "MAX_TURNS: 4\n")
    assert watcher.current().max_turns == 4
    assert reports[-1] == ("notice", f"config reloaded from {path}: MAX_TURNS 1 -> 4")


def test_an_invalid_value_names_the_key_line_and_fix(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    save(path, BASE + "MAX_TURNS: 0\n")
    watcher.check()
    (warning,) = reports.texts("warn")
    assert "line 11: MAX_TURNS is 0; it must be at least 1" in warning and str(path) in warning
    assert live.get().max_turns == 1


def test_fixing_back_to_the_same_config_says_it_is_valid_again(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    save(path, "MAX_TURNS: {\n")
    watcher.check()
    save(path, BASE + "MAX_TURNS: 1\n")
    watcher.check()
    assert reports[-1] == ("notice", f"config file {path} is valid again; using it")


def test_session_fixed_keys_wait_for_a_restart_and_hot_ones_apply(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    changed = BASE.replace("MAX_TOKENS: 100", "MAX_TOKENS: 999").replace("plur-mcp", "other-mcp")
    save(path, changed + "MAX_TURNS: 2\n")
    watcher.check()
    config = live.get()
    assert config.max_turns == 2
    assert config.providers["mock"].max_tokens == 100
    assert config.mcp_servers["plur"].command == "plur-mcp"
    assert sorted(reports.texts("warn")) == [
        f"MCP_SERVERS changed in {path}; restart tmg to apply it",
        f"PROVIDERS.mock.MAX_TOKENS changed in {path}; restart tmg to apply it",
    ]
    save(path, changed + "MAX_TURNS: 3\n")  # the same pending change again: not repeated
    watcher.check()
    assert len(reports.texts("warn")) == 2 and live.get().max_turns == 3


def test_mode_override_survives_reloads_and_a_file_mode_change_is_moot(tmp_path):
    path, live, watcher, reports = make(tmp_path, mode="work")
    save(path, BASE + "MODE: other\nMAX_TURNS: 5\n")
    watcher.check()
    assert live.get().mode == "work" and live.get().max_turns == 5
    assert reports.texts("warn") == []


def test_a_file_mode_change_needs_a_restart(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    save(path, BASE + "MODE: other\n")
    watcher.check()
    assert live.get().mode == "default"
    assert reports.texts("warn") == [f"MODE changed in {path}; restart tmg to apply it"]


def test_secrets_are_never_shown_and_new_ones_are_learned(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    redact = Redactor(live.get().secrets())
    watcher._on_swap = lambda c: redact.add(c.secrets())
    save(path, BASE.replace("sk-start-key-0001", "sk-rotated-key-0002") + "MAX_TURNS: 1\n")
    watcher.check()
    assert reports.texts() == [f"config reloaded from {path}: PROVIDERS.mock.API_KEY changed"]
    assert redact("a sk-rotated-key-0002 b sk-start-key-0001") == "a *** b ***"
    save(path, BASE.replace("API_KEY: sk-start-key-0001", "API_KEY: [sk-listed-key-0003]"))
    watcher.check()
    assert "sk-listed-key-0003" not in " ".join(reports.texts())
    assert "PROVIDERS.mock.API_KEY must be a string" in reports.texts("warn")[-1]


def test_an_empty_file_mid_save_is_not_applied_at_a_boundary(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    save(path, "")
    assert watcher.current().providers.keys() == {"mock"} and reports == []
    save(path, BASE + "MAX_TURNS: 6\n")
    assert watcher.current().max_turns == 6


def test_new_warnings_are_said_once_and_startup_ones_not_repeated(tmp_path):
    path, live, watcher, reports = make(tmp_path, BASE + "MAX_TURN: 1\n")
    save(path, BASE + "MAX_TURN: 1\nMAX_TURNS: 2\nPERSN: x\n")
    watcher.check()
    assert reports.texts("warn") == [f"{path}: unknown config key PERSN is ignored; did you mean PERSON?"]


def _returns(call, seconds: float = 20.0):
    """Run ``call`` on a thread; its result, or a failure when it is still blocked (a hang)."""
    import threading

    out: list = []
    thread = threading.Thread(target=lambda: out.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked: the reload never returned"
    return out[0]


def _empty_for_a_while(path) -> None:
    save(path, "")
    past = time.time_ns() - 5_000_000_000
    os.utime(path, ns=(past, past))  # emptied seconds ago: not the middle of a save


def _replace_with_fifo(path) -> None:
    os.unlink(path)
    os.mkfifo(path)


@pytest.mark.parametrize("make_bad, says", [
    (_replace_with_fifo, "is a FIFO (named pipe), not a regular file"),
    (lambda p: (os.unlink(p), os.mkdir(p)), "is a directory, not a regular file"),
    (_empty_for_a_while, "is empty (no settings, at most comments); save the full config"),
    (lambda p: save(p, "# PROVIDERS:\n#   mock: {}\n\n"), "is empty (no settings, at most comments)"),
    (lambda p: p.write_bytes(b"PERSON: caf\xe9\n"), "line 1: not UTF-8 text; save the file as UTF-8"),
    (lambda p: save(p, "PERSON: " + "x" * (1 << 20) + "\n"), "is larger than 1 MB"),
])
def test_a_bad_save_at_the_path_never_blocks_and_keeps_the_last_good_config(tmp_path, make_bad, says):
    path, live, watcher, reports = make(tmp_path)
    make_bad(path)
    for _ in range(2):  # the watcher's event, then a boundary (or the event again): said once
        assert _returns(lambda: watcher.reload(settled=True)) is False
        assert _returns(watcher.current).providers["mock"].model == "openai/mock"
    (warning,) = reports.texts()
    assert warning.startswith(f"config reload failed, keeping the previous config: config file {path} ")
    assert says in warning and "\n" not in warning
    assert live.get().max_turns == 1


@pytest.mark.parametrize("make_bad, says", [
    (_replace_with_fifo, "is a FIFO (named pipe), not a regular file"),
    (_empty_for_a_while, "is empty (no settings, at most comments)"),
])
def test_a_boundary_alone_refuses_a_fifo_or_a_file_left_empty(tmp_path, make_bad, says):
    """No watcher thread (a one-shot's starts late): the phase boundary must see it by itself."""
    path, live, watcher, reports = make(tmp_path)
    make_bad(path)
    for _ in range(3):
        assert _returns(watcher.current).max_turns == 1
    (warning,) = reports.texts("warn")
    assert says in warning and warning.startswith("config reload failed, keeping the previous config")


def test_a_save_that_leaves_no_usable_provider_keeps_the_last_good_config(tmp_path):
    from tmg.config.providers import choose_provider

    path, live, _, reports = make(tmp_path)
    watcher = ConfigWatcher(live, {}, reports, usable=choose_provider)
    save(path, BASE.replace("    API_KEY: sk-start-key-0001\n", "") + "MAX_TURNS: 2\n")
    assert watcher.reload(settled=True) is False and watcher.current().max_turns == 1
    (warning,) = reports.texts("warn")
    assert warning.startswith(f"config reload failed, keeping the previous config: config file {path} "
                              "leaves no usable provider: no provider can be called, none has an API key: set "
                              "PROVIDERS.mock.API_KEY (not set)")
    save(path, BASE + "MAX_TURNS: 2\n")
    assert watcher.current().max_turns == 2


def test_a_boundary_does_not_wait_for_a_reload_in_progress(tmp_path):
    import threading

    path, live, watcher, reports = make(tmp_path)
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with watcher._lock:  # the watcher thread in the middle of a reload
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold_the_lock, daemon=True)
    thread.start()
    held.wait(10)
    try:
        save(path, BASE + "MAX_TURNS: 7\n")
        assert _returns(watcher.current).max_turns == 1  # goes on with the current config
    finally:
        release.set()
        thread.join(10)
    assert watcher.current().max_turns == 7  # and picks the save up at the next boundary


def test_merge_keeps_a_new_providers_max_tokens():
    import tmg.config.loader as loader

    session, _ = loader.parse_config({"PROVIDERS": {"a": {"MODEL": "m", "MAX_TOKENS": 5}}}, {}, None)
    new, _ = loader.parse_config({"PROVIDERS": {"a": {"MODEL": "m2", "MAX_TOKENS": 6},
                                                "b": {"MODEL": "m", "MAX_TOKENS": 7}}}, {}, None)
    merged, waiting = merge_fixed(session, new)
    assert waiting == ["PROVIDERS.a.MAX_TOKENS"]
    assert merged.providers["a"].max_tokens == 5 and merged.providers["a"].model == "m2"
    assert merged.providers["b"].max_tokens == 7
    assert describe_changes(session, merged) == [
        "PROVIDERS.a.MODEL 'm' -> 'm2'", "PROVIDERS.b.MAX_TOKENS set (7)", "PROVIDERS.b.MODEL set ('m')"]


async def _wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def _until_armed(watcher, path, seconds: float = 10.0) -> None:
    """Until the watcher thread sees a save (inotify is armed only some time after ``watching``;
    a save before that is seen by check() alone): the file is saved again, unchanged, until the
    thread reloads it."""
    seen: list[bool] = []
    reload = watcher.reload

    def noting(*args, **kwargs):
        seen.append(True)
        return reload(*args, **kwargs)

    watcher.reload = noting
    deadline = time.monotonic() + seconds
    try:
        while not seen:
            if time.monotonic() > deadline:
                raise AssertionError(f"the watcher thread saw no save in {seconds:g} s")
            save(path, path.read_text())
            await asyncio.sleep(0.1)
    finally:
        watcher.reload = reload


@pytest.mark.asyncio
async def test_the_watcher_thread_sees_a_rename_over_the_file_without_a_boundary(tmp_path):
    path, live, watcher, reports = make(tmp_path)
    watcher.start()
    try:
        await _wait_for(lambda: watcher.watching)
        await _until_armed(watcher, path)
        tmp = tmp_path / ".tmg.yaml.swp"
        tmp.write_text(BASE + "MAX_TURNS: 9\n")
        os.replace(tmp, path)  # how vim, VS Code and friends save
        await _wait_for(lambda: live.get().max_turns == 9 and reports)  # the notice is posted after the swap
        assert reports == [("notice", f"config reloaded from {path}: MAX_TURNS 1 -> 9")]
        save(path, "MAX_TURNS: [\n")
        await _wait_for(lambda: len(reports) == 2)
        assert reports[-1][0] == "warn" and live.get().max_turns == 9
    finally:
        watcher.stop()
    await _wait_for(lambda: not watcher._thread.is_alive())


async def test_the_watcher_thread_parses_off_the_event_loop_and_reports_on_it(tmp_path, monkeypatch):
    import threading

    import tmg.config.watcher as watcher_module

    parsed_on: list[threading.Thread] = []
    real_parse = watcher_module.parse_config

    def recording_parse(*args, **kwargs):
        parsed_on.append(threading.current_thread())
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(watcher_module, "parse_config", recording_parse)
    path, live, _, _ = make(tmp_path)
    reported_on: list[threading.Thread] = []

    def report(level: str, text: str) -> None:
        reported_on.append(threading.current_thread())

    watcher = ConfigWatcher(live, {}, report)
    watcher._signature = None  # nothing at the boundaries: only the thread may reload
    watcher.check = lambda: False
    watcher.start()
    try:
        await _wait_for(lambda: watcher.watching)
        await _until_armed(watcher, path)
        parsed_on.clear()
        save(path, BASE + "MAX_TURNS: 4\n")
        await _wait_for(lambda: live.get().max_turns == 4 and reported_on)
    finally:
        watcher.stop()
    loop_thread = threading.current_thread()
    assert parsed_on and all(t is not loop_thread for t in parsed_on)
    assert reported_on == [loop_thread]


@pytest.mark.asyncio
async def test_a_truncate_seen_a_step_before_its_write_is_one_reload_not_a_refusal(tmp_path):
    """A save by truncate-then-write on a loaded machine: the thread may be woken by the truncate
    alone (watchfiles yields after a quiet step). The empty file is the middle of a save, not a
    broken one: no "reload failed" is said, and the write that follows is installed."""
    path, live, watcher, reports = make(tmp_path)
    watcher.start()
    try:
        await _wait_for(lambda: watcher.watching)
        await _until_armed(watcher, path)
        with open(path, "w") as handle:  # truncated here
            await asyncio.sleep(0.25)  # several watchfiles steps with nothing more
            handle.write(BASE + "MAX_TURNS: 6\n")
        await _wait_for(lambda: live.get().max_turns == 6)
        await asyncio.sleep(0.6)  # any late report of the empty file would be in by now
        assert reports == [("notice", f"config reloaded from {path}: MAX_TURNS 1 -> 6")]
    finally:
        watcher.stop()
    await _wait_for(lambda: not watcher._thread.is_alive())


@pytest.mark.asyncio
async def test_a_broken_save_stalled_between_truncate_and_write_is_said_once(tmp_path):
    """CI saw this: a broken save, then the same broken text saved again by a process that stalled
    between its truncate and its write for longer than a debounce. The empty file in between is
    not a bad save of its own; taken for one, it was said, and so was the broken text after it."""
    path, live, watcher, reports = make(tmp_path)
    watcher.start()
    try:
        await _wait_for(lambda: watcher.watching)
        await _until_armed(watcher, path)
        broken = BASE + "MEMORY: [unclosed\n"
        save(path, broken)
        await _wait_for(lambda: reports.texts("warn"))
        with open(path, "w") as handle:  # truncated here, and the save stalls
            for _ in range(6):
                await asyncio.sleep(0.1)
                assert watcher.current().max_turns == 1  # phase boundaries meanwhile
            handle.write(broken)
        await asyncio.sleep(1.0)  # any late report of the empty file would be in by now
        save(path, BASE + "MAX_TURNS: 4\n")
        await _wait_for(lambda: live.get().max_turns == 4)
        (failure,) = reports.texts("warn")
        assert "tmg.yaml line 11: expected" in failure
    finally:
        watcher.stop()
    await _wait_for(lambda: not watcher._thread.is_alive())


def test_a_read_that_lands_between_a_saves_truncate_and_its_write_refuses_nothing(tmp_path, monkeypatch):
    """The boundary saw the file whole, then the editor truncated it just before the read: the
    empty text read is the middle of a save. Nothing is said; the write is installed next look."""
    import tmg.config.watcher as watcher_module

    path, live, watcher, reports = make(tmp_path)
    real_read = watcher_module.read_config_bytes

    def truncated_first(p):
        open(p, "w").close()
        return real_read(p)

    save(path, BASE + "MAX_TURNS: 3\n")
    monkeypatch.setattr(watcher_module, "read_config_bytes", truncated_first)
    assert watcher.check() is False
    monkeypatch.setattr(watcher_module, "read_config_bytes", real_read)
    assert reports == [] and live.get().max_turns == 1
    save(path, BASE + "MAX_TURNS: 3\n")  # the save's write
    assert watcher.check() is True
    assert reports == [("notice", f"config reloaded from {path}: MAX_TURNS 1 -> 3")]
