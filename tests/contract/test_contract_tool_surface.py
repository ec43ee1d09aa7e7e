"""The fake's tools/list is the real server's, name for name and schema for schema."""

from __future__ import annotations

import pytest

from fakeplur.snapshot import load_snapshot

pytestmark = pytest.mark.live
PROFILES = ("lean", "full")


@pytest.mark.parametrize("profile", PROFILES)
def test_fake_lists_the_real_tools_and_schemas(servers, profile: str) -> None:
    real = servers[("real", profile)].tools
    fake = servers[("fake", profile)].tools
    assert list(fake) == list(real)
    for name, spec in real.items():
        assert fake[name].input_schema == spec.input_schema, name


@pytest.mark.parametrize("profile", PROFILES)
def test_snapshot_matches_the_live_server(servers, profile: str) -> None:
    """A stale snapshot (run scripts/snapshot-plur-tools) fails here, not in production."""
    real = servers[("real", profile)].tools
    snap = {t["name"]: t["inputSchema"] for t in load_snapshot().tools(profile)}
    assert snap == {name: spec.input_schema for name, spec in real.items()}


def test_lean_hides_the_tools_tmg_reaches_through_the_gateway(servers) -> None:
    lean = set(servers[("real", "lean")].tools)
    assert "plur_admin" in lean
    assert not {"plur_inject_hybrid", "plur_capture", "plur_learn_batch", "plur_timeline"} & lean
    assert {"plur_learn", "plur_recall", "plur_status"} <= lean
    assert "plur_admin" not in servers[("real", "full")].tools
