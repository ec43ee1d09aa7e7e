"""Secrets never reach memory (memory.md §4): a configured key echoed in an answer and a piped
`.env` password are in neither the memory server's store nor tmg's spool and pending files."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import Text
from e2e.plur import FakePlur

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

CANARY2 = "hunter2-canary-77b1"


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def everything_under(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("learn", ["full", "batch", "capture"])
def test_neither_the_configured_key_nor_a_piped_password_is_stored(tmg, llm, plur, learn):
    tmg.write_config(plur.config(learn=learn))
    llm.enqueue(Text(f"Saved. Your key {API_KEY} and DB_PASSWORD={CANARY2} are set; {CANARY2} works."))
    r = tmg.run("-r", "From now on, use these settings for the app:", stdin=f"DB_HOST=db\nDB_PASSWORD={CANARY2}\n",
                env=tmg.env(memory=True))
    assert r.code == 0, r.err
    stored = plur.store.read_text() if plur.store.exists() else ""
    if learn == "full":  # learns from the typed argument only: it points at piped text, so nothing
        assert plur.engrams() == [] and plur.episodes() == []
    else:
        assert "DB_PASSWORD=***" in stored  # the words around the secret were kept
    assert API_KEY not in stored and CANARY2 not in stored
    assert API_KEY not in everything_under(tmg.home)


def test_a_spooled_batch_holds_no_secret(tmg, llm, plur):
    tmg.write_config(plur.config(learn="batch", reject=("plur_learn_batch",)))
    llm.enqueue(Text(f"The key is {API_KEY}; the .env says DB_PASSWORD={CANARY2}."))
    r = tmg.run("-r", "what do my settings say?", env=tmg.env(memory=True))
    assert r.code == 0 and "memory write failures: 1" in r.err
    spooled = list((tmg.home / "memory" / "spool").glob("*.json"))
    assert len(spooled) == 1 and "DB_PASSWORD=***" in spooled[0].read_text()
    text = everything_under(tmg.home / "memory")
    assert API_KEY not in text and CANARY2 not in text
