"""Peer cases: kubernetes v1.37.2 test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go
TestPodGroupPreemption, the two "Gang scheduling: preemption with pod topology spread constraints"
rows, through the model's scheduling loop (reference.scheduler.run_queue and advance, which run
reference.cycle.attempt_group) at release "1.37" with GenericWorkload on, and its PodTopologySpread
filter (reference.filter.pod_topology_spread). Each test names its upstream case and is the ``test:``
of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts (nodes, requests, priorities,
the group, the constraint, who is scheduled, preempted and nominated) are the upstream rows',
written anew.

How the rows map onto the model:

* node1 and node2 have 16 cpu, 4 GiB and 32 pods each and their hostname label. Gang
  preemptor-pg (priority 100, minCount 2) has preemptor-1 and preemptor-2: 1 cpu each, label
  app=foo, nodeSelector hostname=node1, and one constraint: maxSkew 2 by hostname over app=foo,
  DoNotSchedule, minDomains 10 (so, with fewer domains, the fewest counts as 0). Every pod has no
  termination grace period.
* Upstream runs TopologyAwareWorkloadScheduling on too; the group has no topology constraint of its
  own, so it adds nothing the model leaves out.
* Upstream counts the calls of its pod-group preemption (one) and checks each preemptor bound and
  given a nominated node before it: here the log's one group preemption, and each preemptor
  nominated to node1 by it.
"""

from __future__ import annotations

import pytest

from reference import scheduler as sched
from reference.objects import LabelSelector, Node, SpreadConstraint
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, cluster, group, names, pod

CPU, GIB = 1000, 2**30
HOST = "kubernetes.io/hostname"
APP_FOO = {"app": "foo"}
SPREAD = (SpreadConstraint(2, HOST, LabelSelector((("app", "foo"),)), min_domains=10),)


def node(name: str) -> Node:
    return Node(name, labels=((HOST, name),), allocatable=(("pods", 32), ("cpu", 16 * CPU), ("memory", 4 * GIB)))


def one_cpu(name: str, prio: int, on: str = "", **kw):
    return pod(name, prio, on=on, labels=APP_FOO, termination_grace_seconds=0, **kw).with_(requests=(("cpu", CPU),))


ROWS = [
    pytest.param([one_cpu("initial-pod", 10, "node1")], id="one-victim"),
    pytest.param([one_cpu("initial-pod", 10, "node1"), one_cpu("initial-pod-2", 5, "node2")], id="single-reprieve"),
]


@pytest.mark.parametrize("initial", ROWS)
def test_gang_preemption_with_topology_spread(initial):
    """TestPodGroupPreemption, "Gang scheduling: preemption with pod topology spread constraints"
    and "..., single reprieve": on node1 initial-pod (priority 10, app=foo) leaves room for one
    preemptor only by the spread (two matching pods at most there, node2 not counted: the pods may
    not go there). The group preempts initial-pod and both preemptors, nominated to node1, bind
    there. initial-pod-2 (priority 5, on node2) stays: node2 is outside the spread."""
    members = [one_cpu(f"preemptor-{i}", 100, group="preemptor-pg", node_selector=((HOST, "node1"),),
                       topology_spread=SPREAD, queued_at=T0) for i in (1, 2)]
    pg = group("preemptor-pg", 100).with_(min_count=2)
    state = cluster([node("node1"), node("node2")], initial + members, groups=[pg])
    world = World(state, T0, "upstream", release="1.37", gates=GENERIC_WORKLOAD)
    world = sched.run_queue(world, {"default/preemptor-1", "default/preemptor-2"})
    assert names(world.preempted) == ["initial-pod"]
    assert {p.name: p.nominated_node_name for p in world.state.pods if p.group} == {
        "preemptor-1": "node1", "preemptor-2": "node1"}
    assert sum("preempts" in line or "preemption" in line for line in world.log if "preemptor-pg" in line) == 1
    world = sched.advance(world, flush=False)
    placed = {p.name: p.node_name for p in world.state.pods}
    assert placed == {"preemptor-1": "node1", "preemptor-2": "node1",
                      **({"initial-pod-2": "node2"} if len(initial) == 2 else {})}
