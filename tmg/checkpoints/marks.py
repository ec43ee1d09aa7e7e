"""`tmg -t` marks the prompts a rewind took back: ``## 14:02:11 · you [rewound]``.

The transcript is append-only Markdown written as the session goes, so the marks are put on when
it is read back, from the checkpoint log's rewound records (each prompt's time and first words):
a prompt's heading is the one whose time is at most a few seconds before the prompt was stored
and whose text begins with its words. Only a session that was rewound pays for the look.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from tmg.checkpoints import CHECKPOINTS_DIR, LOG_FILE

MARK = " [rewound]"
_HEADING = re.compile(r"^## (\d\d:\d\d:\d\d) · you$", re.M)
_SLACK_S = 5  # a prompt's heading is written before its user message is stored (resources are read between)
_WORDS = 24


def rewound_prompts(session_dir: Path) -> list[dict]:
    if not (session_dir / CHECKPOINTS_DIR / LOG_FILE).exists():
        return []
    from tmg.checkpoints.log import CheckpointLog  # only a session with checkpoints loads the log's code

    return [p for r in CheckpointLog(session_dir).records() if r["k"] == "rewound" for p in r.get("prompts", ())]


def mark_rewound(text: str, session_dir: Path) -> str:
    """The transcript ``text`` with the headings of rewound prompts marked."""
    prompts = rewound_prompts(session_dir)
    if not prompts:
        return text
    headings = list(_HEADING.finditer(text))
    marked: set[int] = set()
    for prompt in prompts:
        ts, words = float(prompt.get("p", 0)), " ".join(str(prompt.get("text", "")).split())[:_WORDS].rstrip("…")
        times = {time.strftime("%H:%M:%S", time.localtime(ts - s)) for s in range(_SLACK_S + 1)}
        for h in headings:
            body = " ".join(text[h.end():h.end() + 400].split())
            if h.start() not in marked and h.group(1) in times and body.startswith(words):
                marked.add(h.start())
                break
    out, last = [], 0
    for start in sorted(marked):
        end = text.index("\n", start) if "\n" in text[start:] else len(text)
        out.append(text[last:end] + MARK)
        last = end
    return "".join(out) + text[last:]
