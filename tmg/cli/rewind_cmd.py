"""``tmg rewind [N]``: take back the last N prompts of the mode's current session (default 1).

Their file changes are undone (a file they created is removed), their exchanges leave what the
model is sent (the history keeps them, marked), and what memory learned from them is retracted.
A file changed since (its content is not what the prompt left) is shown as a diff and the rewind
refused, unless ``--force``. Shell commands cannot be undone: the ones that ran are named.
"""

from __future__ import annotations

import asyncio

from tmg.environment import Environment
from tmg.errors import TmgError, UsageError
from tmg.session.options import ChatOptions


def run_rewind(options: ChatOptions, envr: Environment, count: int, force: bool, listing: bool) -> int:
    from tmg.compose import load_live_config
    from tmg.paths import tmg_home
    from tmg.session.store import SessionStore
    from tmg.ui.notices import Notices

    notices = Notices(envr.stderr, color=False)
    live = load_live_config(options, envr, notices)
    mode = live.get().mode
    if SessionStore(tmg_home(envr.env)).current(mode) is None:
        raise UsageError(f'mode "{mode}" has no session yet; there is nothing to rewind')
    return asyncio.run(_rewind(options, envr, live, notices, count, force, listing))


async def _rewind(options: ChatOptions, envr: Environment, live, notices, count: int, force: bool,
                  listing: bool) -> int:
    from tmg.checkpoints.rewind import apply_rewind, kept_memory_ids, plan_rewind, recent_prompts
    from tmg.compose import open_session
    from tmg.engine.events import NullEvents

    # Locked as a chat is (a session open in another tmg is said, never written beside it).
    session = await open_session(options, envr, live, notices, NullEvents(), interactive=True)
    try:
        history, log = session.engine.history, session.checkpoints
        assert log is not None
        if listing:
            prompts = recent_prompts(history, log)[::-1]
            for number, prompt in enumerate(prompts, 1):
                envr.stdout.write(prompt.line(number) + "\n")
            if not prompts:
                envr.stdout.write("no prompts to rewind in this session\n")
            return 0
        plan = plan_rewind(history, log, count)
        conflicts = plan.conflicts()
        if conflicts and not force:
            for change in conflicts:
                notices.notice(f"{change.path} changed since the rewound prompt left it:")
                envr.stderr.write(change.diff(log) + "\n")
            names = ", ".join(c.path.name for c in conflicts)
            raise TmgError(f"nothing was rewound: {names} changed since that prompt; to overwrite your changes run "
                           f"tmg rewind {count} --force")
        lines = apply_rewind(plan, history, log)
        if plan.memory:
            if session.memory is not None:
                session.memory.start()
                lines += await session.memory.retract(plan.memory, kept_memory_ids(plan, log))
            else:
                from tmg.memory.retract import retract

                lines += await retract(None, plan.memory)
        for line in lines:
            envr.stdout.write(line + "\n")
        session.transcript.notice("rewind: " + "; ".join(lines))
        return 0
    finally:
        await session.end.run()
