"""Release switches: each behaviour change between Kubernetes releases, named, dated, and telling."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run.pods.expectation import check_expect, simulate
from harness.formats.pods import load
from reference.scheduler import view
from reference.release import RELEASES, SWITCHES, TERMINATING_VICTIMS_SKIPPED, has, minor

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_release_names_parse_and_compare():
    assert minor("v1.35.8") == minor("1.35") == (1, 35)
    assert has("1.37.2", TERMINATING_VICTIMS_SKIPPED) and not has("1.34.4", TERMINATING_VICTIMS_SKIPPED)
    with pytest.raises(ValueError, match="not a Kubernetes release"):
        minor("latest")


def test_every_switch_names_its_release_and_upstream_change():
    for s in SWITCHES:
        assert s.since in RELEASES, "a switch starts in a release whose scheduler code was read"
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


def test_a_bound_preemptor_keeps_its_nomination_before_1_35_only():
    """KEP-5278: from 1.35 the API server empties status.nominatedNodeName at binding
    (kubernetes#135103); before, nothing did."""
    s = load(SCENARIOS / "preempt-nomination-cleared-when-bound.yaml")
    old, new = simulate(s, "upstream", release="1.34")[-1], simulate(s, "plugins", release="1.37")[-1]
    assert old.state.pod_keyed("default/big").node_name == new.state.pod_keyed("default/big").node_name == "n1"
    assert old.state.pod_keyed("default/big").nominated_node_name == "n1"
    assert new.state.pod_keyed("default/big").nominated_node_name == ""


def test_release_ranges_of_scenarios():
    from reference.release import in_range, parse_range

    assert in_range("1.35", ">=1.35") and not in_range("1.34", ">=1.35")
    assert in_range("1.34", "<1.35") and not in_range("1.37", "<1.35")
    assert in_range("1.34", "")
    with pytest.raises(ValueError, match="not a release range"):
        parse_range("1.35+")


def test_a_scenario_outside_its_releases_is_predicted_at_the_nearest_release_it_specifies():
    s = load(SCENARIOS / "preempt-owner-deleted-pod-is-not-preempted-again.yaml")
    assert s.applies_to("upstream", "1.36") and not s.applies_to("upstream", "1.34")
    assert s.applies_to("plugins", "1.34"), "the range is the upstream build's only"
    assert s.semantics("upstream", "1.34") == ("upstream", "1.35")
    assert s.semantics("plugins", "1.34") == ("plugins", "1.34")


def test_a_bad_release_range_names_the_field(tmp_path):
    from harness.formats.common import ScenarioError

    bad = (SCENARIOS / "preempt-nomination-kept-when-bound.yaml").read_text().replace('"<1.35"', '"1.35+"')
    f = tmp_path / "preempt-nomination-kept-when-bound.yaml"
    f.write_text(bad)
    with pytest.raises(ScenarioError, match=r"releases.*not a release range"):
        load(f)


def test_a_switch_with_a_gate_follows_the_gate_where_one_is_set():
    """NOMINATION_CLEARED_ON_BINDING is the gate ClearingNominatedNodeNameAfterBinding, read by the
    API server (pkg/registry/core/pod/storage BindingREST): off, 1.35 keeps the nomination; on, 1.34 clears it."""
    from reference.release import NOMINATION_CLEARED_ON_BINDING, ONE_PREEMPTION_AT_A_TIME, has

    off = (("", "ClearingNominatedNodeNameAfterBinding", False),)
    assert has("1.35", NOMINATION_CLEARED_ON_BINDING) and not has("1.35", NOMINATION_CLEARED_ON_BINDING, off)
    assert has("1.34", NOMINATION_CLEARED_ON_BINDING, (("kube-apiserver", "ClearingNominatedNodeNameAfterBinding", True),))
    # Given to another component than the one that reads it, a gate changes nothing.
    assert has("1.35", NOMINATION_CLEARED_ON_BINDING, (("kube-scheduler", "ClearingNominatedNodeNameAfterBinding", False),))
    # A switch without a gate of its own ignores gates.
    assert has("1.35", ONE_PREEMPTION_AT_A_TIME, off)


def test_from_137_a_preemptors_message_names_the_placement_and_its_victims():
    """kubernetes#140180: Evaluator.Preempt's Success status carries 'found a potential placement for
    pod on node N, preempting K victims', which the fit error appends after 'preemption: '; 1.36 and
    earlier leave the filter reasons alone."""
    from reference.cycle import success_message

    reasons = "0/1 nodes are available: 1 Insufficient example.com/slot."
    assert success_message(reasons, "n1", 2, "1.36") == reasons
    assert success_message(reasons, "n1", 2, "1.37") == (
        reasons + " preemption: found a potential placement for pod on node n1, preempting 2 victims")
