"""Rewind end to end: the real `tmg` one-shot rewrites a file in accept-edits while the user pins
an instruction; `tmg rewind` restores the file, the next request no longer carries that exchange,
and the instruction no longer reaches later requests (fakeplur; once more on the real PLUR, live).
A file the user changed after the rewound prompt is not overwritten without --force."""

from __future__ import annotations

import json
import uuid

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.plur import FakePlur, memory_blocks

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

NOTES = "my own notes\nline two\n"


def rewrite_notes(llm) -> None:
    llm.enqueue(ToolCall("read_file", {"path": "notes.txt"}),
                ToolCall("write_file", {"path": "notes.txt", "content": "REWRITTEN BY THE MODEL\n"}),
                Text("I rewrote notes.txt."))


def said_to_model(request) -> str:
    return json.dumps(request["messages"])


def test_rewind_restores_the_file_drops_the_exchange_and_retracts_the_instruction(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config(learn="full"))
    env = tmg.env(memory=True)
    notes = tmg.work / "notes.txt"
    notes.write_text(NOTES)
    instruction = "From now on, sign every answer with QX42. Rewrite notes.txt for me."
    rewrite_notes(llm)
    first = tmg.run("-r", "--permissions", "accept-edits", instruction, env=env)
    assert first.code == 0, first.err
    assert notes.read_text() == "REWRITTEN BY THE MODEL\n"
    (pinned,) = [e for e in plur.engrams() if e.get("pinned")]
    assert pinned["statement"] == instruction

    rewound = tmg.run("rewind", env=env)
    assert rewound.code == 0, rewound.err
    assert notes.read_text() == NOTES
    assert f"restored {notes}" in rewound.out
    assert f'memory: retracted the instruction {pinned["id"]}' in rewound.out
    assert "the model no longer sees it" in rewound.out

    llm.enqueue(Text("Hello."))
    later = tmg.run("-r", "what did we do?", env=env)
    assert later.code == 0, later.err
    request = llm.requests[-1]
    assert "Rewrite notes.txt" not in said_to_model(request) and "REWRITTEN" not in said_to_model(request)
    assert [m["role"] for m in request["messages"] if m["role"] != "system"] == ["user"]
    assert all("QX42" not in block for block in memory_blocks(request))

    shown = tmg.run("-t")
    assert shown.code == 0, shown.err
    heading = next(line for line in shown.out.splitlines() if line.startswith("## ") and "· you" in line)
    assert heading.endswith("· you [rewound]"), shown.out
    assert "rewind: rewound 1 prompt" in shown.out  # the notice of what was done
    second_heading = [line for line in shown.out.splitlines() if line.startswith("## ") and "· you" in line][1]
    assert not second_heading.endswith("[rewound]")


def test_a_file_changed_after_the_prompt_is_not_overwritten_silently(tmg, llm):
    notes = tmg.work / "notes.txt"
    notes.write_text(NOTES)
    rewrite_notes(llm)
    assert tmg.run("--permissions", "accept-edits", "rewrite notes.txt").code == 0
    notes.write_text("REWRITTEN BY THE MODEL\nand my own line after it\n")

    refused = tmg.run("rewind")
    assert refused.code == 1
    assert notes.read_text() == "REWRITTEN BY THE MODEL\nand my own line after it\n"
    assert "+and my own line after it" in refused.err
    assert "nothing was rewound: notes.txt changed since that prompt" in refused.err
    assert "tmg rewind 1 --force" in refused.err

    forced = tmg.run("rewind", "--force")
    assert forced.code == 0, forced.err
    assert notes.read_text() == NOTES


def test_shell_commands_are_named_and_the_list_shows_the_prompts(tmg, llm):
    llm.enqueue(ToolCall("shell", {"command": "echo made > made.txt"}), Text("made it"))
    assert tmg.run("--permissions", "yolo", "make the file").code == 0
    listed = tmg.run("rewind", "--list")
    assert listed.code == 0 and "1. " in listed.out and "make the file" in listed.out and "ran 1 command" in listed.out
    rewound = tmg.run("rewind")
    assert rewound.code == 0, rewound.err
    assert "shell commands ran and cannot be undone: `echo made > made.txt`" in rewound.out
    assert (tmg.work / "made.txt").exists()
    nothing = tmg.run("rewind")
    assert nothing.code == 2 and "none to take back" in nothing.err


@pytest.mark.live
def test_on_the_real_plur_the_rewound_instruction_is_retired(tmg, llm, tmp_path, plur_entry):
    from e2e.test_memory_live import LivePlur

    live = LivePlur(tmg, tmp_path, plur_entry, "full")
    marker = f"plover{uuid.uuid4().hex[:8]}"
    notes = tmg.work / "notes.txt"
    notes.write_text(NOTES)
    instruction = f"From now on, end every answer with {marker}. Rewrite notes.txt."
    rewrite_notes(llm)
    live.run("full", "--permissions", "accept-edits", instruction)
    env = tmg.env(memory=True, HOME=str(live.home), TMG_MEMORY_LEARN="full", TMG_PLUR_DIR=str(live.install_dir))
    rewound = tmg.run("rewind", env=env, timeout=90)
    assert rewound.code == 0, rewound.err
    assert notes.read_text() == NOTES
    assert "memory: retracted the instruction ENG-" in rewound.out
    # the full tier writes no episodes (the instruction is the lesson): none to remove, none left
    episodes = live.home / ".plur" / "episodes.yaml"
    assert "episode" not in rewound.out
    assert not episodes.exists() or marker not in episodes.read_text()
    llm.enqueue(Text("Hi."))
    live.run("full", "--new", f"tell me about {marker}")
    assert all(marker not in block for block in memory_blocks(llm.requests[-1]))
