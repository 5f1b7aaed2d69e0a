"""Peer cases: kubernetes v1.37.2 test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go
TestPodGroupPreemption, the two "Binding first before preemption" rows (a gang, and the basic
policy), through the model's scheduling loop (reference.scheduler.run_queue and advance, which run
reference.cycle.attempt_group) at release "1.37". Each test names its upstream case and is the
``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts (node, requests,
priorities, the groups' policies, the expected bindings, victim and order) are the upstream rows',
written anew.

How the rows map onto the model:

* node1 has 4 cpu; every pod asks 1 cpu and has no termination grace period. Pod group pg1
  (priority 100; a gang of minCount 2, or the basic policy) already runs pg-pod-1 and pg-pod-2,
  and low-1 (priority 10, in no group) runs beside them: one cpu is free.
* Upstream deletes pg1 while it creates high-1 and high-2 (priority 100, of pg1), so both wait
  for their group, then creates pg1 again: both come to one pod-group cycle. Here both are pending
  and the queue is run with both at once.
* Upstream records the order of its bind plugin's and its pod-group PostFilter plugin's calls.
  Here the model's log gives it: each pod a group cycle binds is a Bind, and each group cycle that
  goes on to preemption (a failed placement) is a PodGroupPostFilter.
* Upstream waits at most 10 s for each outcome: here no periodic flush is let run, and every step
  happens at the start time.
"""

from __future__ import annotations

import re

import pytest

from reference import scheduler as sched
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, cluster, group, names, node, pod

CPU = 1000  # one cpu, in millicores
BIND = re.compile(r"pod group (\S+): \d+ pod\(s\) placed: (.*)$")
POST_FILTER = re.compile(r"pod group (\S+) (preempts|does not fit)")


def order(world: World) -> list[str]:
    """The Bind and PodGroupPostFilter calls, in the order the model's log has them."""
    out = []
    for line in world.log:
        if m := BIND.search(line):
            out += [f"Bind:{placed.split(' on ')[0].split('/', 1)[1]}" for placed in m.group(2).split(", ")]
        elif m := POST_FILTER.search(line):
            out.append(f"PodGroupPostFilter:{m.group(1).split('/', 1)[1]}")
    return out


@pytest.mark.parametrize("min_count", [2, 0], ids=["gang-policy", "basic-policy"])
def test_binding_first_before_preemption(min_count):
    """TestPodGroupPreemption, "Binding first before preemption for gang policy" and "... for basic
    policy": the cycle that takes high-1 and high-2 binds high-1 in the free cpu rather than preempt
    for both; high-2 comes straight back (scheduling_queue.go AddAttemptedPodGroupIfNeeded) and its
    next cycle preempts low-1, the one victim; then high-2 binds. Every pod ends scheduled."""
    pg1 = group("pg1", 100).with_(min_count=min_count)
    member = dict(group="pg1", size=CPU, termination_grace_seconds=0)
    pods = [pod("pg-pod-1", 100, on="node1", **member), pod("pg-pod-2", 100, on="node1", **member),
            pod("low-1", 10, on="node1", size=CPU, termination_grace_seconds=0),
            pod("high-1", 100, queued_at=T0, **member), pod("high-2", 100, queued_at=T0, **member)]
    state = cluster([node("node1", cpu=4 * CPU, memory=4 * 2**30)], pods, groups=[pg1])
    world = World(state, T0, "upstream", release="1.37", gates=GENERIC_WORKLOAD)
    world = sched.advance(sched.run_queue(world, {"default/high-1", "default/high-2"}), flush=False)
    assert order(world) == ["Bind:high-1", "PodGroupPostFilter:pg1", "Bind:high-2"]
    assert {p.name: p.node_name for p in world.state.pods} == {
        "pg-pod-1": "node1", "pg-pod-2": "node1", "high-1": "node1", "high-2": "node1"}
    assert names(world.preempted) == ["low-1"] and world.now == T0
