"""Peer cases: the kubernetes unit rows that hand the preemption evaluator a hook of their own, at
v1.34.4, v1.35.8 and v1.37.2: pkg/scheduler/framework/plugins/defaultpreemption
default_preemption_test.go (TestCustomSelection sets DefaultPreemption.IsEligiblePod,
TestCustomOrdering its MoreImportantPod, from 1.37 MoreImportantVictim) and
pkg/scheduler/framework/preemption/preemption_test.go (TestSelectCandidate: a test plugin's
OrderedScoreFuncs). Each test names its upstream function and case, and is the ``test:`` of that
case, at each release it is parametrized by (the id's suffix), in peers/upstream-cases.yaml.

The hook is part of the row's input: each is written anew here as a small function of the model's
hook signatures (reference.preemption.EligibleVictim and MoreImportant,
reference.candidates.ScoreFunc) and handed to the model's dry run or node choice, as upstream's
test sets it on the plugin; the expected candidates and victims are the assertion. The rows with
composite pod groups run with CompositePodGroup on too. Builders and conventions: upstream_tables.py.
"""

from __future__ import annotations

import pytest

import reference.preemption as preemption
from reference import filter as flt
from reference.candidates import pick_nodes
from reference.preemption import NodeVerdict
from reference.victim import Victim, more_important_victim, units_by_node

from tests.builders import T0
from tests.peers.upstream_tables import (
    COMPOSITE, GENERIC_WORKLOAD, HIGH, LARGE, LOW, MEDIUM, MID, NS, SMALL, UPSTREAM, at, big_node, cluster, composite,
    group, groups_on, pod,
)

RELEASES = ("1.34", "1.35", "1.37")
WHOLE = "all"
E0, E1, E2 = at(0), at(1), at(2)  # upstream's epochTime, epochTime1, epochTime2


def candidates(state, preemptor: str, release: str, gates=(), **hooks) -> dict[str, list[str]]:
    """The model's dry run on every node (upstream DryRunPreemption over all of them, each node
    Unschedulable in the filters), with the row's hooks: each candidate node with its victims'
    names, in the candidate's order."""
    p = state.pod_keyed(f"{NS}/{preemptor}")
    statuses = {n.name: flt.Status(flt.UNSCHEDULABLE) for n in state.nodes}
    units = units_by_node(state, p.priority, release, T0, gates) if groups_on(release, gates) else None
    return {v.node: [k.split("/", 1)[1] for k in v.victims]
            for v in preemption.dry_run(state, p, UPSTREAM, T0, statuses, units, **hooks) if v.candidate}


# -- TestCustomSelection (default_preemption_test.go): IsEligiblePod -----------------------------------------

def labelled(key: str, value: str):
    """Eligible when every pod of the victim has label ``key`` set to ``value``."""
    return lambda node, victim, preemptor: all(p.label_map.get(key) == value for p in victim.pods)


def on_node(name: str):
    """Eligible only on the node named ``name``."""
    return lambda node, victim, preemptor: node.name == name


def preemptor_at_least(priority: int):
    """Only a preemptor of at least ``priority`` may take anyone."""
    return lambda node, victim, preemptor: preemptor.priority >= priority


def victim_at_most(priority: int):
    """Only a victim of at most ``priority`` may go."""
    return lambda node, victim, preemptor: victim.priority <= priority


def _by_label(preemptor_prio: int, name: str):
    # four nodes, one large pod on each: v1 (mid, labelled no), v2 (mid, yes), v3 (low, yes), v4 (low, unlabelled)
    yes, no = {"preemptible": "yes"}, {"preemptible": "no"}
    return (4, pod(name, preemptor_prio, size=LARGE),
            [pod("v1", MID, on="node1", size=LARGE, start=E0, labels=no),
             pod("v2", MID, on="node2", size=LARGE, start=E0, labels=yes),
             pod("v3", LOW, on="node3", size=LARGE, start=E0, labels=yes),
             pod("v4", LOW, on="node4", size=LARGE, start=E0)])


def _by_node(preemptor_prio: int, first_size: int):
    # three nodes: on node1 v1 (high, ``first_size``), v2 (mid, small), v3 (low, small); on node2 v4
    # (mid, large); on node3 v5 (low, large)
    return (3, pod("p3", preemptor_prio, size=LARGE),
            [pod("v1", HIGH, on="node1", size=first_size, start=E0), pod("v2", MID, on="node1", size=SMALL, start=E0),
             pod("v3", LOW, on="node1", size=SMALL, start=E0), pod("v4", MID, on="node2", size=LARGE, start=E0),
             pod("v5", LOW, on="node3", size=LARGE, start=E0)])


def _one_each(preemptor_prio: int, name: str):
    # three nodes, one large pod on each: v1 high, v2 mid, v3 low
    return (3, pod(name, preemptor_prio, size=LARGE),
            [pod("v1", HIGH, on="node1", size=LARGE, start=E0), pod("v2", MID, on="node2", size=LARGE, start=E0),
             pod("v3", LOW, on="node3", size=LARGE, start=E0)])


SELECTION_ROWS = [
    # filter for matching pod label: high priority
    ("label-high", labelled("preemptible", "yes"), _by_label(HIGH, "p1"), {"node2": ["v2"], "node3": ["v3"]}),
    # filter for matching pod label: mid priority
    ("label-mid", labelled("preemptible", "yes"), _by_label(MID, "p2"), {"node3": ["v3"]}),
    # filter for matching pod label: low priority
    ("label-low", labelled("preemptible", "yes"), _by_label(LOW, "p3"), {}),
    # filter for matching victim node: high priority (v1 medium: both lower pods must go)
    ("node-high", on_node("node1"), _by_node(HIGH, MEDIUM), {"node1": ["v2", "v3"]}),
    # filter for matching victim node: mid priority
    ("node-mid", on_node("node1"), _by_node(MID, SMALL), {"node1": ["v3"]}),
    # filter for matching victim node: low priority
    ("node-low", on_node("node1"), _by_node(LOW, SMALL), {}),
    # only pods at or above specified priority can preempted: high priority (not another high pod, though)
    ("preemptor-floor-high", preemptor_at_least(HIGH), _one_each(HIGH, "p1"), {"node2": ["v2"], "node3": ["v3"]}),
    # only pods at or above specified priority can preempted: mid priority (takes nobody)
    ("preemptor-floor-mid", preemptor_at_least(HIGH), _one_each(MID, "p2"), {}),
    # only pods at or below specified priority can be preempted: high priority
    ("victim-ceiling-high", victim_at_most(MID), _one_each(HIGH, "p1"), {"node2": ["v2"], "node3": ["v3"]}),
]

SELECTION_137 = [
    # filter for matching pod group: all affected nodes eligible. pg1 (disrupted as a whole, no
    # priority of its own) has v1 on node1 and v2 on node2, both labelled yes: a victim from either node
    ("group-all-nodes-eligible", labelled("preemptible", "yes"),
     (2, pod("p1", HIGH, size=LARGE),
      [pod("v1", LOW, on="node1", size=LARGE, start=E0, labels={"preemptible": "yes"}, group="pg1"),
       pod("v2", LOW, on="node2", size=LARGE, start=E0, labels={"preemptible": "yes"}, group="pg1")]),
     {"node1": ["v1", "v2"], "node2": ["v1", "v2"]}),
    # filter for matching pod group: one node ineligible rejects entire pod group. pg1 has small v1 on
    # node1 and small v2 on node2, and only node1 is eligible: the group stays, so on node1 the
    # standalone large mid v3 goes and node2 has nobody to take
    ("group-one-node-ineligible", on_node("node1"),
     (2, pod("p1", HIGH, size=LARGE),
      [pod("v1", LOW, on="node1", size=SMALL, start=E0, group="pg1"),
       pod("v2", LOW, on="node2", size=SMALL, start=E0, group="pg1"),
       pod("v3", MID, on="node1", size=LARGE, start=E0)]),
     {"node1": ["v3"]}),
]

# The same two rows with composite pod groups (GenericWorkload and CompositePodGroup on): pg1 (v1)
# and pg2 (v2) are pod groups under cpg1, a composite group disrupted as a whole, so its victim is
# both pods, asked on each node it runs on.
SELECTION_COMPOSITE = [
    # filter for matching composite pod group: all affected nodes eligible (v1 on node1, v2 on node2,
    # both large and labelled yes): the whole composite group goes from either node
    ("composite-all-nodes-eligible", labelled("preemptible", "yes"),
     (2, pod("p1", HIGH, size=LARGE),
      [pod("v1", LOW, on="node1", size=LARGE, start=E0, labels={"preemptible": "yes"}, group="pg1"),
       pod("v2", LOW, on="node2", size=LARGE, start=E0, labels={"preemptible": "yes"}, group="pg2")]),
     {"node1": ["v1", "v2"], "node2": ["v1", "v2"]}),
    # filter for matching composite pod group: one node ineligible rejects the entire composite group
    # (small v1 on node1, small v2 on node2, only node1 eligible): on node1 the standalone large mid
    # v3 goes, node2 has nobody to take
    ("composite-one-node-ineligible", on_node("node1"),
     (2, pod("p1", HIGH, size=LARGE),
      [pod("v1", LOW, on="node1", size=SMALL, start=E0, group="pg1"),
       pod("v2", LOW, on="node2", size=SMALL, start=E0, group="pg2"),
       pod("v3", MID, on="node1", size=LARGE, start=E0)]),
     {"node1": ["v3"]}),
]

SELECTION = [
    *(pytest.param(r, hook, setup, (), want, id=f"{name}-{r}") for name, hook, setup, want in SELECTION_ROWS
      for r in RELEASES),
    *(pytest.param("1.37", hook, setup, GENERIC_WORKLOAD, want, id=f"{name}-1.37")
      for name, hook, setup, want in SELECTION_137),
    *(pytest.param("1.37", hook, setup, COMPOSITE, want, id=f"{name}-1.37")
      for name, hook, setup, want in SELECTION_COMPOSITE),
]


@pytest.mark.parametrize("release, hook, setup, gates, want", SELECTION)
def test_custom_selection(release, hook, setup, gates, want):
    """TestCustomSelection: with the row's eligibility hook (IsEligiblePod), the dry run over every
    node finds exactly these candidates, each with these victims (upstream takes each candidate in
    turn through SelectCandidate and compares its victims, sorted). The nodes are of the very large
    size; GenericWorkload is on only in the pod-group rows (1.37), where a group disrupted as a whole
    is asked on each node it runs on."""
    n, preemptor, pods = setup
    if gates == COMPOSITE:  # pg1 and pg2 under cpg1, which is disrupted as a whole
        groups = [group(g, LOW, parent="cpg1") for g in sorted({p.group for p in pods if p.group})]
        composites = [composite("cpg1", LOW, WHOLE)]
    else:
        groups = [group("pg1", LOW, WHOLE)] if any(p.group for p in pods) else []
        composites = []
    state = cluster([big_node(f"node{i}") for i in range(1, n + 1)], [preemptor, *pods], groups=groups,
                    composites=composites)
    found = candidates(state, preemptor.name, release, gates, eligible_victim=hook)
    assert {k: sorted(v) for k, v in found.items()} == want


# -- TestCustomOrdering (default_preemption_test.go): MoreImportantPod / MoreImportantVictim -----------------

def _first(victim: Victim, key):
    return min(key(p) for p in victim.pods)


def started_first(a: Victim, b: Victim) -> bool:
    """The victim whose pods started earliest is the more important (so the newest go first)."""
    return _first(a, lambda p: p.start_time) < _first(b, lambda p: p.start_time)


def by_name(a: Victim, b: Victim) -> bool:
    """The victim with the alphabetically first pod name is the more important."""
    return _first(a, lambda p: p.name) < _first(b, lambda p: p.name)


def pods_before_groups(a: Victim, b: Victim) -> bool:
    """A lone pod is more important than a pod group; otherwise upstream's default order."""
    if a.grouped != b.grouped:
        return not a.grouped
    return more_important_victim(a, b)


def smaller_groups_first(a: Victim, b: Victim) -> bool:
    """Of two pod groups of different sizes the smaller is the more important; otherwise the default."""
    if a.grouped and b.grouped and len(a.pods) != len(b.pods):
        return len(a.pods) < len(b.pods)
    return more_important_victim(a, b)


def group_name_first(a: Victim, b: Victim) -> bool:
    """Of two pod groups the one whose name sorts first (read off its alphabetically first pod) is
    the more important; otherwise the default."""
    if a.grouped and b.grouped:
        ga, gb = (min(v.pods, key=lambda p: p.name).group for v in (a, b))
        if ga != gb:
            return ga < gb
    return more_important_victim(a, b)


def _newest(v3_prio: int):
    # three medium low pods on node1 sized so that two must go: v1 started at 2, v2 at 0, v3 at 1
    return [pod("v1", LOW, on="node1", size=MEDIUM, start=E2), pod("v2", LOW, on="node1", size=MEDIUM, start=E0),
            pod("v3", v3_prio, on="node1", size=MEDIUM, start=E1)]


# foo and bar low, baz mid, all medium, all started at 0
ALPHA = [pod("foo", LOW, on="node1", size=MEDIUM, start=E0), pod("bar", LOW, on="node1", size=MEDIUM, start=E0),
         pod("baz", MID, on="node1", size=MEDIUM, start=E0)]

ORDERING_ROWS = {
    # select newest pods: the two newest go, despite v3's higher priority (1.34, 1.35: v3 is mid)
    "1.34": [("newest", started_first, _newest(MID), (), ["v3", "v1"]),
             # select alphabetically-last pods: despite baz's higher priority
             ("alphabetically-last", by_name, ALPHA, (), ["baz", "foo"])],
    "1.37": [
        # select newest pods (1.37: v3 is low too, GenericWorkload on); v2, the oldest, stays
        ("newest", started_first, _newest(LOW), (), ["v3", "v1"]),
        # select alphabetically-last pods
        ("alphabetically-last", by_name, ALPHA, (), ["baz", "foo"]),
        # select pod group over standalone pod due to custom ordering: medium standalone v1 stays, pg1
        # (small v2 and v3) goes
        ("group-over-standalone", pods_before_groups,
         [pod("v1", LOW, on="node1", size=MEDIUM, start=E0), pod("v2", LOW, on="node1", size=SMALL, start=E0, group="pg1"),
          pod("v3", LOW, on="node1", size=SMALL, start=E0, group="pg1")],
         [group("pg1", LOW, WHOLE)], ["v2", "v3"]),
        # select larger pod group over smaller pod group due to custom ordering: pg-small (v1) stays,
        # pg-large (v2, v3) goes; every pod small
        ("larger-group-over-smaller", smaller_groups_first,
         [pod("v1", LOW, on="node1", size=SMALL, start=E0, group="pg-small"),
          pod("v2", LOW, on="node1", size=SMALL, start=E0, group="pg-large"),
          pod("v3", LOW, on="node1", size=SMALL, start=E0, group="pg-large")],
         [group("pg-small", LOW, WHOLE), group("pg-large", LOW, WHOLE)], ["v2", "v3"]),
        # select pod group by name alphabetically due to custom ordering: pg-a (v1, started at 1) stays
        # though pg-z (v2, started at 0) is older; both medium
        ("group-by-name", group_name_first,
         [pod("v1", LOW, on="node1", size=MEDIUM, start=E1, group="pg-a"),
          pod("v2", LOW, on="node1", size=MEDIUM, start=E0, group="pg-z")],
         [group("pg-a", LOW, WHOLE), group("pg-z", LOW, WHOLE)], ["v2"]),
    ],
}
ORDERING_ROWS["1.35"] = ORDERING_ROWS["1.34"]

# 1.37 with composite pod groups (CompositePodGroup on too): each pod group has a composite parent
# disrupted as a whole, and the pod groups carry none of their own.
ORDERING_COMPOSITE = [
    # select composite pod group over standalone pod due to custom ordering: medium standalone v1
    # stays; cpg1 (pg1 with small v2, pg2 with small v3) goes
    ("composite-over-standalone", pods_before_groups,
     [pod("v1", LOW, on="node1", size=MEDIUM, start=E0), pod("v2", LOW, on="node1", size=SMALL, start=E0, group="pg1"),
      pod("v3", LOW, on="node1", size=SMALL, start=E0, group="pg2")],
     ([group("pg1", LOW, parent="cpg1"), group("pg2", LOW, parent="cpg1")], [composite("cpg1", LOW, WHOLE)]),
     ["v2", "v3"]),
    # select larger composite pod group over smaller composite pod group due to custom ordering:
    # cpg-small (pg-small: v1) stays, cpg-large (pg-large1: v2, pg-large2: v3) goes; every pod small
    ("larger-composite-over-smaller", smaller_groups_first,
     [pod("v1", LOW, on="node1", size=SMALL, start=E0, group="pg-small"),
      pod("v2", LOW, on="node1", size=SMALL, start=E0, group="pg-large1"),
      pod("v3", LOW, on="node1", size=SMALL, start=E0, group="pg-large2")],
     ([group("pg-small", LOW, parent="cpg-small"), group("pg-large1", LOW, parent="cpg-large"),
       group("pg-large2", LOW, parent="cpg-large")],
      [composite("cpg-small", LOW, WHOLE), composite("cpg-large", LOW, WHOLE)]),
     ["v2", "v3"]),
]

ORDERING = [pytest.param(r, hook, pods, (groups, []), want, id=f"{name}-{r}")
            for r in RELEASES for name, hook, pods, groups, want in ORDERING_ROWS[r]]
ORDERING += [pytest.param("1.37", hook, pods, groups, want, id=f"{name}-1.37")
             for name, hook, pods, groups, want in ORDERING_COMPOSITE]


@pytest.mark.parametrize("release, hook, pods, groups, want", ORDERING)
def test_custom_ordering(release, hook, pods, groups, want):
    """TestCustomOrdering: with the row's order (1.34/1.35 MoreImportantPod, 1.37 MoreImportantVictim),
    the one very large node is the only candidate, and its victims are ``want``: in that order when
    none is in a pod group (the order the hook gives), as a set otherwise (upstream leaves the order
    of a group's pods open). The high large preemptor; GenericWorkload on at 1.37, as the rows run."""
    groups, composites = groups
    state = cluster([big_node("node1")], [pod("p2", HIGH, size=LARGE), *pods], groups=groups, composites=composites)
    gates = (COMPOSITE if composites else GENERIC_WORKLOAD) if release == "1.37" else ()
    found = candidates(state, "p2", release, gates, more_important=hook)
    assert list(found) == ["node1"]
    assert (sorted(found["node1"]) if groups else found["node1"]) == (sorted(want) if groups else want)


# -- TestSelectCandidate (preemption_test.go): OrderedScoreFuncs ---------------------------------------------

# The row's pods are told apart by how many containers they have, which the model's pods do not
# carry: the row's score function reads them from this table of the row's facts.
CONTAINERS = {"p1.1": 2, "p2.1": 1, "p3.1": 3}


def fewest_containers(candidate: NodeVerdict, victims) -> int:
    """The test plugin's one score function: the fewer containers (and init containers) among the
    candidate's victims, the better."""
    return -sum(CONTAINERS[p.name] for p in victims)


def first_pod_is_the_victim(monkeypatch) -> None:
    """The row's test plugin in place of the victim search on each node (its SelectVictimsOnNode):
    the node's first pod is the one victim, with one PDB violation."""
    def select(state, p, node, plugin, now, status, units=None):
        first = state.pods_on(node.name)[0]
        return NodeVerdict(node.name, status, candidate=True, victims=(first.key,), pdb_violations=1,
                           reason="the row's test plugin")
    monkeypatch.setattr(preemption, "select_victims_on_node", select)


@pytest.mark.parametrize("release", RELEASES)
def test_select_candidate(monkeypatch, release):
    """TestSelectCandidate, "pod has different number of containers on each node": three nodes of the
    very large size, one mid pod on each (p1.1 with 2 containers on node1, p2.1 with 1 on node2, p3.1
    with 3 on node3). The test plugin makes each node a candidate with its pod as victim; with its
    score function the node chosen is node2, whichever of the three pods is the preemptor
    (GenericWorkload off)."""
    first_pod_is_the_victim(monkeypatch)
    mid = 100  # preemption_test.go's midPriority
    state = cluster([big_node(f"node{i}") for i in (1, 2, 3)],
                    [pod(name, mid, on=f"node{name[1]}") for name in CONTAINERS])
    assert not groups_on(release, ())
    for name in CONTAINERS:
        p = state.pod_keyed(f"{NS}/{name}")
        statuses = {n.name: flt.Status(flt.UNSCHEDULABLE) for n in state.nodes}
        found = [v for v in preemption.dry_run(state, p, UPSTREAM, T0, statuses) if v.candidate]
        assert len(found) == 3
        chosen, _ = pick_nodes(found, state, T0, score_funcs=(fewest_containers,))
        assert chosen == frozenset({"node2"})
