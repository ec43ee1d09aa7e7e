"""``/rewind [N]`` in the chat: take back the last N prompts (tmg.checkpoints.rewind).

Without N it lists the recent prompts (1 is the latest) and asks how many to take back. A file
changed since the rewound prompt left it is shown as a short diff and put to the user: overwrite
it, or keep their version (then it is not restored). What memory learned from those prompts is
retracted through the session's memory; shell commands that ran are named (no undoing them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from tmg.errors import UsageError

if TYPE_CHECKING:
    from tmg.repl.screen import ReplScreen
    from tmg.session.runner import ChatSession

LISTED = 10  # the recent prompts /rewind lists
Ask = Callable[[str], Awaitable[str | None]]


async def rewind(session: ChatSession, screen: ReplScreen, arg: str, ask: Ask) -> None:
    from tmg.checkpoints.rewind import apply_rewind, kept_memory_ids, plan_rewind, recent_prompts

    history, log = session.engine.history, session.checkpoints
    if log is None:
        screen.error("rewind is not available in this session")
        return
    if not arg:
        prompts = recent_prompts(history, log)[::-1][:LISTED]
        if not prompts:
            screen.say("nothing to rewind: this session has no prompts yet")
            return
        screen.say("recent prompts (1 is the latest):")
        for number, prompt in enumerate(prompts, 1):
            screen.say(f"  {prompt.line(number)}")
        arg = ((await ask(f"rewind how many? [1-{len(prompts)}, Enter: none] ")) or "").strip()
        if not arg:
            screen.hint("nothing rewound")
            return
    if not arg.isdigit():
        screen.error(f"/rewind takes a number of prompts, not {arg!r} (/rewind lists them)")
        return
    if session.memory is not None:  # a learn of the last prompt still landing is recorded first
        await session.memory.hook.settled(3.0)
    try:
        plan = plan_rewind(history, log, int(arg))
    except UsageError as exc:
        screen.error(str(exc))
        return
    keep = set()
    for change in plan.conflicts():
        screen.say(f"{change.path} changed since the rewound prompt left it:")
        screen.say(change.diff(log))
        answer = ((await ask("overwrite your changes with the version before the prompt? [y/N] ")) or "").strip()
        if answer.lower()[:1] != "y":
            keep.add(change.path)
    lines = apply_rewind(plan, history, log, keep)
    if plan.memory:
        if session.memory is not None:
            lines += await session.memory.retract(plan.memory, kept_memory_ids(plan, log))
        else:
            from tmg.memory.retract import retract

            lines += await retract(None, plan.memory)
    for line in lines:
        screen.info(line)
    session.transcript.notice("rewind: " + "; ".join(lines))
