"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/preemption/types_test.go, through the model's
victims (reference.victim: victim_units, units_by_node, Unit) at release "1.37". Each test names its
upstream function and case, and is the ``test:`` of that case (release 1.37.2) in
peers/upstream-cases.yaml; the facts (nodes, pods, pod groups, disruption modes, priorities, start
times, expected victims and their nodes) are the upstream rows', written anew.

How upstream's victims map onto the model's: a victim is a ``Unit`` (its pods, its priority, whether
it is a pod group's, its earliest start), and a victim's affected nodes are the nodes
``units_by_node`` lists it under. Upstream's domain holds every pod in the cluster as a possible
victim; the model gathers only those below a preemptor's priority, so each row asks for the victims
of a preemptor above every priority in it (``ABOVE_ALL``). The rows that hand a constructor invalid
arguments are not expressible (their entries say why). A row with composite pod groups on runs the
model with the CompositePodGroup gate (``COMPOSITE``); with it off, the model is given the row's
composite groups all the same, and must not read them, as the scheduler lists none.

TestNewPodGroupPreemptorResolvesPreemptionPolicy's pod-group rows go through the model's
``podgroup.preemption_policy``. A pod with no policy is PreemptLowerPriority in the model, as
admission makes every pod of a cluster; only Never counts in the resolution, so it is the same.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from dataclasses import replace

from reference.objects import PREEMPT_LOWER, PREEMPT_NEVER
from reference.podgroup import preemption_policy
from reference.victim import COMPOSITE as CPG_KEY, GROUP as PG_KEY, highest_all, units_by_node, victim_units

from tests.builders import T0
from tests.peers.upstream_tables import COMPOSITE, GENERIC_WORKLOAD, cluster, composite, group, node, pod

RELEASE = "1.37"
ABOVE_ALL = 1000  # the preemptor's priority: above every victim in these rows
ALL, SINGLE = "all", "single"


def domain(state, gates=()) -> set[tuple[frozenset[str], frozenset[str], int]]:
    """Every possible victim as (its pods' names, its affected nodes, its priority)."""
    nodes_of: dict = {}
    for name, units in units_by_node(state, ABOVE_ALL, RELEASE, T0, gates).items():
        for u in units:
            nodes_of.setdefault(u, set()).add(name)
    assert set(nodes_of) == set(victim_units(state, ABOVE_ALL, RELEASE, T0, gates))
    return {(frozenset(k.split("/", 1)[1] for k in u.keys), frozenset(n), u.priority) for u, n in nodes_of.items()}


def victim(pods: str, nodes: str, priority: int) -> tuple[frozenset[str], frozenset[str], int]:
    return frozenset(pods.split()), frozenset(nodes.split()), priority


# -- TestNewDomainForWorkloadPreemption -------------------------------------------------------------------

TWO_NODES = [node("node1"), node("node2")]
DOMAIN = [
    # no pods
    pytest.param([node("node1")], [], [], set(), id="no-pods"),
    # pods without pod groups: each pod its own victim at its own priority
    pytest.param(TWO_NODES, [pod("p1", 10, on="node1"), pod("p2", 20, on="node2")], [],
                 {victim("p1", "node1", 10), victim("p2", "node2", 20)}, id="pods-without-pod-groups"),
    # pods with pod group (DisruptionModeAll): one victim over both nodes, at the group's priority
    pytest.param(TWO_NODES, [pod("p1", 10, on="node1", group="pg1"), pod("p2", 10, on="node2", group="pg1")],
                 [group("pg1", 50, ALL)], {victim("p1 p2", "node1 node2", 50)}, id="pod-group-mode-all"),
    # pods with pod group (DisruptionModeSingle): each pod its own victim, at the group's priority
    pytest.param(TWO_NODES, [pod("p1", 10, on="node1", group="pg1"), pod("p2", 20, on="node2", group="pg1")],
                 [group("pg1", 50, SINGLE)], {victim("p1", "node1", 50), victim("p2", "node2", 50)},
                 id="pod-group-mode-single"),
    # mix of pod groups and individual pods
    pytest.param(TWO_NODES,
                 [pod("p1", 10, on="node1", group="pg1"), pod("p2", 10, on="node2", group="pg1"),
                  pod("p3", 20, on="node1", group="pg2"), pod("p4", 30, on="node2")],
                 [group("pg1", 50, ALL), group("pg2", 60, SINGLE)],
                 {victim("p1 p2", "node1 node2", 50), victim("p3", "node1", 60), victim("p4", "node2", 30)},
                 id="mix-groups-and-pods"),
    # pods with pod group (DisruptionModeAll) but missing pod group state in cache falls back to local
    # pod preemption: the row gives no PodGroup at all, so each pod is its own victim at its own priority
    pytest.param(TWO_NODES, [pod("p1", 10, on="node1", group="pg1"), pod("p2", 10, on="node2", group="pg1")],
                 [], {victim("p1", "node1", 10), victim("p2", "node2", 10)}, id="missing-pod-group-state"),
]


@pytest.mark.parametrize("nodes, pods, groups, want", DOMAIN)
def test_new_domain_for_workload_preemption(nodes, pods, groups, want):
    """TestNewDomainForWorkloadPreemption (GenericWorkload on, composite pod groups off): the domain's
    possible victims, each with its pods, affected nodes and priority."""
    assert domain(cluster(nodes, pods, groups=groups)) == want


# -- TestGetHighestAllAncestor ----------------------------------------------------------------------------

# The model answers "which group disrupted as a whole does this pod go with" only through the victim
# it builds, so each row's pod p1 runs on node1 with a sibling p2 naming the same group on node2 (none
# for the pod without a group): upstream's answer reads only the pod and the listers, never other pods.
HIGHEST_ALL = [
    # pod without group
    pytest.param("", [], False, id="pod-without-group"),
    # pod group missing from the lister
    pytest.param("pg1", [], False, id="pod-group-missing-from-lister"),
    # pod group disruption mode single
    pytest.param("pg1", [group("pg1", 0, SINGLE)], False, id="pod-group-mode-single"),
    # pod group disruption mode All: the key is pod group default/pg1
    pytest.param("pg1", [group("pg1", 0, ALL)], True, id="pod-group-mode-all"),
    # pod group missing from cache lister (with composite pod groups off, the same lister as above)
    pytest.param("pg1", [], False, id="pod-group-missing-from-cache-lister"),
]


@pytest.mark.parametrize("group_name, groups, has_all", HIGHEST_ALL)
def test_get_highest_all_ancestor(group_name, groups, has_all):
    """TestGetHighestAllAncestor, the rows without composite pod groups: p1 goes with a group
    disrupted as a whole (the victim holding it is that group's, holding every running pod of it)
    exactly when upstream finds such an ancestor."""
    pods = [pod("p1", on="node1", group=group_name), pod("p2", on="node2", group=group_name)]
    state = cluster(TWO_NODES, pods, groups=groups)
    unit = next(u for u in victim_units(state, ABOVE_ALL, RELEASE, T0) if "default/p1" in u.keys)
    assert unit.keys == (("default/p1", "default/p2") if has_all else ("default/p1",))


# The rows with composite pod groups (the lister holds every CompositePodGroup the row gives): p1
# names pg1; the highest group of its lineage disrupted as a whole, or None.
HIGHEST_ALL_COMPOSITE = [
    # pg1 (single) -> cpg1 (all): cpg1
    pytest.param([group("pg1", 0, SINGLE, parent="cpg1")], [composite("cpg1", disruption=ALL)], (CPG_KEY, "cpg1"),
                 id="parent-cpg-all"),
    # pg1 (single) -> cpg1 (single) -> cpg2 (all): cpg2
    pytest.param([group("pg1", 0, SINGLE, parent="cpg1")],
                 [composite("cpg1", disruption=SINGLE, parent="cpg2"), composite("cpg2", disruption=ALL)],
                 (CPG_KEY, "cpg2"), id="grandparent-cpg-all"),
    # pg1 (all) -> cpg1 (all): the higher, cpg1
    pytest.param([group("pg1", 0, ALL, parent="cpg1")], [composite("cpg1", disruption=ALL)], (CPG_KEY, "cpg1"),
                 id="highest-all-wins"),
    # pg1 (all) names cpg1, which the lister lacks: pg1
    pytest.param([group("pg1", 0, ALL, parent="cpg1")], [], (PG_KEY, "pg1"), id="parent-cpg-missing"),
]


@pytest.mark.parametrize("groups, composites, want", HIGHEST_ALL_COMPOSITE)
def test_get_highest_all_ancestor_composite(groups, composites, want):
    """TestGetHighestAllAncestor, the rows with composite pod groups (their gate on)."""
    p1 = pod("p1", on="node1", group="pg1")
    top = highest_all(cluster(TWO_NODES, [p1], groups=groups, composites=composites), p1, composite=True)
    assert (top[0], top[1].name) == want


# -- TestNewDomainForWorkloadPreemption, the rows with composite pod groups ---------------------------------

def pods_of(*groups: str) -> list:
    """Two pods of each pod group, p1_<group> on node1 and p2_<group> on node2, at priority 10."""
    return [pod(f"p{i}_{g}", 10, on=f"node{i}", group=g) for g in groups for i in (1, 2)]


def spread(g: str) -> tuple[frozenset[str], frozenset[str], int]:
    """The victim of all of pod group ``g``'s pods, on both nodes."""
    return victim(f"p1_{g} p2_{g}", "node1 node2", 10)


def each(*groups: str) -> set:
    """Each pod of these pod groups a victim of its own."""
    return {victim(f"p{i}_{g}", f"node{i}", 10) for g in groups for i in (1, 2)}


def whole(*groups: str) -> tuple[frozenset[str], frozenset[str], int]:
    """One victim of every pod of these pod groups, on both nodes."""
    return victim(" ".join(f"p{i}_{g}" for g in groups for i in (1, 2)), "node1 node2", 10)


def pgs(**modes_and_parents: str) -> list:
    """Pod groups at priority 10 as name="mode parent"."""
    return [group(name, 10, spec.split()[0], parent=spec.split()[1]) for name, spec in modes_and_parents.items()]


def cpgs(**specs: str) -> list:
    """Composite pod groups at priority 10 as name="mode [parent] [gang]"."""
    out = []
    for name, spec in specs.items():
        words = spec.split()
        parent = next((w for w in words[1:] if w != "gang"), "")
        out.append(composite(name.replace("_", "-"), 10, words[0], parent=parent, min_groups=2 if "gang" in words else 0))
    return out


TWO_LEVELS_ALL = (pgs(pg1="all cpg2", pg2="all cpg2", pg3="all cpg3", pg4="all cpg3"),
                  cpgs(cpg1="all", cpg2="all cpg1", cpg3="all cpg1"))
TWO_LEVELS_MIXED = (pgs(pg1="all cpg2", pg2="all cpg2", pg3="single cpg3", pg4="single cpg3"),
                    cpgs(cpg1="single", cpg2="all cpg1", cpg3="single cpg1"))
DOMAIN_COMPOSITE = [
    # root cpg1 (all) over pg1, pg2 (all): one victim of all four pods with the gate; a victim per pod group without
    pytest.param(pgs(pg1="all cpg1", pg2="all cpg1"), cpgs(cpg1="all"), True, {whole("pg1", "pg2")}, id="root-all-on"),
    pytest.param(pgs(pg1="all cpg1", pg2="all cpg1"), cpgs(cpg1="all"), False, {spread("pg1"), spread("pg2")},
                 id="root-all-off"),
    # root cpg1 (single) over pg1 (single) and pg2 (all): each pg1 pod alone, pg2 whole, gate on or off
    pytest.param(pgs(pg1="single cpg1", pg2="all cpg1"), cpgs(cpg1="single"), True, each("pg1") | {spread("pg2")},
                 id="root-single-on"),
    pytest.param(pgs(pg1="single cpg1", pg2="all cpg1"), cpgs(cpg1="single"), False, each("pg1") | {spread("pg2")},
                 id="root-single-off"),
    # cpg1 (all) over cpg2 and cpg3 (all), over pg1-pg4 (all): one victim of all eight pods; without, one per pod group
    pytest.param(*TWO_LEVELS_ALL, True, {whole("pg1", "pg2", "pg3", "pg4")}, id="nested-all-on"),
    pytest.param(*TWO_LEVELS_ALL, False, {spread(g) for g in ("pg1", "pg2", "pg3", "pg4")}, id="nested-all-off"),
    # cpg1 (single) over cpg2 (all: pg1, pg2 all) and cpg3 (single: pg3, pg4 single): cpg2's pods one victim
    pytest.param(*TWO_LEVELS_MIXED, True, {whole("pg1", "pg2")} | each("pg3", "pg4"), id="nested-mixed-on"),
    pytest.param(*TWO_LEVELS_MIXED, False, {spread("pg1"), spread("pg2")} | each("pg3", "pg4"), id="nested-mixed-off"),
    # a gang cpg1 (two groups at least, all) over pg1, pg2 (all): as the basic one
    pytest.param(pgs(pg1="all cpg1", pg2="all cpg1"), cpgs(cpg1="all gang"), True, {whole("pg1", "pg2")},
                 id="gang-all-on"),
    pytest.param(pgs(pg1="all cpg1", pg2="all cpg1"), cpgs(cpg1="all gang"), False, {spread("pg1"), spread("pg2")},
                 id="gang-all-off"),
    # a gang cpg1 (single) over pg1, pg2 (single): each pod alone
    pytest.param(pgs(pg1="single cpg1", pg2="single cpg1"), cpgs(cpg1="single gang"), True, each("pg1", "pg2"),
                 id="gang-single-on"),
    pytest.param(pgs(pg1="single cpg1", pg2="single cpg1"), cpgs(cpg1="single gang"), False, each("pg1", "pg2"),
                 id="gang-single-off"),
    # root cpg1 (all) over pg1 (single) and pg2 (all): the root's mode wins, one victim; without, pg1 pod by pod
    pytest.param(pgs(pg1="single cpg1", pg2="all cpg1"), cpgs(cpg1="all"), True, {whole("pg1", "pg2")},
                 id="root-all-over-single-on"),
    pytest.param(pgs(pg1="single cpg1", pg2="all cpg1"), cpgs(cpg1="all"), False, each("pg1") | {spread("pg2")},
                 id="root-all-over-single-off"),
    # pg1, pg2 (all) name cpg-mid1, which is missing: each its own victim; pg3, pg4 (all) -> cpg-mid2 (all) ->
    # cpg-root (all): one victim
    pytest.param(pgs(pg1="all cpg-mid1", pg2="all cpg-mid1", pg3="all cpg-mid2", pg4="all cpg-mid2"),
                 cpgs(cpg_root="all", cpg_mid2="all cpg-root"), True,
                 {spread("pg1"), spread("pg2"), whole("pg3", "pg4")}, id="missing-parent-on"),
]


@pytest.mark.parametrize("groups, composites, gate, want", DOMAIN_COMPOSITE)
def test_new_domain_for_workload_preemption_composite(groups, composites, gate, want):
    """TestNewDomainForWorkloadPreemption, the rows with composite pod groups: two pods of each pod
    group, one on each node, all at priority 10; the possible victims with the CompositePodGroup
    gate on or off."""
    state = cluster(TWO_NODES, pods_of(*(g.name for g in groups)), groups=groups, composites=composites)
    assert domain(state, COMPOSITE if gate else GENERIC_WORKLOAD) == want


# -- TestNewVictim ----------------------------------------------------------------------------------------

NOW = T0
EARLIER, LATER = NOW - timedelta(minutes=10), NOW + timedelta(minutes=10)
NEW_VICTIM = [
    # single pod without scheduling group: priority 20, started now
    pytest.param([pod("p1", 20, on="node1", start=NOW)], [], ("p1",), 20, False, NOW, id="single-pod-without-group"),
    # multiple pods with mixed start times (including nil): p4 has none (it counts as started now), p2
    # started later, p3 earlier; priority 30. The model forms a victim of several pods only from a group
    # disrupted as a whole, so the three name one at the row's priority (upstream keys this victim by
    # pod; the model's own mark of a group's victim is not compared)
    pytest.param([pod("p4", 30, on="node1", group="g"), pod("p2", 30, on="node1", group="g", start=LATER),
                  pod("p3", 30, on="node1", group="g", start=EARLIER)], [group("g", 30, ALL)],
                 ("p2", "p3", "p4"), 30, None, EARLIER, id="mixed-start-times"),
    # pod with scheduling group is constructed as pod group: p5 names pg1, priority 40, started now
    pytest.param([pod("p5", 40, on="node1", group="pg1", start=NOW)], [group("pg1", 40, SINGLE)],
                 ("p5",), 40, True, NOW, id="pod-with-group-as-pod-group"),
]


@pytest.mark.parametrize("pods, groups, names, priority, grouped, earliest", NEW_VICTIM)
def test_new_victim(pods, groups, names, priority, grouped, earliest):
    """TestNewVictim, the rows that build a victim: its pods, priority, whether it is a pod group's,
    and its earliest start (a pod that has not started counts as started now)."""
    [unit] = victim_units(cluster([node("node1")], pods, groups=groups), ABOVE_ALL, RELEASE, NOW)
    assert (unit.keys, unit.priority, unit.start) == (tuple(f"default/{n}" for n in names), priority, earliest)
    if grouped is not None:
        assert unit.grouped is grouped


# -- TestNewDomainVictim ----------------------------------------------------------------------------------

def test_new_domain_victim_deduplicates_affected_nodes():
    """TestNewDomainVictim, "multiple pods on same and different nodes deduplicates affectedNodes": a
    victim of p1 and p2 on node1 and p3 on node2, priority 20 (in the model, a group disrupted as a
    whole) affects node1 and node2, each once."""
    pods = [pod(n, 20, on=on, group="g") for n, on in (("p1", "node1"), ("p2", "node1"), ("p3", "node2"))]
    state = cluster(TWO_NODES, pods, groups=[group("g", 20, ALL)])
    by_node = units_by_node(state, ABOVE_ALL, RELEASE, T0)
    assert {n: len(units) for n, units in by_node.items()} == {"node1": 1, "node2": 1}
    assert domain(state) == {victim("p1 p2 p3", "node1 node2", 20)}


# -- TestNewPodGroupPreemptorResolvesPreemptionPolicy (the PodGroup rows) -------------------------------

POLICY_ROWS = [
    # the PodGroup's Never wins over its PreemptLowerPriority pod, with the gate on
    pytest.param(PREEMPT_NEVER, [PREEMPT_LOWER], True, PREEMPT_NEVER, id="never-from-group-gate-on"),
    # the PodGroup's PreemptLowerPriority wins over its pods (one with no policy), with the gate on
    pytest.param(PREEMPT_LOWER, [PREEMPT_LOWER, None], True, PREEMPT_LOWER, id="lower-from-group-gate-on"),
    # the gate off: the pods decide, and the group's Never is ignored
    pytest.param(PREEMPT_NEVER, [PREEMPT_LOWER], False, PREEMPT_LOWER, id="from-pods-gate-off"),
    # the gate off, pods of mixed policies: any Never makes the group Never
    pytest.param(PREEMPT_LOWER, [PREEMPT_NEVER, PREEMPT_LOWER, None], False, PREEMPT_NEVER, id="mixed-pods-gate-off"),
]


# The rows whose preemptor is a composite pod group (its policy None: not set), upstream's gate
# PodGroupPreemptionPolicy off unless the row turns it on.
POLICY_ROWS_COMPOSITE = [
    # no policy of its own, the gate off: the pods decide, none Never
    pytest.param(None, [PREEMPT_LOWER, None], False, PREEMPT_LOWER, id="cpg-from-pods-lower"),
    # no policy of its own, the gate off: a Never pod makes it Never
    pytest.param(None, [PREEMPT_NEVER, PREEMPT_LOWER], False, PREEMPT_NEVER, id="cpg-from-pods-never"),
    # its own Never wins over its pods, with the gate on
    pytest.param(PREEMPT_NEVER, [PREEMPT_LOWER], True, PREEMPT_NEVER, id="cpg-never-gate-on"),
    # its own PreemptLowerPriority wins over a Never pod, with the gate on
    pytest.param(PREEMPT_LOWER, [PREEMPT_LOWER, PREEMPT_NEVER], True, PREEMPT_LOWER, id="cpg-lower-gate-on"),
    # its own Never is not read with the gate off: the pods decide
    pytest.param(PREEMPT_NEVER, [PREEMPT_LOWER, None], False, PREEMPT_LOWER, id="cpg-never-gate-off"),
    # no policy of its own, the gate on: PreemptLowerPriority, though its pod is Never
    pytest.param(None, [PREEMPT_NEVER], True, PREEMPT_LOWER, id="cpg-unset-gate-on"),
]


@pytest.mark.parametrize("cpg_policy, pod_policies, gate, want", POLICY_ROWS_COMPOSITE)
def test_new_pod_group_preemptor_resolves_preemption_policy_composite(cpg_policy, pod_policies, gate, want):
    cpg = composite("cpg1", preemption_policy=cpg_policy)
    pods = [pod(f"p{i}", **({"preemption_policy": p} if p else {})) for i, p in enumerate(pod_policies)]
    assert preemption_policy(cpg, pods, policy_from_group=gate) == want


@pytest.mark.parametrize("group_policy, pod_policies, gate, want", POLICY_ROWS)
def test_new_pod_group_preemptor_resolves_preemption_policy(group_policy, pod_policies, gate, want):
    pg = replace(group("pg", 0), preemption_policy=group_policy)
    pods = [pod(f"p{i}", **({"preemption_policy": p} if p else {})) for i, p in enumerate(pod_policies)]
    assert preemption_policy(pg, pods, policy_from_group=gate) == want
