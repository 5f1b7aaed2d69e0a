"""Peer cases: kubernetes v1.37.2 test/integration/scheduler/preemption/preemption_test.go
TestPreemption, the rows whose victims are pods of composite pod groups (GenericWorkload and
CompositePodGroup on), through the model's scheduling cycle (reference.cycle.attempt, which runs
reference.preemption.predict for the lone preemptor) at release "1.37". Each test names its upstream
case and is the ``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts
(nodes, requests, priorities, groups, disruption modes, expected victims) are the upstream rows',
written anew.

How the rows map onto the model: node1 (and node2 where the row adds it) holds 32 pods, 500
millicores of cpu and 500 bytes of memory (node2 1000 of each where the row says so), labelled
node=<name>; each pod is pinned to its node by that label, as upstream's node selectors pin them.
The running pods are on their nodes from the start (upstream creates them and waits until they
are scheduled). Each composite group has one pod group under it, at the same priority, with the
basic policy. Upstream waits until the preempted pods are gone, or checks that the others are
not; here the preemptor's one cycle chooses its victims, and those alone are marked.
"""

from __future__ import annotations

import pytest

from reference import cycle
from reference.objects import Node, Pod
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import COMPOSITE, cluster, composite, group, names

LOW, MEDIUM, HIGH = 100, 200, 300  # the integration test's priorities


def _node(name: str, size: int = 500) -> Node:
    return Node(name, labels=(("node", name),), allocatable=(("pods", 32), ("cpu", size), ("memory", size)))


def _pod(name: str, prio: int, node: str, cpu: int, memory: int, group_name: str = "", running: bool = True):
    return Pod(name, priority=prio, node_name=node if running else "", group=group_name,
               node_selector=(("node", node),), requests=(("cpu", cpu), ("memory", memory)),
               termination_grace_seconds=0)


ACROSS = dict(
    nodes=[_node("node1"), _node("node2")], cpgs=[("cpg1", LOW, "all")], pgs=[("pg1", LOW, "cpg1")],
    running=[("pod-group-victim-1", LOW, "node1", 500, 200, "pg1"), ("pod-group-victim-2", LOW, "node2", 500, 200, "pg1")],
    preemptor=("node1", 500, 200))
ONE_NODE = dict(
    nodes=[_node("node1")], cpgs=[("cpg-single", LOW, "all")], pgs=[("pg-single", LOW, "cpg-single")],
    running=[("pod-group-victim-1", LOW, "node1", 200, 100, "pg-single"),
             ("pod-group-victim-2", LOW, "node1", 200, 100, "pg-single")],
    preemptor=("node1", 300, 200))
SUBSET = dict(
    nodes=[_node("node1"), _node("node2")], cpgs=[("cpg-low", LOW, "all"), ("cpg-medium", MEDIUM, "all")],
    pgs=[("pg-low", LOW, "cpg-low"), ("pg-medium", MEDIUM, "cpg-medium")],
    running=[("pg-low-node1", LOW, "node1", 200, 100, "pg-low"), ("pg-low-node2", LOW, "node2", 200, 100, "pg-low"),
             ("pg-medium-node1", MEDIUM, "node1", 200, 100, "pg-medium"),
             ("pg-medium-node2", MEDIUM, "node2", 200, 100, "pg-medium")],
    preemptor=("node1", 300, 100))
INSUFFICIENT = dict(
    nodes=[_node("node1"), _node("node2", 1000)], cpgs=[("cpg-victim", LOW, "all")], pgs=[("pg-victim", LOW, "cpg-victim")],
    running=[("unpreemptible-pod", HIGH, "node2", 500, 200, ""), ("pg-victim-1", LOW, "node2", 150, 100, "pg-victim"),
             ("pg-victim-2", LOW, "node2", 150, 100, "pg-victim")],
    preemptor=("node2", 600, 200))
SINGLE = dict(
    nodes=[_node("node1"), _node("node2")], cpgs=[("cpg-single-multi", LOW, "single")],
    pgs=[("pg-single-multi", LOW, "cpg-single-multi")],
    running=[("pg-single-multi-node1", LOW, "node1", 500, 200, "pg-single-multi"),
             ("pg-single-multi-node2", LOW, "node2", 500, 200, "pg-single-multi")],
    preemptor=("node1", 500, 200))

ROWS = [
    # CPG victim across multiple nodes, pod-group-as-victim enabled: cpg1 (all) is one victim, both go
    pytest.param(ACROSS, ["pod-group-victim-1", "pod-group-victim-2"], id="cpg-victim-across-nodes"),
    # CPG occupying a single node, pod-group-as-victim enabled: one of its pods would do, both go
    pytest.param(ONE_NODE, ["pod-group-victim-1", "pod-group-victim-2"], id="cpg-on-one-node"),
    # multiple victim CPGs, only subset selected for preemption: cpg-low's two pods go, cpg-medium stays
    pytest.param(SUBSET, ["pg-low-node1", "pg-low-node2"], id="cpg-subset-chosen"),
    # unsuccessful CPG preemption when freeing lower priority group is insufficient: nobody goes
    pytest.param(INSUFFICIENT, [], id="cpg-not-enough"),
    # CPG victim across multiple nodes, DisruptionModeSingle enabled: only the pod on node1 goes
    pytest.param(SINGLE, ["pg-single-multi-node1"], id="cpg-single-mode"),
]


@pytest.mark.parametrize("row, preempted", ROWS)
def test_preemption_of_composite_pod_groups(row, preempted):
    """TestPreemption, the composite pod group rows: the lone preemptor (high priority, pinned to its
    node) preempts exactly these running pods."""
    pods = [_pod(*spec) for spec in row["running"]]
    node_name, cpu, memory = row["preemptor"]
    preemptor = _pod("preemptor-pod", HIGH, node_name, cpu, memory, running=False)
    state = cluster(row["nodes"], [*pods, preemptor], groups=[group(n, p, parent=c) for n, p, c in row["pgs"]],
                    composites=[composite(n, p, mode) for n, p, mode in row["cpgs"]])
    world = cycle.attempt(World(state, T0, "upstream", release="1.37", gates=COMPOSITE), preemptor.key)
    assert names(world.preempted) == sorted(preempted)
    assert world.state.pod_keyed(preemptor.key).nominated_node_name == (node_name if preempted else "")
