"""Peer case: kubernetes test/e2e/scheduling/preemption.go, "PodTopologySpread Preemption" /
"validates proper pods are preempted" (the same facts in v1.34.4, v1.35.8 and v1.37.2), through the
model's scheduling loop (reference.scheduler: create_pod, advance) at each of those releases, with
its PodTopologySpread filter (reference.filter.pod_topology_spread). The test names its upstream
case and is the ``test:`` of that case in peers/upstream-cases.yaml (one parameter per release);
the facts (two nodes, each its own domain with 10 units of an extended resource, the pods' requests,
priorities, affinity and constraint, the pods left) are upstream's, written anew.

How the case maps onto the model: upstream's two nodes get a dedicated topology label whose value
is the node's name, and 10 units of a fake extended resource; every pod carries the same label, a
required node affinity for those two nodes, and asks its units (no cpu or memory). The pods are
created one after the other, each running before the next, through the priority classes low (1),
medium (100) and high (1000). Upstream waits until three pods are left; the model lets the victims'
grace period run out (no periodic flush). Where the high pod goes is the scheduler's choice (both
nodes fit it): the test follows both.
"""

from __future__ import annotations

import pytest

from reference import scheduler as sched
from reference.objects import (ClusterState, LabelSelector, Node, Pod, PriorityClass, Requirement,
                               SpreadConstraint)
from reference.world import World

from tests.builders import T0

KEY = "kubernetes.io/e2e-pts-preemption"
RES = "example.com/fakePTSRes"
LABEL = (("e2e-pts-preemption", ""),)
NODES = ("node-1", "node-2")
ON_THE_TWO = ((Requirement(KEY, "In", NODES),),)
SPREAD = (SpreadConstraint(1, KEY, LabelSelector(match_expressions=(Requirement("e2e-pts-preemption", "Exists"),))),)
CLASSES = (PriorityClass("low", 1), PriorityClass("medium", 100), PriorityClass("high", 1000))


def pts_pod(name: str, cls: str, units: int, **kw) -> Pod:
    return Pod(name, "e2e", labels=LABEL, priority_class_name=cls, requests=((RES, units),),
               node_affinity=ON_THE_TWO, **kw)


def world(release: str, high_on: str) -> World:
    nodes = tuple(Node(n, labels=((KEY, n),), allocatable=(("pods", 110), (RES, 10))) for n in NODES)
    w = World(ClusterState(priority_classes=CLASSES, nodes=nodes), T0, "upstream", release=release,
              choices=(("e2e/high", high_on),))
    w = sched.create_pod(w, pts_pod("high", "high", 9))
    for i in (1, 2, 3):
        w = sched.create_pod(w, pts_pod(f"low-{i}", "low", 3))
    return w


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.37"])
def test_validates_proper_pods_are_preempted(release):
    """"validates proper pods are preempted": high (9 units) fills one node, the three low pods (3
    each) the other. medium (3 units, maxSkew 1 over all these pods) fits no node; one low pod gone
    would give it room, but would leave its node two pods above the other: it preempts two low
    pods, so high, medium and one low pod are left, medium beside that low pod. The same whichever
    node the high pod went to."""
    for high_on in NODES:
        w = world(release, high_on)
        lows_on = next(n for n in NODES if n != high_on)
        assert {p.name: p.node_name for p in w.state.pods} == {
            "high": high_on, "low-1": lows_on, "low-2": lows_on, "low-3": lows_on}
        w = sched.create_pod(w, pts_pod("medium", "medium", 3, topology_spread=SPREAD))
        assert len(w.preempted) == 2 and all(k.startswith("e2e/low-") for k in w.preempted)
        w = sched.advance(w, flush=False)
        left = {p.name.split("-")[0]: p.node_name for p in w.state.pods}
        assert len(w.state.pods) == 3 and left == {"high": high_on, "medium": lows_on, "low": lows_on}
