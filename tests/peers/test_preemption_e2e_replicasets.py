"""Peer cases: kubernetes test/e2e/scheduling/preemption.go, PreemptionExecutionPath "runs
ReplicaSets to verify preemption running path" (a conformance test) at v1.34.4, v1.35.8 and v1.37.2,
through the model's scheduling over time (reference.scheduler: run_queue, advance). Each test names
its upstream case and is the ``test:`` of that case per release in peers/upstream-cases.yaml; the
facts (the node's extended resource, the classes, the ReplicaSets' requests, the pods each
ReplicaSet ends up creating) are the upstream case's, written anew.

Upstream runs three ReplicaSets of one replica each on a node with 1000 units of a fake extended
resource, then a preemptor pod, and counts the pods each ReplicaSet creates: a ReplicaSet whose pod
is preempted creates a replacement (the ReplicaSet controller counts a pod being deleted as gone),
so the counts say how many times each was preempted. The model has no controllers: the test plays
the ReplicaSet controller (``reconcile``), creating a replacement for every ReplicaSet with fewer
live pods than replicas after each step, until nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from reference import scheduler as sched
from reference.objects import ClusterState, Node, Pod, PriorityClass
from reference.world import World

from tests.builders import T0

FAKE = "example.com/fakecpu"


@dataclass(frozen=True)
class ReplicaSet:
    name: str
    priority_class: str
    request: int


def reconcile(world: World, sets: list[ReplicaSet], created: dict[str, int]) -> World:
    """The ReplicaSet controller: each ReplicaSet with no live pod (none, or only one being
    deleted) gets a new one, named after it with a serial suffix, of its class and request."""
    for rs in sets:
        live = [p for p in world.state.pods if p.labels == (("name", rs.name),) and not p.terminating]
        if not live:
            created[rs.name] += 1
            new = Pod(f"rs-{rs.name}-{created[rs.name]}", labels=(("name", rs.name),),
                      priority_class_name=rs.priority_class, requests=((FAKE, rs.request),),
                      node_selector=(("kubernetes.io/hostname", "node1"),))
            world = sched.create_pod(world, new)
    return world


def settle(world: World, sets: list[ReplicaSet], created: dict[str, int]) -> World:
    """Controllers and scheduler until nothing moves: replacements made, terminating pods gone."""
    for _ in range(20):
        before = (created.copy(), world.state.pods)
        world = sched.advance(reconcile(world, sets, created), flush=False)
        if (created, world.state.pods) == before:
            return world
    raise AssertionError("the ReplicaSets never settled")


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.37"])
def test_replicasets_preemption_running_path(release):
    """Classes p1 to p4 of values 1 to 4; ReplicaSets pod1 (p1, 200 units), pod2 (p2, 300) and pod3
    (p3, 450) fill 950 of the node's 1000; the preemptor pod4 (p4, 500) preempts pod1's and pod2's
    pods only (pod3's is given back: 450 + 500 fit). Their replacements find no room and nothing
    below them to preempt, so each of pod1 and pod2 created two pods, pod3 one, and pod4 runs."""
    classes = tuple(PriorityClass(f"p{i}", i) for i in range(1, 5))
    node = Node("node1", allocatable=(("pods", 110), (FAKE, 1000)))
    world = sched.start(ClusterState(priority_classes=classes, nodes=(node,)), "upstream", T0, release)
    sets = [ReplicaSet("pod1", "p1", 200), ReplicaSet("pod2", "p2", 300), ReplicaSet("pod3", "p3", 450)]
    created = {rs.name: 0 for rs in sets}
    world = settle(world, sets, created)
    assert created == {"pod1": 1, "pod2": 1, "pod3": 1}
    assert all(p.node_name == "node1" for p in world.state.pods)
    preemptor = Pod("pod4", labels=(("name", "pod4"),), priority_class_name="p4", requests=((FAKE, 500),),
                    node_selector=(("kubernetes.io/hostname", "node1"),))
    world = settle(sched.create_pod(world, preemptor), sets, created)
    assert created == {"pod1": 2, "pod2": 2, "pod3": 1}
    assert sorted(k.split("/")[1] for k in world.preempted) == ["rs-pod1-1", "rs-pod2-1"]
    assert world.state.pod_keyed("default/pod4").node_name == "node1"
    assert not world.state.pod_keyed("default/rs-pod1-2").node_name
    assert not world.state.pod_keyed("default/rs-pod2-2").node_name
