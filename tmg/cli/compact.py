"""``tmg compact [FOCUS]``: summarise the older turns of a mode's current session now."""

from __future__ import annotations

import asyncio

from tmg.session.options import ChatOptions
from tmg.environment import Environment
from tmg.errors import UsageError


def run_compact(options: ChatOptions, envr: Environment, focus: str) -> int:
    from tmg.compose import load_live_config
    from tmg.paths import tmg_home
    from tmg.session.store import SessionStore
    from tmg.ui.notices import Notices

    notices = Notices(envr.stderr, color=False)
    live = load_live_config(options, envr, notices)
    mode = live.get().mode
    if SessionStore(tmg_home(envr.env)).current(mode) is None:
        raise UsageError(f'mode "{mode}" has no session yet; there is nothing to compact')
    return asyncio.run(_compact(options, envr, live, notices, focus))


async def _compact(options: ChatOptions, envr: Environment, live, notices, focus: str) -> int:
    from tmg.compose import open_session
    from tmg.engine.events import NullEvents

    # The summary lands in the transcript like one made in a chat (the session's recorder).
    session = await open_session(options, envr, live, notices, NullEvents(), interactive=True)
    try:
        line = await session.engine.compact(focus)
        session.transcript.notice(line)
        envr.stdout.write(line + "\n")
        return 0 if line.startswith("compacted") else 1
    finally:
        await session.end.run()
