"""Peer cases: kubernetes test/integration/scheduler/preemption/nominatednodename/nominatednodename_test.go
at v1.34.4, v1.35.8 and v1.37.2: TestPreferNominatedNode's two rows and TestNominatedNode's two rows
that delete the node, through the model's scheduling over time (reference.scheduler.run_queue,
reference.nodes.delete_node, reference.scheduler.delete_pod) at each release. Each test names its
upstream case and is the ``test:`` of that case per release in peers/upstream-cases.yaml; the facts
(nodes, requests, priorities, which node each pod ends on, whether the nomination is cleared) are
the upstream rows', written anew.

How the rows map onto the model:

* TestPreferNominatedNode wraps the scheduler's queue so that every pod it hands out carries node-1
  as its nominated node, as if an earlier preemption had set it. Here the preemptor is pending
  with that nomination when its first attempt runs. Nodes hold 32 pods, 500m cpu and 500 bytes;
  the running low pods ask 100m and 100 bytes, the preemptor 500m and 200 bytes.
* TestNominatedNode runs without a kubelet or a pod garbage collector: a preempted pod stays
  terminating until the test force-deletes it, and the pods of a deleted node stay in the API.
  Here the low pod's 30 s grace period never runs out (no time passes), the node is deleted with
  its pods staying (``pods_stay``), and the force delete is a delete with no grace period.
  Priorities 100 (low) and 200 (medium); one cpu per pod on a one-cpu node.
* Upstream runs every row with the async-preemption (and, for TestNominatedNode, the async API
  calls and NominatedNodeNameForExpectation) gates on and off, and expects the same outcome each
  time: the model, whose calls complete within the cycle, runs each row once per release.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference import nodes as node_events
from reference import scheduler as sched
from reference.objects import Taint
from reference.preemption import NO_NODES
from reference.world import World, set_pod

from tests.builders import T0
from tests.peers.upstream_tables import cluster, names, node, pod

RELEASES = ["1.34", "1.35", "1.37"]
CPU = 1000  # one cpu, in millicores
LOW, MEDIUM, HIGH = 100, 200, 300


def prefer_nominated(release: str, low_on: str) -> World:
    """A low pod runs on ``low_on``; the preemptor, nominated to node-1, gets its attempt."""
    nodes = [node(n, cpu=500, memory=500) for n in ("node-1", "node-2")]
    low = pod("low-pod", LOW, on=low_on).with_(requests=(("cpu", 100), ("memory", 100)))
    preemptor = pod("preemptor-pod", HIGH, nominated_node_name="node-1", queued_at=T0).with_(
        requests=(("cpu", 500), ("memory", 200)))
    world = World(cluster(nodes, [low, preemptor]), T0, "upstream", release=release)
    return sched.run_queue(world, {preemptor.key})


@pytest.mark.parametrize("release", RELEASES)
def test_prefer_nominated_node_free(release):
    """TestPreferNominatedNode, "nominated node released all resource, preemptor is scheduled to the
    nominated node": node-1 is empty, so the preemptor binds there, its nominated node tried first."""
    world = prefer_nominated(release, "node-2")
    assert world.state.pod_keyed("default/preemptor-pod").node_name == "node-1"
    assert world.predictions[-1].reasons == ("fits its nominated node node-1",)
    assert not world.preempted


@pytest.mark.parametrize("release", RELEASES)
def test_prefer_nominated_node_does_not_fit(release):
    """TestPreferNominatedNode, "nominated node cannot pass all the filters, preemptor should find a
    different node": the low pod on node-1 leaves too little cpu, so the preemptor binds on node-2,
    which fits, and preempts nobody."""
    world = prefer_nominated(release, "node-1")
    assert world.state.pod_keyed("default/preemptor-pod").node_name == "node-2"
    assert not world.preempted and not world.state.pod_keyed("default/low-pod").terminating


def create(world: World, p) -> World:
    """A pod created with its priority set (upstream's pods name no PriorityClass), then scheduled."""
    p = p.with_(queued_at=world.now)
    return sched.run_queue(set_pod(world, p), {p.key})


def nominated_then_node_deleted(release: str, tainted_node: bool) -> World:
    """The low pod runs on fake-node (and, with ``tainted_node``, taint-node, one cpu and a NoSchedule
    taint nobody tolerates, exists first); medium comes and preempts it; fake-node is deleted with
    the terminating low pod still bound to it; then low is force-deleted."""
    nodes = [node("fake-node", cpu=CPU, memory=2**30)]
    if tainted_node:
        tainted = replace(node("taint-node", cpu=CPU, memory=2**30), taints=(Taint("taint-node", "NoSchedule", "true"),))
        nodes.insert(0, tainted)
    world = World(cluster(nodes, []), T0, "upstream", release=release)
    world = create(world, pod("low", LOW).with_(requests=(("cpu", CPU),)))
    assert world.state.pod_keyed("default/low").node_name == "fake-node"
    world = create(world, pod("medium", MEDIUM).with_(requests=(("cpu", CPU),)))
    medium = world.state.pod_keyed("default/medium")
    assert medium.nominated_node_name == "fake-node" and not medium.node_name
    assert names(world.preempted) == ["low"] and world.state.pod_keyed("default/low").terminating
    world = node_events.delete_node(world, "fake-node", pods_stay=True)
    assert world.state.pod_keyed("default/medium").nominated_node_name == "fake-node", "no cycle yet"
    world = sched.delete_pod(world, "default/low", grace_seconds=0)
    assert world.state.pod_keyed("default/low") is None
    return world


@pytest.mark.parametrize("release", RELEASES)
def test_nominated_node_deleted_no_node_left(release):
    """TestNominatedNode, "mid-priority pod preempts low-priority pod, followed by a node deletion":
    once low is gone medium is tried again with no node left (upstream's ErrNoNodesAvailable), and
    its nomination is cleared; it stays pending."""
    world = nominated_then_node_deleted(release, tainted_node=False)
    medium = world.state.pod_keyed("default/medium")
    assert medium.nominated_node_name == "" and not medium.node_name
    assert world.predictions[-1].pod == medium.key and world.predictions[-1].message == NO_NODES


@pytest.mark.parametrize("release", RELEASES)
def test_nominated_node_deleted_no_candidate_left(release):
    """TestNominatedNode, "mid-priority pod preempts low-priority pod at the beginning, but could not
    find candidates after the nominated node is deleted": tried again, medium fits nowhere (the
    tainted node is UnschedulableAndUnresolvable), its deleted nominated node does not hold it back
    from preempting, and with no candidate its nomination is cleared; it stays pending."""
    world = nominated_then_node_deleted(release, tainted_node=True)
    medium = world.state.pod_keyed("default/medium")
    assert medium.nominated_node_name == "" and not medium.node_name
    last = world.predictions[-1]
    assert last.pod == medium.key and last.outcome == "unschedulable" and last.nominated_node == ""
    assert "preemption: 0/1 nodes are available" in last.message
