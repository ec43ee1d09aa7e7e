"""`@path` in a prompt attaches a file (issue 25 item 4): its text, bounded, in the request; an image
as an image part for a model that takes images, else a note; a file outside the folder is the
user's to name, one that holds secrets asks (a one-shot cannot: refused, saying how to allow it);
and `@@` escapes."""

from __future__ import annotations

import base64
import json
import zlib

import pytest

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def png() -> bytes:
    """A 2x2 red PNG, made here rather than checked in."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", (2).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00")
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def last_user(llm):
    return [m for m in llm.requests[-1]["messages"] if m["role"] == "user"][-1]


def test_a_file_named_with_at_is_attached_to_the_prompt(tmg, llm):
    (tmg.work / "notes.md").write_text("The release is on Thursday.\nOwner: Ada.\n")
    r = tmg.run("-r", "when is the release? see @notes.md.")
    assert r.code == 0, r.err
    sent = last_user(llm)["content"]
    assert sent.startswith("when is the release? see @notes.md.\n\n--- file @notes.md (")
    assert "The release is on Thursday.\nOwner: Ada." in sent and sent.rstrip().endswith("--- end of file @notes.md ---")
    history = [json.loads(line) for line in (tmg.session_dirs()[0] / "history.jsonl").read_text().splitlines()]
    assert "Owner: Ada." in history[0]["content"]  # a resumed session sends what was sent
    assert "read_file" in (tmg.session_dirs()[0] / "transcript.md").read_text()  # the permission decision


def test_a_long_file_is_cut_and_the_cut_is_said(tmg, llm):
    log = tmg.work / "big.log"
    log.write_text("".join(f"line {i}: " + "x" * 70 + "\n" for i in range(2000)))
    r = tmg.run("-r", "what went wrong in @big.log")
    assert r.code == 0, r.err
    sent = last_user(llm)["content"]
    assert "line 0: " in sent and "line 1999" not in sent
    assert f"[cut: the first 20,000 characters (" in sent and f"of {log.stat().st_size:,} bytes are attached" in sent
    assert f"tmg: @big.log: attached the first 20,000 characters of {log.stat().st_size:,} bytes" in r.err


def test_an_image_goes_as_an_image_part_to_a_model_that_takes_images(tmg, llm):
    (tmg.work / "red.png").write_bytes(png())
    tmg.write_config("    IMAGES: true\n")
    r = tmg.run("-r", "what colour is @red.png")
    assert r.code == 0, r.err
    content = last_user(llm)["content"]
    assert isinstance(content, list)
    text = content[0]["text"]
    assert text.startswith("what colour is @red.png") and "[image: image/png, " in text
    (part,) = [p for p in content if p["type"] == "image_url"]
    assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png()).decode()


def test_an_image_for_a_model_without_images_is_a_note_said_once(tmg, llm):
    (tmg.work / "red.png").write_bytes(png())
    tmg.write_config("    IMAGES: false\n")
    r = tmg.run("-r", "what colour is @red.png")
    assert r.code == 0, r.err
    content = last_user(llm)["content"]
    assert isinstance(content, str) and "[image: image/png, " in content and "only this note is sent" in content
    assert "model openai/mock-model does not take images (PROVIDERS.mock.IMAGES: true says it does)" in r.err


def test_outside_the_folder_is_allowed_a_secret_file_asks_and_at_at_escapes(tmg, llm, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("text from outside the project")
    (tmg.work / ".env").write_text("API_TOKEN=tok-do-not-send-1234\n")
    r = tmg.run("-r", f"compare @{outside} with @.env and mail @@ada")
    assert r.code == 1, r.err  # answered, but a file the user named was refused: not all was done
    sent = last_user(llm)["content"]
    assert sent.startswith(f"compare @{outside} with @.env and mail @ada\n\n")
    assert "text from outside the project" in sent
    assert "tok-do-not-send" not in sent and "--- file @.env was not attached (" in sent
    refused = [line for line in r.err.splitlines() if "refused read_file" in line]
    assert refused and "PERMISSIONS.ALLOW" in refused[0]  # the line says what would allow it
    assert "@.env was not attached" in r.err


def test_a_path_that_names_nothing_is_sent_as_typed_with_a_warning(tmg, llm):
    r = tmg.run("-r", "fix @src/mian.py for @someone")
    assert r.code == 0, r.err
    assert last_user(llm)["content"] == "fix @src/mian.py for @someone"
    assert "@src/mian.py names no file or folder here" in r.err and "@someone" not in r.err


def test_piped_text_names_no_file(tmg, llm):
    # Piped text is material (a web page, a colleague's note): an @path in it attaches nothing.
    (tmg.work / "private.txt").write_text("not for the provider")
    (tmg.work / "asked.txt").write_text("asked for")
    r = tmg.run("-r", "summarise this, and @asked.txt", stdin="see @private.txt for details\n")
    assert r.code == 0, r.err
    sent = last_user(llm)["content"]
    assert "asked for" in sent and "not for the provider" not in sent
    assert "see @private.txt for details" in sent
