"""Peer cases: kubernetes test/integration/scheduler/preemption/misc/miscpreemption_test.go
TestDisablePreemption at v1.34.4, v1.35.8 and v1.37.2, through the model's scheduling loop
(reference.scheduler.run_queue) with the scheduler profile's preemption turned off
(reference.world.World.preemption). Each test names its upstream case and is the ``test:`` of that
case per release in peers/upstream-cases.yaml; the facts (the node, the pods' requests and
priorities, the outcome) are the upstream row's, written anew.

Upstream disables the DefaultPreemption PostFilter plugin in the scheduler's only profile and runs
the row with async preemption on and off; the outcome is the same both ways (no PostFilter runs),
so the model runs it once per release. node1 holds 32 pods, 500m cpu and 500 bytes of memory.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference import scheduler as sched
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import cluster, node, pod

LOW, HIGH = 100, 300


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.37"])
def test_disable_preemption(release):
    """TestDisablePreemption, "pod preemption will not happen": the high preemptor (300m, 200 bytes)
    does not fit beside the running low pod (400m, 200 bytes); with no PostFilter it stays pending,
    is never nominated, and the low pod keeps running."""
    victim = pod("victim-pod", LOW, on="node1").with_(requests=(("cpu", 400), ("memory", 200)))
    preemptor = pod("preemptor-pod", HIGH, queued_at=T0).with_(requests=(("cpu", 300), ("memory", 200)))
    world = World(cluster([node("node1", cpu=500, memory=500)], [victim, preemptor]), T0, "upstream",
                  release=release, preemption=False)
    world = sched.run_queue(world, {preemptor.key})
    after = world.state.pod_keyed(preemptor.key)
    assert not after.node_name and after.nominated_node_name == ""
    assert world.predictions[-1].outcome == "unschedulable"
    assert world.predictions[-1].message == "0/1 nodes are available: 1 Insufficient cpu."
    assert not world.preempted and not world.state.pod_keyed(victim.key).terminating
    # The same cluster with preemption on: the victim goes (what the profile's switch changes).
    enabled = sched.run_queue(replace(world, preemption=True, parked=()), {preemptor.key})
    assert enabled.state.pod_keyed(preemptor.key).nominated_node_name == "node1"
