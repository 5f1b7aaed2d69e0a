"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/preemption/executor_test.go
TestIsPodRunningPreemption and TestIsPodGroupRunningPreemption, the row "preemptor in preemptingSet,
victim in lastVictimSet and in PodLister with deletion timestamp" (and v1.35.8 preemption_test.go
TestIsPodRunningPreemption's same row), through the model's scheduling cycle (reference.cycle.attempt).
Each test names its upstream case and is the ``test:`` of that case in peers/upstream-cases.yaml;
the facts are the upstream rows', written anew.

Upstream's row: the preemptor (a pod, or a pod group) is still in the executor's set of preemptors
at work and its last victim is registered, but that victim already has a deletionTimestamp: its
delete has been issued, so the preemption counts as finished (executor.go isRunningPreemption) and
DefaultPreemption's PreEnqueue (default_preemption.go) lets the preemptor into the queue again. The
model's API calls complete within the preempting cycle, so this is the state every later attempt
meets: the preemptor nominated to "node", where its victim ("victim-deleted", mid priority) is
terminating by preemption and "victim1" (mid priority) still runs, the node full. Upstream answers
"not running" (false); here the preemptor's cycle is tried and not held back, and, the preemption
still under way, it preempts nobody new and keeps its nomination: a pod is not eligible to preempt
again (a terminating pod on its nominated node: PodEligibleToPreemptOthers), a pod group (1.37)
finds the preemption ongoing (podgrouppreemption.go isOngoingPreemption).
"""

from __future__ import annotations

import pytest

from reference import cycle
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, HIGH, cluster, group, node, pod

MID = 100  # the preemption package's midPriority
DELETED = dict(deletion_timestamp=T0, disruption_target_by_preemption=True)


def tried_while_its_victim_terminates(preemptor, release: str, gates=(), groups=()) -> World:
    victims = [pod("victim1", MID, on="node"), pod("victim-deleted", MID, on="node", **DELETED)]
    state = cluster([node("node", pods=2)], [*victims, preemptor], groups=groups)
    world = World(state, T0, "upstream", release=release, gates=gates, preempted=frozenset({"default/victim-deleted"}))
    after = cycle.attempt(world, preemptor.key)
    assert [p.pod for p in after.predictions] == [preemptor.key], "tried, not held back"
    assert not any("waiting for the preemption" in line or "waits for the preemption" in line for line in after.log)
    now = after.state.pod_keyed(preemptor.key)
    assert now.nominated_node_name == "node" and not now.node_name
    assert after.preempted == world.preempted and not after.state.pod_keyed("default/victim1").terminating
    return after


@pytest.mark.parametrize("release", ["1.35", "1.37"])
def test_is_pod_running_preemption_last_victim_being_deleted(release):
    """TestIsPodRunningPreemption (1.37.2 executor_test.go; 1.35.8 preemption_test.go), "preemptor in
    preemptingSet, victim in lastVictimSet and in PodLister with deletion timestamp": not running."""
    after = tried_while_its_victim_terminates(pod("preemptor", HIGH, nominated_node_name="node"), release)
    assert after.predictions[0].message.endswith("preemption: not eligible due to a terminating pod on the nominated node.")


def test_is_pod_group_running_preemption_last_victim_being_deleted():
    """TestIsPodGroupRunningPreemption (1.37.2 executor_test.go), "preemptor in preemptingSet, victim in
    lastVictimSet and in PodLister with deletion timestamp": not running. The preemptor is pod group
    pg1 (GenericWorkload on) with its one pending pod."""
    member = pod("preemptor", HIGH, group="pg1", nominated_node_name="node")
    after = tried_while_its_victim_terminates(member, "1.37", GENERIC_WORKLOAD, [group("pg1", HIGH)])
    assert after.predictions[0].outcome == "unschedulable"
    assert after.predictions[0].reasons[0].endswith("ongoing preemption on nominated nodes")
