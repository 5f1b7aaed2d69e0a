"""Peer cases: kubernetes v1.37.2 unit tests whose preemptor is a composite pod group (GenericWorkload
and CompositePodGroup on), through the model's pod-group preemption (reference.podgroup) and its
scheduling cycle (reference.cycle) at release "1.37": default_preemption_test.go
TestDefaultPreemption_PodGroupPostFilter_CompositePodGroup and executor_test.go TestPrepareCandidate's
"compositepodgroup preemptor, one victim without condition". Each test names its upstream case and
is the ``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts are the
upstream rows', written anew.

A composite group's pods belong to the pod groups under it: where upstream hands the preemptor's
pods to the composite group directly, here they are the pods of one pod group under it.
"""

from __future__ import annotations

import reference.cycle as cycle
import reference.podgroup as podgroup
from reference.podgroup import NO_VICTIMS, GroupAttempt, attempt, preempt, unit_of
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import COMPOSITE, HIGH, big_node, cluster, composite, group, pod

RELEASE = "1.37"


def test_pod_group_post_filter_for_a_composite_pod_group():
    """TestDefaultPreemption_PodGroupPostFilter_CompositePodGroup: composite group cpg (no priority: 0)
    preempts for its pending pod p (high) in a cluster with no nodes and no pods: no victims, the
    preemption fails with "No preemption victims found for incoming preemptor", and the group's
    pods are told so after "pod group preemption:"."""
    cpg, pg = composite("cpg"), group("pg", 0, parent="cpg")
    p = pod("p", HIGH, group="pg")
    state = cluster([], [p], groups=[pg], composites=[cpg])
    assert unit_of(state, p, RELEASE, COMPOSITE) == cpg
    victims, room, why = preempt(state, cpg, [p], RELEASE, T0, gates=COMPOSITE)
    assert (victims, room, why) == ((), None, NO_VICTIMS)
    # Through the whole cycle (at the group's priority, so that its pod passes 1.37's check of it).
    p0 = p.with_(priority=0)
    ga = attempt(cluster([], [p0], groups=[pg], composites=[cpg]), cpg, RELEASE, COMPOSITE, T0)
    assert ga.outcome == "unschedulable"
    assert ga.messages[p0.key].endswith(f"pod group preemption: {NO_VICTIMS}")


def test_prepare_candidate_for_a_composite_pod_group(monkeypatch):
    """TestPrepareCandidate (executor_test.go), "compositepodgroup preemptor, one victim without
    condition": the preemptor is composite group cpg1 (its pod preemptor pending, in pod group pg1
    under it), whose preemption chose victim1 on node1; victim1 is marked and deleted as for a pod,
    and it is cpg1's preemption that runs."""
    victim = pod("victim1", 100, on="node1")
    state = cluster([big_node("node1")], [pod("preemptor", HIGH, group="pg1"), victim],
                    groups=[group("pg1", HIGH, parent="cpg1")], composites=[composite("cpg1", HIGH)])
    world = World(state, T0, "upstream", release=RELEASE, gates=COMPOSITE)
    preemptors = []

    def chosen(state, group, release, gates, now, choices=None):
        preemptors.append(group.key)
        return GroupAttempt(group.key, "preempt", placement={"default/preemptor": "node1"}, victims=(victim.key,),
                            nominations={"default/preemptor": "node1"}, reasons=("the row's candidate",))
    monkeypatch.setattr(podgroup, "attempt", chosen)
    after = cycle.attempt(world, "default/preemptor")
    assert preemptors == ["default/cpg1"]
    assert after.preempted == frozenset({victim.key})
    now = after.state.pod_keyed(victim.key)
    assert now.terminating and now.disruption_target_by_preemption
