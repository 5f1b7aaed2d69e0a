"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/plugins/defaultpreemption
default_preemption_test.go TestPreEnqueue, the rows about pod groups without composite pod groups,
through the model's scheduling cycle (reference.cycle.attempt, which holds a pod group back while
its preemption is under way: reference.podgroup.attempt). Each test names its upstream case and is
the ``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts are the
upstream rows', written anew.

Upstream's row marks pod group pg1 as running a preemption (pod p of pg1 triggered it, its API
calls in flight) and asks DefaultPreemption's PreEnqueue about pod p_other. The model's preemption
calls complete at once; what it keeps of a group's preemption is its victims, and the preemption is
under way while one is still terminating. So here pg1's last preemption took p1 (on node1, the row's
one running pod), which is terminating, and the model's cycle is tried for p_other: held without an
attempt, with upstream's message, or tried.
"""

from __future__ import annotations

import pytest

from reference import cycle
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, HIGH, cluster, group, node, pod

HELD = "waits for the preemption for this pod group to be finished"

PRE_ENQUEUE = [
    # GenericWorkload enabled, pod in same PodGroup, returns UnschedulableAndUnresolvable
    pytest.param(GENERIC_WORKLOAD, "pg1", [group("pg1", HIGH)], True, id="same-pod-group-held"),
    # GenericWorkload disabled, pod in same PodGroup, returns nil: the pods are plain pods
    pytest.param((), "pg1", [group("pg1", 0)], False, id="gate-off-same-pod-group-not-held"),
    # GenericWorkload enabled, pod in different PodGroup, returns nil
    pytest.param(GENERIC_WORKLOAD, "pg2", [group("pg1", HIGH), group("pg2", HIGH)], False,
                 id="other-pod-group-not-held"),
]


@pytest.mark.parametrize("gates, other_group, groups, held", PRE_ENQUEUE)
def test_pre_enqueue(gates, other_group, groups, held):
    """TestPreEnqueue: p_other (high, in ``other_group``) is held back by pg1's preemption exactly
    when upstream's PreEnqueue says UnschedulableAndUnresolvable."""
    victim = pod("p1", on="node1", deletion_timestamp=T0, disruption_target_by_preemption=True)
    pods = [pod("p", HIGH, group="pg1"), pod("p_other", HIGH, group=other_group), victim]
    world = World(cluster([node("node1")], pods, groups=groups), T0, "upstream", release="1.37", gates=gates,
                  group_preemptions=(("default/pg1", (victim.key,)),))
    after = cycle.attempt(world, "default/p_other")
    tried = [pr.pod for pr in after.predictions]
    assert tried == ([] if held else ["default/p_other"])
    assert (HELD in after.log[-1]) is held
    if held:  # parked without a failed attempt, as a pod PreEnqueue turns away
        assert "default/p_other" in after.parked_keys() and not after.failures
