"""Peer cases: kubernetes v1.37.2 test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go
TestCompositePodGroupPreemption, through the model's scheduling loop (reference.scheduler.run_queue
and advance, which run reference.cycle.attempt for a lone pod and reference.cycle.attempt_group for
a pod group or a composite pod group's hierarchy) at release "1.37", with GenericWorkload and
CompositePodGroup on (and PodGroupPreemptionPolicy where the row turns it on). Each test names its
upstream case and is the ``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the
facts (nodes, requests, priorities, groups, their policies and modes, the budget, the expected
scheduled, preempted and unschedulable pods) are the upstream rows', written anew.

How the rows map onto the model:

* Every node has 32 pod slots and 4 GiB of memory; its cpu is the row's. Every pod has no
  termination grace period.
* The initial pods run from the start, on the row's node, or on node1 where the row lets the
  scheduler place them (its only node). A pod group of the row with no preemption policy has the
  default the API server gives it (PreemptLowerPriority); a composite group with none has none.
* The preemptor pods are pending together and the queue is run with all of them at once (upstream
  makes sure of that by deleting and re-creating the groups, or needs it not: a gang's cycle waits
  for all its pods). No periodic flush is let run, and upstream's waits of up to 10 s become the
  model's settled outcome.
* "CPG Partial Preemption" registers a score plugin preferring node1: on the model's equal nodes
  the first node by name wins a tie, which is node1.
* Upstream's "NNN info" (the nominated node a pod had when bound) is the model's preemption
  prediction for that pod, with its node.
* "CPG Missing Parent Reference Fallback" deletes the victims' composite group once they run:
  here it does not exist.
"""

from __future__ import annotations

import pytest

from reference import scheduler as sched
from reference.objects import (PREEMPT_LOWER, PREEMPT_NEVER, LabelSelector, Node, Pod, PodAffinityTerm,
                               PodDisruptionBudget, Requirement)
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import COMPOSITE, composite, group, names, cluster

CPU = 1000  # one cpu, in millicores
GIB = 2**30
POLICY_GATE = (("kube-scheduler", "PodGroupPreemptionPolicy", True),)
HOSTNAME = "kubernetes.io/hostname"


def _node(name: str, cpu: int) -> Node:
    return Node(name, allocatable=(("pods", 32), ("cpu", cpu * CPU), ("memory", 4 * GIB)))


def _pod(name: str, prio: int, cpu: float, pg: str = "", on: str = "", **kw) -> Pod:
    return Pod(name, priority=prio, requests=(("cpu", int(cpu * CPU)),), group=pg, node_name=on,
               termination_grace_seconds=0, queued_at=None if on else T0, **kw)


def pg(name: str, prio: int, min_count: int = 0, parent: str = "", mode: str = "single", policy: str = PREEMPT_LOWER):
    return group(name, prio, mode, parent=parent).with_(min_count=min_count, preemption_policy=policy)


def cpg(name: str, prio: int, mode: str = "single", parent: str = "", policy: str | None = None, min_groups: int = 0):
    return composite(name, prio, mode, parent=parent, preemption_policy=policy, min_groups=min_groups)


def run(nodes, groups, composites, initial, preemptors, policy_gate=False, pdbs=()) -> World:
    state = cluster(nodes, [*initial, *preemptors], pdbs, groups=groups, composites=composites)
    world = World(state, T0, "upstream", release="1.37", gates=COMPOSITE + (POLICY_GATE if policy_gate else ()))
    return sched.advance(sched.run_queue(world, {p.key for p in preemptors}), flush=False)


def check(world: World, scheduled=(), preempted=(), unschedulable=(), nominated=()) -> None:
    on = {p.name: p.node_name for p in world.state.pods}
    assert [n for n in scheduled if not on.get(n)] == [], "scheduled"
    assert names(world.preempted) == sorted(preempted)
    assert [n for n in preempted if n in on] == [], "preempted pods are gone"
    assert [n for n in unschedulable if n not in on or on[n]] == [], "unschedulable pods stay pending"
    for n in nominated:
        assert any(pr.pod == f"default/{n}" and pr.outcome == "preempt" and pr.nodes for pr in world.predictions), n


# -- the rows ----------------------------------------------------------------------------------------------

TWO = [_node("node1", 2), _node("node2", 2)]
PINNED = (("node_selector", ((HOSTNAME, "node1"),)),)  # upstream pins by the hostname label, which every model node has


def test_partial_preemption():
    """"CPG Partial Preemption": cpg1 (100) over pg1 (gang of 3), three 1-cpu pods; low-1 (2 cpu) on
    node1, low-2 (1 cpu) on node2. The placement with every lower pod gone puts two on node1 and one
    on node2, where low-2 fits back: only low-1 is preempted, and all three then run."""
    world = run(TWO, [pg("pg1", 100, 3, "cpg1")], [cpg("cpg1", 100)],
                [_pod("low-1", 10, 2, on="node1"), _pod("low-2", 10, 1, on="node2")],
                [_pod(f"high-{i}", 100, 1, "pg1") for i in (1, 2, 3)], policy_gate=True)
    check(world, scheduled=["high-1", "high-2", "high-3", "low-2"], preempted=["low-1"])


SPREAD_INITIAL = [_pod("low-1", 10, 1, "pg1", "node1"), _pod("low-2", 10, 1, "pg1", "node2"),
                  _pod("low-3", 10, 1, "pg2", "node2")]


@pytest.mark.parametrize("mode, preempted, kept", [
    ("all", ["low-1", "low-2", "low-3"], []),
    ("single", ["low-1"], ["low-2", "low-3"]),
], ids=["cpg-all", "cpg-single"])
def test_victim_across_nodes(mode, preempted, kept):
    """"CPG Victim Across Multiple Nodes, CPG DisruptionModeAll" and "... Single": cpg1 (10) over pg1
    (gang of 2: low-1 on node1, low-2 on node2) and pg2 (low-3 on node2); a lone pod (100, 2 cpu)
    pinned to node1. With cpg1 disrupted as a whole all three go; else low-1 alone."""
    world = run(TWO, [pg("pg1", 10, 2, "cpg1", mode), pg("pg2", 10, 1, "cpg1", mode)], [cpg("cpg1", 10, mode)],
                SPREAD_INITIAL, [_pod("high-1", 100, 2, **dict(PINNED))])
    check(world, scheduled=["high-1", *kept], preempted=preempted)


def test_aborted_when_victim_yields_too_little():
    """"CPG Preemption aborted if victim yields insufficient resources": a lone pod asking 3 cpu of a
    2-cpu node where low-pod (of cpg-victim's pod group) runs: nobody is preempted, it stays pending."""
    world = run([_node("node1", 2)], [pg("pg-victim", 10, 1, "cpg-victim")], [cpg("cpg-victim", 10)],
                [_pod("low-pod", 10, 1, "pg-victim", "node1")], [_pod("high-preemptor", 100, 3)])
    check(world, scheduled=["low-pod"], unschedulable=["high-preemptor"])


def test_tie_breaking_pod_group_before_composite():
    """"CPG Tie-Breaking: PodGroup chosen over CompositePodGroup": low-pg (of a standalone pod group)
    and low-cpg (of a pod group under cpg-victim, disrupted as a whole) at 10 fill the 2-cpu node; pod
    group pg-preemptor (100) needs 1 cpu. The composite group's victim ranks higher and is spared:
    low-pg goes."""
    groups = [pg("pg-victim-standalone", 10, 1), pg("pg-victim-child", 10, 1, "cpg-victim"), pg("pg-preemptor", 100, 1)]
    world = run([_node("node1", 2)], groups, [cpg("cpg-victim", 10, "all")],
                [_pod("low-pg", 10, 1, "pg-victim-standalone", "node1"), _pod("low-cpg", 10, 1, "pg-victim-child", "node1")],
                [_pod("high-preemptor", 100, 1, "pg-preemptor")])
    check(world, scheduled=["high-preemptor", "low-cpg"], preempted=["low-pg"])


def test_lower_priority_composite_targeted():
    """"Scheduler targets lower-priority CPG over higher-priority CPG": lower-pod (cpg-lower, 10) and
    higher-pod (cpg-higher, 20) on a 3-cpu node; a lone pod (100, 2 cpu) preempts lower-pod only."""
    world = run([_node("node1", 3)], [pg("pg-lower", 10, 1, "cpg-lower"), pg("pg-higher", 20, 1, "cpg-higher")],
                [cpg("cpg-lower", 10), cpg("cpg-higher", 20)],
                [_pod("lower-pod", 10, 1, "pg-lower", "node1"), _pod("higher-pod", 20, 1, "pg-higher", "node1")],
                [_pod("high-preemptor", 100, 2)])
    check(world, scheduled=["high-preemptor", "higher-pod"], preempted=["lower-pod"])


FOO = (("app", "foo"),)


@pytest.mark.parametrize("whole", [True, False], ids=["cpg-all", "cpg-single"])
def test_pdb_violation_reprieves(whole):
    """"PDB Violation reprieves the entire CPG victim (DisruptionModeAll)" and "... only the child PG
    (DisruptionModeSingle)": pod-pdb-1 and pod-pdb-2 (app=foo, a budget of minAvailable 2 over them)
    and pod-no-pdb-1 fill a 3-cpu node at 10; a lone pod (100, 1 cpu) preempts pod-no-pdb-1 only."""
    if whole:
        groups = [pg("pg-pdb", 10, 2, "cpg-pdb"), pg("pg-no-pdb", 10, 1, "cpg-no-pdb")]
        composites = [cpg("cpg-pdb", 10, "all"), cpg("cpg-no-pdb", 10, "all")]
    else:
        groups = [pg("pg-pdb", 10, 2, "cpg-single"), pg("pg-no-pdb", 10, 1, "cpg-single")]
        composites = [cpg("cpg-single", 10, "single")]
    budget = PodDisruptionBudget("pdb", "default", LabelSelector(FOO), 0, min_available=2)
    world = run([_node("node1", 3)], groups, composites,
                [_pod("pod-pdb-1", 10, 1, "pg-pdb", "node1", labels=FOO),
                 _pod("pod-pdb-2", 10, 1, "pg-pdb", "node1", labels=FOO),
                 _pod("pod-no-pdb-1", 10, 1, "pg-no-pdb", "node1")],
                [_pod("high-preemptor", 100, 1)], pdbs=[budget])
    check(world, scheduled=["high-preemptor", "pod-pdb-1", "pod-pdb-2"], preempted=["pod-no-pdb-1"])


@pytest.mark.parametrize("grandparent, parent, pg2_parent, preempted, kept", [
    ("all", "single", "cpg-parent", ["low-1", "low-2", "low-3"], []),
    ("single", "all", "cpg-grandparent", ["low-1", "low-2"], ["low-3"]),
], ids=["grandparent-all", "grandparent-single-parent-all"])
def test_nested_disruption_modes(grandparent, parent, pg2_parent, preempted, kept):
    """"3-Level Nested CPG resolves DisruptionMode up to the grandparent" and "Hierarchical
    DisruptionMode - Grandparent Single, Parent All": pg1 (low-1 on node1, low-2 on node2) under
    cpg-parent under cpg-grandparent, pg2 (low-3 on node2) under the row's one of them, all single;
    a lone pod (100, 2 cpu) pinned to node1 preempts the highest group disrupted as a whole over
    low-1: all three pods, or pg1's two."""
    world = run(TWO, [pg("pg1", 10, 2, "cpg-parent"), pg("pg2", 10, 1, pg2_parent)],
                [cpg("cpg-grandparent", 10, grandparent), cpg("cpg-parent", 10, parent, parent="cpg-grandparent")],
                SPREAD_INITIAL, [_pod("high-1", 100, 2, **dict(PINNED))])
    check(world, scheduled=["high-1", *kept], preempted=preempted)


LOWS = [_pod(f"low-{i}", 10, 1, on="node1") for i in (1, 2, 3)]


def test_default_policy_preempts_with_policy_gate():
    """"CPG with default preemption policy performs preemption, with PodGroupPreemptionPolicy enabled":
    cpg1 (100, no policy) over pg1 (gang of 3), three 1-cpu pods; three low pods fill the 3-cpu
    node. All three are preempted, and the group runs."""
    world = run([_node("node1", 3)], [pg("pg1", 100, 3, "cpg1")], [cpg("cpg1", 100)], LOWS,
                [_pod(f"high-{i}", 100, 1, "pg1") for i in (1, 2, 3)], policy_gate=True)
    check(world, scheduled=["high-1", "high-2", "high-3"], preempted=["low-1", "low-2", "low-3"])


def _two_groups(policy: str):
    """cpg1 (100, ``policy``) over pg1 (gang of 2) and pg2 (gang of 1), all with ``policy``, and their
    three 1-cpu pods with it too."""
    groups = [pg("pg1", 100, 2, "cpg1", policy=policy), pg("pg2", 100, 1, "cpg1", policy=policy)]
    pods = [_pod("high-1", 100, 1, "pg1", preemption_policy=policy), _pod("high-2", 100, 1, "pg1", preemption_policy=policy),
            _pod("high-3", 100, 1, "pg2", preemption_policy=policy)]
    return groups, [cpg("cpg1", 100, policy=policy)], pods


def test_never_policy():
    """"CPG with PreemptNever Policy" (PodGroupPreemptionPolicy on): the hierarchy may not preempt,
    the low pods stay and the three stay pending."""
    groups, composites, pods = _two_groups(PREEMPT_NEVER)
    world = run([_node("node1", 3)], groups, composites, LOWS, pods, policy_gate=True)
    check(world, scheduled=["low-1", "low-2", "low-3"], unschedulable=["high-1", "high-2", "high-3"])


def test_lower_priority_policy():
    """"CPG with PreemptLowerPriority Policy" (PodGroupPreemptionPolicy on): the three low pods are
    preempted, each of the three was nominated, and all three then run."""
    groups, composites, pods = _two_groups(PREEMPT_LOWER)
    world = run([_node("node1", 3)], groups, composites, LOWS, pods, policy_gate=True)
    check(world, scheduled=["high-1", "high-2", "high-3"], preempted=["low-1", "low-2", "low-3"],
          nominated=["high-1", "high-2", "high-3"])


@pytest.mark.parametrize("policy, preempted", [(PREEMPT_NEVER, []), (PREEMPT_LOWER, ["low-1", "low-2", "low-3"])],
                         ids=["never", "lower"])
def test_composite_policy_decides(policy, preempted):
    """"CPG PreemptionPolicy PreemptNever prevents preemption" and "... PreemptLowerPriority allows
    preemption" (PodGroupPreemptionPolicy on): one pod group (gang of 2) under the composite group,
    both and their pods with the row's policy; high-1 asks 2 cpu and high-2 1 of a 3-cpu node the low
    pods fill."""
    name = "preempt-never" if policy == PREEMPT_NEVER else "preempt-lower"
    pods = [_pod("high-1", 100, 2, f"pg-{name}", preemption_policy=policy),
            _pod("high-2", 100, 1, f"pg-{name}", preemption_policy=policy)]
    world = run([_node("node1", 3)], [pg(f"pg-{name}", 100, 2, f"cpg-{name}", policy=policy)],
                [cpg(f"cpg-{name}", 100, policy=policy)], LOWS, pods, policy_gate=True)
    if preempted:
        check(world, scheduled=["high-1", "high-2"], preempted=preempted, nominated=["high-1", "high-2"])
    else:
        check(world, scheduled=["low-1", "low-2", "low-3"], unschedulable=["high-1", "high-2"])


def test_never_pods_without_policy_gate():
    """"CPG with PreemptNever preemption policy in all pods does not perform preemption, with
    PodGroupPreemptionPolicy disabled": cpg1 (100, no policy) over pg1 (gang of 3), its three pods
    Never: the pods decide, and nobody is preempted."""
    world = run([_node("node1", 3)], [pg("pg1", 100, 3, "cpg1")], [cpg("cpg1", 100)], LOWS,
                [_pod(f"high-{i}", 100, 1, "pg1", preemption_policy=PREEMPT_NEVER) for i in (1, 2, 3)])
    check(world, scheduled=["low-1", "low-2", "low-3"], unschedulable=["high-1", "high-2", "high-3"])


def test_gang_with_anti_affinity():
    """"CPG Gang scheduling: preemption with pod anti-affinity constraints": preemptor-pg (gang of 2)
    under preemptor-cpg (100); its two pods ask 1.5 cpu each and keep off any node with a pod labelled
    app; initial-pod (app=initial, 0.25 cpu, 10) runs on node1. Only node2 takes one: initial-pod is
    preempted, and both run."""
    away = PodAffinityTerm(LabelSelector(match_expressions=(Requirement("app", "Exists"),)), HOSTNAME)
    pods = [_pod(f"preemptor-{i}", 100, 1.5, "preemptor-pg", pod_anti_affinity=(away,)) for i in (1, 2)]
    world = run(TWO, [pg("preemptor-pg", 100, 2, "preemptor-cpg")], [cpg("preemptor-cpg", 100)],
                [_pod("initial-pod", 10, 0.25, on="node1", labels=(("app", "initial"),))], pods, policy_gate=True)
    check(world, scheduled=["preemptor-1", "preemptor-2"], preempted=["initial-pod"])


@pytest.mark.parametrize("min_groups", [1, 0], ids=["gang-cpg", "basic-cpg"])
def test_binding_first_before_preemption(min_groups):
    """"Binding first before preemption for gang policy" (the composite groups gangs of one group) and
    "... for CPG" (basic): pg-victim (10, gang of 4) runs low-1 on node1 and low-2 on node2, under
    cpg-victim; pg-preemptor (100, gang of 4) under cpg-preemptor has four 1-cpu pods; two nodes of 2
    cpu. Two fit, the gang needs four: both low pods are preempted, and all four run."""
    groups = [pg("pg-victim", 10, 4, "cpg-victim"), pg("pg-preemptor", 100, 4, "cpg-preemptor")]
    composites = [cpg("cpg-victim", 10, min_groups=min_groups), cpg("cpg-preemptor", 100, min_groups=min_groups)]
    world = run(TWO, groups, composites,
                [_pod("low-1", 10, 1, "pg-victim", "node1"), _pod("low-2", 10, 1, "pg-victim", "node2")],
                [_pod(f"high-{i}", 100, 1, "pg-preemptor") for i in (1, 2, 3, 4)])
    check(world, scheduled=["high-1", "high-2", "high-3", "high-4"], preempted=["low-1", "low-2"])


def test_missing_parent_reference_fallback():
    """"CPG Missing Parent Reference Fallback": pg-victim (10, gang of 2; low-1 and low-2 fill the
    2-cpu node) names cpg-victim, which is gone; pg-preemptor (100, gang of 2) under cpg-preemptor.
    The victims count at pg-victim's priority, each its own victim: both are preempted, and both
    preemptor pods run."""
    world = run([_node("node1", 2)], [pg("pg-victim", 10, 2, "cpg-victim"), pg("pg-preemptor", 100, 2, "cpg-preemptor")],
                [cpg("cpg-preemptor", 100)],
                [_pod("low-1", 10, 1, "pg-victim", "node1"), _pod("low-2", 10, 1, "pg-victim", "node1")],
                [_pod("high-1", 100, 1, "pg-preemptor"), _pod("high-2", 100, 1, "pg-preemptor")])
    check(world, scheduled=["high-1", "high-2"], preempted=["low-1", "low-2"])
