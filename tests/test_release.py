"""Release switches: each behaviour change between Kubernetes releases, named, dated, and telling."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.expectation import check_expect, simulate
from harness.scenario import load
from reference.scheduler import view
from reference.release import PINNED, SWITCHES, TERMINATING_VICTIMS_SKIPPED, has, minor

SCENARIOS = Path(__file__).parent.parent / "scenarios"


def test_release_names_parse_and_compare():
    assert minor("v1.35.8") == minor("1.35") == (1, 35)
    assert has("1.37.2", TERMINATING_VICTIMS_SKIPPED) and not has("1.34.4", TERMINATING_VICTIMS_SKIPPED)
    with pytest.raises(ValueError, match="not a Kubernetes release"):
        minor("latest")


def test_every_switch_names_its_release_and_upstream_change():
    for s in SWITCHES:
        assert minor(s.since) > minor(PINNED) or s.since == PINNED
        assert s.upstream.startswith("kubernetes#") and s.what


def test_owner_deleted_victim_tells_1_34_from_1_35():
    """1.34 patches DisruptionTarget onto a victim its owner already deleted, so it counts as
    preempted; from 1.35 (kubernetes#134927) such a victim is skipped and never marked."""
    s = load(SCENARIOS / "preempt-owner-deleted-pod-does-not-hold-back.yaml")
    last = s.steps[-1].expect
    old, new = simulate(s, "upstream", release="1.34")[-1], simulate(s, "upstream", release="1.35")[-1]
    assert not check_expect(last, view(old), {})
    assert any(m.pod == "leaving" for m in check_expect(last, view(new), {}))
    assert "default/leaving" in old.preempted and "default/leaving" not in new.preempted
