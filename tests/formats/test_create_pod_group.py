"""createPodGroup: a pod group made by a step, whose pods may come before it and wait for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.formats.common import ScenarioError
from harness.formats.pods import load
from harness.run.pods.expectation import simulate
from reference.scheduler import view

SCENARIO = Path(__file__).parents[2] / "scenarios" / "podgroup-unplaced-members-retried-at-once.yaml"


def test_pods_wait_for_a_group_a_later_step_creates_and_then_meet_in_one_cycle():
    s = load(SCENARIO)
    assert [g.name for g in s.all_pod_groups] == ["running", "late"] and s.releases_of("upstream") == ">=1.37"
    worlds = simulate(s, "upstream", release="1.37")
    held = view(worlds[2])
    assert held["new-1"].phase == held["new-2"].phase == "pending"
    seen = view(worlds[-1])
    assert seen["new-1"].node == seen["new-2"].node == "n1" and seen["low-1"].phase != "running"


def test_a_group_named_twice_or_never_made_is_an_error_with_its_place(tmp_path):
    text = SCENARIO.read_text()
    twice = tmp_path / "twice.yaml"
    twice.write_text(text.replace("createPodGroup: {name: late", "createPodGroup: {name: running"))
    with pytest.raises(ScenarioError, match="podGroups.*running"):
        load(twice)
    never = tmp_path / "never.yaml"
    never.write_text(text.replace("  - createPodGroup: {name: late, class: high}\n", "  - wait: 1s\n")
                     .replace("    expect:\n      running: {new-1: n1, new-2: n1, old-1: n1, old-2: n1}\n"
                              "      preempted: [low-1]\n", ""))
    with pytest.raises(ScenarioError, match=r"steps\[0\].createPod.group: no pod group named 'late'"):
        load(never)
