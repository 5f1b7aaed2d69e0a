"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/plugins/defaultpreemption
default_preemption_test.go and pkg/scheduler/framework/preemption/preemption_test.go, through the
model's preemption (reference.preemption, reference.candidates, reference.victim) at release
"1.37". Each test names its upstream function and case, and is the ``test:`` of that case (release
1.37.2) in peers/upstream-cases.yaml; the facts (capacities, requests, priorities, start times,
labels, pod groups, budgets, expected victims, nodes and messages) are the upstream rows', written
anew.

Conventions as in test_default_preemption_unit.py (the 1.35.8 translation): cpu in millicores,
memory in bytes, 32 pods a node unless a row says otherwise, start times as microseconds after the
epoch (only their order matters), the filter phase's per-node statuses given to the model where a
row hands them over (``given_statuses``), and the dry run run on each node (``dry_run``).

Feature gates: a row run with GenericWorkload on is given the gate
(``kube-scheduler GenericWorkload=true``), and the model then weighs victims as 1.37 does with it
(release.LONE_PREEMPTOR_GROUP_VICTIMS: pod-group victims, reference.victim.units_by_node); the
other rows run with it off, as upstream's default feature set there.

Rows that register test-only filter plugins in place of the real ones (TestDryRunPreemption's
FalseFilter, TrueFilter, MatchFilter) give the model the same filter set (``given_filters``): for
that call the model's pod-dependent filters are that one plugin, as upstream's profile has only it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import reference.preemption as preemption
from reference import filter as flt
from reference.candidates import num_candidates, pick_nodes
from reference.cycle import success_message
from reference.objects import (
    PREEMPT_NEVER,
    ClusterState,
    LabelSelector,
    Node,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodGroup,
    Requirement,
)
from reference.podgroup import group_key
from reference.preemption import DefaultPreemption, eligible, predict, select_victims_on_node
from reference.release import LONE_PREEMPTOR_GROUP_VICTIMS, has
from reference.victim import units_by_node

from tests.builders import T0

RELEASE = "1.37"
UPSTREAM = DefaultPreemption()
NS = "default"
GENERIC_WORKLOAD = (("kube-scheduler", "GenericWorkload", True),)

# Upstream's priorities and request sizes (cpu millicores, memory bytes) in default_preemption_test.go.
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = 100, 200, 300, 500
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def at(n: int) -> datetime:
    """Upstream's epochTime<n> (n after the epoch)."""
    return EPOCH + timedelta(microseconds=n)


def res(size: int) -> tuple[tuple[str, int], ...]:
    """One of upstream's request sizes: that many millicores and that many bytes."""
    return (("cpu", size), ("memory", size))


def node(name: str, *, pods: int = 32, cpu: int | None = None, memory: int | None = None,
         labels: dict | None = None) -> Node:
    alloc = [("pods", pods)]
    if cpu is not None:
        alloc.append(("cpu", cpu))
    if memory is not None:
        alloc.append(("memory", memory))
    return Node(name, labels=tuple(sorted((labels or {}).items())), allocatable=tuple(alloc))


def big_node(spec: str) -> Node:
    """A node of the dry-run tables: the very large size, named by the part of ``spec`` before a
    "/", labelled ``hostname``, then ``zone``, with the parts of ``spec`` ("node-a/zone1")."""
    parts = spec.split("/")
    return node(parts[0], cpu=VERY_LARGE, memory=VERY_LARGE, labels=dict(zip(("hostname", "zone", "region"), parts)))


def pod(name: str, prio: int = 0, *, on: str = "", size: int = 0, start: datetime | None = None,
        labels: dict | None = None, ns: str = NS, **kw) -> Pod:
    return Pod(name, ns, labels=tuple(sorted((labels or {}).items())), priority=prio,
               requests=res(size) if size else (), node_name=on, start_time=start, **kw)


def cluster(nodes, pods, pdbs=(), groups=()) -> ClusterState:
    return ClusterState(nodes=tuple(nodes), pods=tuple(pods), pdbs=tuple(pdbs), pod_groups=tuple(groups))


def budget(name: str, labels: dict, allowed: int, disrupted=()) -> PodDisruptionBudget:
    return PodDisruptionBudget(name, NS, LabelSelector(tuple(sorted(labels.items()))), allowed, tuple(disrupted))


def group(name: str, prio: int, disruption: str = "single", ns: str = NS) -> PodGroup:
    return PodGroup(name, ns, priority=prio, disruption=disruption)


def given_statuses(monkeypatch, codes: dict[str, str]) -> None:
    """The filter phase as the row gives it: each named node with its code, every other node
    UnschedulableAndUnresolvable; no node feasible."""
    def filter_nodes(state, p):
        return {n.name: flt.Status(codes.get(n.name, flt.UNRESOLVABLE)) for n in state.nodes}, set(), frozenset()
    monkeypatch.setattr(preemption, "filter_nodes", filter_nodes)


def given_filters(monkeypatch, plugin) -> None:
    """The row's profile has this one filter plugin: the model's dry run runs it alone (and so
    cannot take its counting shortcut, which supposes NodeResourcesFit)."""
    monkeypatch.setattr(flt, "FILTERS", (plugin,))
    monkeypatch.setattr(flt, "POD_DEPENDENT", (plugin,))
    monkeypatch.setattr(flt, "only_resources_matter", lambda *a: False)


def names(keys) -> list[str]:
    return sorted(k.split("/", 1)[1] for k in keys)


def groups_on(gates) -> bool:
    """Whether the model weighs victims as pod groups at 1.37 with these gates (as predict does)."""
    return has(RELEASE, LONE_PREEMPTOR_GROUP_VICTIMS, gates)


def verdict(state: ClusterState, preemptor: str, node_name: str, gates=()) -> preemption.NodeVerdict:
    """The model's dry run on one node (upstream GetVictimsOnNode then SelectVictimsOnNode)."""
    p = state.pod_keyed(f"{NS}/{preemptor}")
    units = units_by_node(state, p.priority, RELEASE, T0).get(node_name, []) if groups_on(gates) else None
    return select_victims_on_node(state, p, state.node_named(node_name), UPSTREAM, T0,
                                  flt.Status(flt.UNSCHEDULABLE), units)


def dry_run(state: ClusterState, preemptor: str) -> dict[str, tuple[list[str], int]]:
    """The model's dry run on every node (upstream DryRunPreemption over all of them, GenericWorkload
    off, each node Unschedulable in the filters): each candidate node with its victims' names,
    sorted, and its PDB violations."""
    p = state.pod_keyed(f"{NS}/{preemptor}")
    statuses = {n.name: flt.Status(flt.UNSCHEDULABLE) for n in state.nodes}
    return {v.node: (names(v.victims), v.pdb_violations)
            for v in preemption.dry_run(state, p, UPSTREAM, T0, statuses) if v.candidate}


# -- TestPostFilter (default_preemption_test.go) ---------------------------------------------------------

ONE_POD = {"pods": 1}
SMALL_CPU = {"cpu": 200, "memory": 400}  # upstream's nodeRes
VIOLATING = "test.kubernetes.io/is-violating-pdb"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"

POST_FILTER = [
    pytest.param(
        # pod with higher priority can be made schedulable
        dict(nodes=[node("node1", **ONE_POD)], pods=[pod("p", HIGH), pod("p1", on="node1")],
             codes={"node1": flt.UNSCHEDULABLE}),
        "node1", 1, None, id="higher-priority-made-schedulable"),
    pytest.param(
        # pod with tied priority is still unschedulable
        dict(nodes=[node("node1", **ONE_POD)], pods=[pod("p"), pod("p1", on="node1")],
             codes={"node1": flt.UNSCHEDULABLE}),
        "", 0, f"preemption: 0/1 nodes are available: 1 {NO_VICTIMS}.", id="tied-priority-unschedulable"),
    pytest.param(
        # preemption should respect filteredNodesStatuses
        dict(nodes=[node("node1", **ONE_POD)], pods=[pod("p", HIGH), pod("p1", on="node1")],
             codes={"node1": flt.UNRESOLVABLE}),
        "", 0, f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.", id="respects-filtered-statuses"),
    pytest.param(
        # preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable
        dict(nodes=[node("node1", **ONE_POD)], pods=[pod("p", HIGH), pod("p1", on="node1")], codes={}),
        "", 0, f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.", id="absent-status-unresolvable"),
    pytest.param(
        # pod can be made schedulable on one node
        dict(nodes=[node("node1", **ONE_POD), node("node2", **ONE_POD)],
             pods=[pod("p", MID), pod("p1", HIGH, on="node1"), pod("p2", LOW, on="node2")],
             codes={"node1": flt.UNSCHEDULABLE, "node2": flt.UNSCHEDULABLE}),
        "node2", 1, None, id="schedulable-on-one-node"),
    pytest.param(
        # pod can be made schedulable on minHighestPriority node
        dict(nodes=[node("node1", **ONE_POD), node("node2", **ONE_POD)],
             pods=[pod("p", VERY_HIGH),
                   pod("p1", HIGH, on="node1", labels={VIOLATING: "non-violating"}),
                   pod("p2", LOW, on="node1", labels={VIOLATING: "violating"}),
                   pod("p3", MID, on="node2", labels={VIOLATING: "violating"})],
             # minAvailable 100%: no disruption allowed; minAvailable 0 with the most allowed
             pdbs=[budget("violating-pdb", {VIOLATING: "violating"}, 0),
                   budget("non-violating-pdb", {VIOLATING: "non-violating"}, 2**31 - 1)],
             codes={"node1": flt.UNSCHEDULABLE, "node2": flt.UNSCHEDULABLE}),
        "node2", 1, None, id="min-highest-priority-node"),
    pytest.param(
        # no candidate nodes found, no enough resource after removing low priority pods
        dict(nodes=[node("node1", **SMALL_CPU), node("node2", **SMALL_CPU)],
             pods=[pod("p", HIGH, size=LARGE), pod("p1", on="node1"), pod("p2", on="node2")],
             codes={"node1": flt.UNSCHEDULABLE, "node2": flt.UNSCHEDULABLE}),
        "", 0, "preemption: 0/2 nodes are available: 2 Insufficient cpu.", id="no-candidate-insufficient-cpu"),
    pytest.param(
        # no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource
        dict(nodes=[node("node1", **ONE_POD), node("node2", **SMALL_CPU), node("node3", **ONE_POD)],
             pods=[pod("p", HIGH, size=LARGE), pod("p1", HIGH, on="node1"), pod("p2", on="node2"),
                   pod("p3", HIGH, on="node3")],
             codes={"node1": flt.UNSCHEDULABLE, "node2": flt.UNSCHEDULABLE, "node3": flt.UNSCHEDULABLE}),
        "", 0, f"preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 {NO_VICTIMS}.",
        id="no-candidate-mixed-reasons"),
    pytest.param(
        # no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes
        # don't have enough CPU resource (node3 has no status: unresolvable too)
        dict(nodes=[node(f"node{i}", **SMALL_CPU) for i in (1, 2, 3, 4)],
             pods=[pod("p", HIGH, size=LARGE), pod("p1", on="node1"), pod("p2", on="node2")],
             codes={"node1": flt.UNSCHEDULABLE, "node2": flt.UNSCHEDULABLE, "node4": flt.UNRESOLVABLE}),
        "", 0, f"preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 {NOT_HELPFUL}.",
        id="no-candidate-unresolvable-and-insufficient"),
    pytest.param(
        # pod with SchedulingGroup with GenericWorkload and TAS disabled should preempt: the preemptor
        # names pod group "foo" (which does not exist); with the gates off it is a lone pod
        dict(nodes=[node("node1", **ONE_POD)], pods=[pod("p", HIGH, group="foo"), pod("p1", on="node1")],
             codes={"node1": flt.UNSCHEDULABLE}),
        "node1", 1, None, id="scheduling-group-gates-off-preempts"),
]


@pytest.mark.parametrize("row, nominated, victims, message", POST_FILTER)
def test_post_filter(monkeypatch, row, nominated, victims, message):
    """TestPostFilter: PostFilter with the row's filter statuses nominates ``nominated``, preempting
    ``victims`` pods, with 1.37's success message (or, when empty, clears the nomination and fails
    with ``message``)."""
    given_statuses(monkeypatch, row["codes"])
    state = cluster(row["nodes"], row["pods"], row.get("pdbs", ()))
    p = state.pod_keyed(f"{NS}/p")
    assert group_key(state, p, RELEASE, ()) == ""  # scheduled on its own
    pr = predict(state, p.key, UPSTREAM, T0, release=RELEASE)
    if nominated:
        assert (pr.outcome, pr.nodes) == ("preempt", frozenset({nominated}))
        assert len(pr.victims[nominated]) == victims
        assert success_message(pr.message, nominated, victims, RELEASE).endswith(
            f" preemption: found a potential placement for pod on node {nominated}, preempting {victims} victims")
        return
    assert (pr.outcome, pr.nominated_node, pr.victims) == ("unschedulable", "", {})
    assert pr.message.endswith(" " + message), pr.message


# -- TestDryRunPreemption (default_preemption_test.go) ----------------------------------------------------

TWO_NODES = [big_node("node1"), big_node("node2")]
ANTI_FOO = PodAffinityTerm(LabelSelector(match_expressions=(Requirement("foo", "Exists"),)), "hostname")
FOO = {"app": "foo"}


def _foo_pods(n: int):
    return [pod(f"p1.{i}", MID, on="node1", size=MEDIUM, labels=FOO) for i in range(1, n + 1)]


DRY_RUN = [
    pytest.param(
        # a pod that fits on both nodes when lower priority pods are preempted
        TWO_NODES, [pod("p", HIGH, size=LARGE), pod("p1", MID, on="node1", size=LARGE),
                    pod("p2", MID, on="node2", size=LARGE)], [],
        {"node1": (["p1"], 0), "node2": (["p2"], 0)}, id="fits-both-nodes-after-preemption"),
    pytest.param(
        # a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen
        TWO_NODES, [pod("p", LOW, size=LARGE), pod("p1", MID, on="node1", size=LARGE),
                    pod("p2", MID, on="node2", size=LARGE)], [],
        {}, id="others-higher-priority"),
    pytest.param(
        # medium priority pod is preempted, but lower priority one stays as it is small
        TWO_NODES, [pod("p", HIGH, size=LARGE), pod("p1.1", LOW, on="node1", size=SMALL),
                    pod("p1.2", MID, on="node1", size=LARGE), pod("p2", MID, on="node2", size=LARGE)], [],
        {"node1": (["p1.2"], 0), "node2": (["p2"], 0)}, id="medium-preempted-small-low-stays"),
    pytest.param(
        # mixed priority pods are preempted
        TWO_NODES, [pod("p", HIGH, size=LARGE), pod("p1.1", MID, on="node1", size=SMALL),
                    pod("p1.2", LOW, on="node1", size=SMALL), pod("p1.3", MID, on="node1", size=MEDIUM),
                    pod("p1.4", HIGH, on="node1", size=SMALL), pod("p2", HIGH, on="node2", size=LARGE)], [],
        {"node1": (["p1.2", "p1.3"], 0)}, id="mixed-priorities"),
    pytest.param(
        # mixed priority pods are preempted, pick later StartTime one when priorities are equal
        TWO_NODES, [pod("p", HIGH, size=LARGE),
                    pod("p1.1", LOW, on="node1", size=SMALL, start=at(5)),
                    pod("p1.2", LOW, on="node1", size=SMALL, start=at(4)),
                    pod("p1.3", MID, on="node1", size=MEDIUM, start=at(3)),
                    pod("p1.4", HIGH, on="node1", size=SMALL, start=at(2)),
                    pod("p2", HIGH, on="node2", size=LARGE, start=at(1))], [],
        {"node1": (["p1.1", "p1.3"], 0)}, id="mixed-priorities-later-start"),
    pytest.param(
        # pod with anti-affinity is preempted
        TWO_NODES, [pod("p", HIGH, size=SMALL, labels={"foo": ""}),
                    pod("p1.1", LOW, on="node1", size=SMALL, labels={"foo": ""}, pod_anti_affinity=(ANTI_FOO,)),
                    pod("p1.2", MID, on="node1", size=SMALL), pod("p1.3", HIGH, on="node1", size=SMALL),
                    pod("p2", HIGH, on="node2", size=SMALL)], [],
        {"node1": (["p1.1"], 0)}, id="anti-affinity-holder-preempted"),
    pytest.param(
        # preemption with violation of same pdb
        [big_node("node1")], [pod("p", HIGH, size=VERY_LARGE), *_foo_pods(2)], [budget("pdb", FOO, 1)],
        {"node1": (["p1.1", "p1.2"], 1)}, id="same-pdb-violated"),
    pytest.param(
        # preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't
        # belong to DisruptedPods
        [big_node("node1")], [pod("p", HIGH, size=VERY_LARGE), *_foo_pods(2)],
        [budget("pdb", FOO, 1, disrupted=("p2",))],
        {"node1": (["p1.1", "p1.2"], 1)}, id="disrupted-pods-other-pod"),
    pytest.param(
        # preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to
        # DisruptedPods
        [big_node("node1")], [pod("p", HIGH, size=VERY_LARGE), *_foo_pods(2)],
        [budget("pdb", FOO, 1, disrupted=("p1.2",))],
        {"node1": (["p1.1", "p1.2"], 0)}, id="disrupted-pods-victim"),
    pytest.param(
        # preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs
        # to DisruptedPods is treated as 'nonViolating'
        [big_node("node1")], [pod("p", HIGH, size=VERY_LARGE), *_foo_pods(3)],
        [budget("pdb", FOO, 1, disrupted=("p1.3",))],
        {"node1": (["p1.1", "p1.2", "p1.3"], 1)}, id="disrupted-victim-non-violating"),
]


@pytest.mark.parametrize("nodes, pods, pdbs, candidates", DRY_RUN)
def test_dry_run_preemption(nodes, pods, pdbs, candidates):
    """TestDryRunPreemption: the dry run over every node finds these candidates (victims, PDB violations)."""
    assert dry_run(cluster(nodes, pods, pdbs), "p") == candidates


def _false_filter(state, p, n, resident):
    return flt.Status(flt.UNSCHEDULABLE, ("FalseFilter",), "FalseFilter")


def _true_filter(state, p, n, resident):
    return flt.OK


def _match_filter(state, p, n, resident):
    """Passes where the pod is named as the node."""
    return flt.OK if p.name == n.name else flt.Status(flt.UNSCHEDULABLE, ("MatchFilter",), "MatchFilter")


FAKE_FILTERS = [
    # a pod that does not fit on any node: the one filter (FalseFilter) always says Unschedulable
    pytest.param(_false_filter, "p", id="does-not-fit-any-node"),
    # a pod that fits with no preemption: the one filter (TrueFilter) always passes
    pytest.param(_true_filter, "p", id="fits-with-no-preemption"),
    # a pod that fits on one node with no preemption: MatchFilter passes where the pod is named as the
    # node; the preemptor is named node1
    pytest.param(_match_filter, "node1", id="fits-one-node-with-no-preemption"),
]


@pytest.mark.parametrize("plugin, preemptor", FAKE_FILTERS)
def test_dry_run_preemption_with_test_filter(monkeypatch, plugin, preemptor):
    """TestDryRunPreemption, the rows whose profile has one test filter plugin and no NodeResourcesFit:
    two nodes of the very large size, each with one mid pod (no requests); the high preemptor (no
    requests) finds no candidate at all."""
    given_filters(monkeypatch, plugin)
    state = cluster(TWO_NODES, [pod(preemptor, HIGH), pod("p1", MID, on="node1"), pod("p2", MID, on="node2")])
    assert dry_run(state, preemptor) == {}


def test_dry_run_looks_past_num_candidates_for_a_pdb_clean_node():
    """TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB violating node is
    found": five nodes, each with one mid pod of the large size; those on node1, node2 and node5
    carry app=foo, whose budget allows no disruption. With at least 40% and at least 2 candidates
    wanted, upstream's dry run (from its seeded offset) returns node1 and node5 (one violation
    each) and goes on to node3 (none). The model cannot know the offset: it checks those
    candidates' victims and violations, the number wanted, and that whatever sample the dry run
    stops at holds a candidate that breaks no budget, so the node chosen is one (node3 among them)."""
    nodes = [big_node(f"node{i}") for i in range(1, 6)]
    pods = [pod("p", HIGH, size=LARGE)] + [
        pod(f"p{i}", MID, on=f"node{i}", size=LARGE, labels=FOO if i in (1, 2, 5) else None) for i in range(1, 6)]
    state = cluster(nodes, pods, [budget("pdb", FOO, 0)])
    found = dry_run(state, "p")
    assert {n: found[n] for n in ("node1", "node3", "node5")} == {
        "node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}
    sample = num_candidates(len(nodes), percentage=40, absolute=2)
    assert sample == 2
    verdicts = [verdict(state, "p", n.name) for n in nodes]
    chosen, _ = pick_nodes([v for v in verdicts if v.candidate], state, T0, sample)
    assert "node3" in chosen and chosen <= {"node3", "node4"}


# -- TestSelectBestCandidate (default_preemption_test.go) --------------------------------------------------

def _on(node_name: str, *specs):
    """Pods ``<node>.<i>`` on a node, each (priority, size, start)."""
    i = node_name.removeprefix("node")
    return [pod(f"p{i}.{j}", prio, on=node_name, size=size, start=start)
            for j, (prio, size, start) in enumerate(specs, 1)]


E0 = at(0)
SELECT_BEST = [
    pytest.param(
        # a pod that fits on both nodes when lower priority pods are preempted
        2, pod("p", HIGH, size=LARGE),
        [pod("p1", MID, on="node1", size=LARGE, start=E0), pod("p2", MID, on="node2", size=LARGE, start=E0)],
        {"node1", "node2"}, id="fits-both-nodes"),
    pytest.param(
        # node with min highest priority pod is picked
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (MID, MEDIUM, E0), (MID, LARGE, E0)) + _on("node2", (MID, MEDIUM, E0), (LOW, MEDIUM, E0))
        + _on("node3", (LOW, MEDIUM, E0), (LOW, MEDIUM, E0)),
        {"node3"}, id="min-highest-priority"),
    pytest.param(
        # when highest priorities are the same, minimum sum of priorities is picked
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (MID, MEDIUM, E0), (MID, LARGE, E0)) + _on("node2", (MID, LARGE, E0), (LOW, MEDIUM, E0))
        + _on("node3", (MID, MEDIUM, E0), (MID, MEDIUM, E0)),
        {"node2"}, id="min-sum"),
    pytest.param(
        # when highest priority and sum are the same, minimum number of pods is picked
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (MID, SMALL, E0), (NEG, SMALL, E0), (MID, SMALL, E0), (NEG, SMALL, E0))
        + _on("node2", (MID, LARGE, E0), (NEG, MEDIUM, E0))
        + _on("node3", (MID, MEDIUM, E0), (NEG, SMALL, E0), (LOW, SMALL, E0)),
        {"node2"}, id="min-number-of-pods"),
    pytest.param(
        # sum of adjusted priorities is considered
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (MID, SMALL, E0), (NEG, SMALL, E0), (NEG, SMALL, E0))
        + _on("node2", (MID, LARGE, E0), (NEG, MEDIUM, E0))
        + _on("node3", (MID, MEDIUM, E0), (NEG, SMALL, E0), (LOW, SMALL, E0)),
        {"node2"}, id="adjusted-sum"),
    pytest.param(
        # non-overlapping lowest high priority, sum priorities, and number of pods
        4, pod("p", VERY_HIGH, size=VERY_LARGE),
        _on("node1", (MID, SMALL, E0), (LOW, SMALL, E0), (LOW, SMALL, E0))
        + _on("node2", (HIGH, LARGE, E0))
        + _on("node3", (MID, MEDIUM, E0), (LOW, SMALL, E0), (LOW, SMALL, E0), (LOW, MEDIUM, E0))
        + _on("node4", (MID, MEDIUM, E0), (MID, SMALL, E0), (MID, SMALL, E0), (NEG, SMALL, E0)),
        {"node1"}, id="non-overlapping-criteria"),
    pytest.param(
        # same priority, same number of victims, different start time for each node's pod
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (MID, MEDIUM, at(2)), (MID, MEDIUM, at(2)))
        + _on("node2", (MID, MEDIUM, at(3)), (MID, MEDIUM, at(3)))
        + _on("node3", (MID, MEDIUM, at(1)), (MID, MEDIUM, at(1))),
        {"node2"}, id="start-time-per-node"),
    pytest.param(
        # same priority, same number of victims, different start time for all pods
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (MID, MEDIUM, at(4)), (MID, MEDIUM, at(2)))
        + _on("node2", (MID, MEDIUM, at(5)), (MID, MEDIUM, at(1)))
        + _on("node3", (MID, MEDIUM, at(3)), (MID, MEDIUM, at(6))),
        {"node3"}, id="start-time-all-pods"),
    pytest.param(
        # different priority, same number of victims, different start time for all pods
        3, pod("p", HIGH, size=VERY_LARGE),
        _on("node1", (LOW, MEDIUM, at(4)), (MID, MEDIUM, at(2)))
        + _on("node2", (MID, MEDIUM, at(6)), (LOW, MEDIUM, at(1)))
        + _on("node3", (LOW, MEDIUM, at(3)), (MID, MEDIUM, at(5))),
        {"node2"}, id="priority-then-start-time"),
]


@pytest.mark.parametrize("n, preemptor, pods, best", SELECT_BEST)
def test_select_best_candidate(n, preemptor, pods, best):
    """TestSelectBestCandidate: after the dry run over every node, the node chosen is one of ``best``
    (the model's set of equally good nodes is exactly those upstream accepts)."""
    state = cluster([big_node(f"node{i}") for i in range(1, n + 1)], [preemptor, *pods])
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=RELEASE)
    assert (pr.outcome, pr.nodes) == ("preempt", frozenset(best)), pr.reasons


# -- TestPodEligibleToPreemptOthers (default_preemption_test.go) -------------------------------------------

GONE = T0 - timedelta(seconds=1)  # a deletion timestamp: the pod is terminating
ELIGIBLE = [
    pytest.param(
        # Pod with nominated node: the nominated node's status is UnschedulableAndUnresolvable (an
        # untolerated taint), so a terminating lower pod there does not hold it back
        pod("p_with_nominated_node", HIGH, nominated_node_name="node1"),
        [pod("p1", LOW, on="node1", deletion_timestamp=GONE)], [], ["node1"],
        flt.Status(flt.UNRESOLVABLE, ("node(s) had untolerated taint(s)",)), (), True, id="nominated-node-unresolvable"),
    pytest.param(
        # Pod without nominated node
        pod("p_without_nominated_node", HIGH), [], [], [], None, (), True, id="no-nominated-node"),
    pytest.param(
        # Pod with 'PreemptNever' preemption policy
        pod("p_with_preempt_never_policy", HIGH, preemption_policy=PREEMPT_NEVER), [], [], [], None, (), False,
        id="preempt-never"),
    pytest.param(
        # preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition
        pod("p_with_nominated_node", HIGH, nominated_node_name="node1"),
        [pod("p1", LOW, on="node1", deletion_timestamp=GONE, disruption_target_by_preemption=True)], [], ["node1"],
        None, (), False, id="victim-terminating-by-preemption"),
    pytest.param(
        # non-victim Pods terminating
        pod("p_with_nominated_node", HIGH, nominated_node_name="node1"),
        [pod("p1", LOW, on="node1", deletion_timestamp=GONE)], [], ["node1"], None, (), True,
        id="non-victim-terminating"),
    pytest.param(
        # Preemptor with SchedulingGroup, victim priority overridden by PodGroup in victim namespace: the
        # preemptor (ns1, high, group pg1, nominated to node1) finds there v1 (ns2, very high, group pg1,
        # terminating by preemption), whose pod group ns2/pg1 has low priority; GenericWorkload on
        pod("p", HIGH, ns="ns1", group="pg1", nominated_node_name="node1"),
        [pod("v1", VERY_HIGH, ns="ns2", on="node1", group="pg1", deletion_timestamp=GONE,
             disruption_target_by_preemption=True)],
        [group("pg1", LOW, ns="ns2")], ["node1"], None, GENERIC_WORKLOAD, False,
        id="victim-priority-from-its-pod-group"),
]


@pytest.mark.parametrize("preemptor, pods, groups, nodes, nominated_status, gates, want", ELIGIBLE)
def test_pod_eligible_to_preempt_others(preemptor, pods, groups, nodes, nominated_status, gates, want):
    """TestPodEligibleToPreemptOthers: whether the pod may preempt at all."""
    state = cluster([node(n) for n in nodes], [preemptor, *pods], groups=groups)
    ok, _ = eligible(state, preemptor, UPSTREAM, nominated_status, groups_on(gates))
    assert ok is want


# -- TestPreempt (default_preemption_test.go) --------------------------------------------------------------

def _preempt_pods(policy: str | None):
    kw = {} if policy is None else {"preemption_policy": policy}
    return [pod("p", HIGH, size=VERY_LARGE, **kw),
            pod("p1.1", LOW, on="node1", size=SMALL), pod("p1.2", LOW, on="node1", size=SMALL),
            pod("p2.1", HIGH, on="node2", size=LARGE), pod("p3.1", MID, on="node3", size=MEDIUM)]


PREEMPT = [
    # basic preemption logic (policy PreemptLowerPriority)
    pytest.param("PreemptLowerPriority", "node1", ["p1.1", "p1.2"], id="basic"),
    # no preempting in pod (policy Never)
    pytest.param(PREEMPT_NEVER, None, [], id="preempt-never"),
    # PreemptionPolicy is nil: the model's pod carries the default the API server gives it
    pytest.param(None, "node1", ["p1.1", "p1.2"], id="policy-nil"),
]


@pytest.mark.parametrize("policy, nominated, victims", PREEMPT)
def test_preempt(monkeypatch, policy, nominated, victims):
    """TestPreempt: with every node given as Unschedulable, the preemptor is nominated to
    ``nominated`` and exactly ``victims`` are preempted (none, and no nomination, when it may not
    preempt). Then, with its victims terminating by preemption and itself nominated there, a second
    attempt, given no node statuses, preempts nobody more."""
    nodes = [big_node(f"node{i}") for i in (1, 2, 3)]
    state = cluster(nodes, _preempt_pods(policy))
    given_statuses(monkeypatch, {n.name: flt.UNSCHEDULABLE for n in nodes})
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=RELEASE)
    if nominated is None:
        assert (pr.outcome, pr.nodes, pr.victims) == ("unschedulable", frozenset(), {})
        return
    assert (pr.outcome, pr.nodes) == ("preempt", frozenset({nominated}))
    assert names(pr.victims[nominated]) == victims

    after = state
    for key in pr.victims[nominated]:
        after = after.with_pod(after.pod_keyed(key).with_(deletion_timestamp=T0, disruption_target_by_preemption=True))
    after = after.with_pod(after.pod_keyed(f"{NS}/p").with_(nominated_node_name=nominated))
    given_statuses(monkeypatch, {})
    again = predict(after, f"{NS}/p", UPSTREAM, T0 + timedelta(seconds=1), release=RELEASE)
    assert again.outcome != "preempt" and not again.victims


# -- TestSelectVictimsOnNode (default_preemption_test.go) --------------------------------------------------

ANTI_FOO_ZONE = PodAffinityTerm(LabelSelector(match_expressions=(Requirement("foo", "Exists"),)), "zone")
ZONE1 = ["node-a/zone1", "node-b/zone1"]
WHOLE = "all"

SELECT_VICTIMS = [
    pytest.param(
        # Basic: Preempt single lower priority pod
        ["node1"], "node1", [pod("victim", LOW, on="node1", size=LARGE)], pod("p", HIGH, size=LARGE),
        [], [], (), (["victim"], 0), id="basic-single-lower-pod"),
    pytest.param(
        # Priority: Prefer lower priority victim
        ["node1"], "node1",
        [pod("high-prio", HIGH, on="node1", size=SMALL), pod("mid-prio", MID, on="node1", size=SMALL),
         pod("low-prio", LOW, on="node1", size=SMALL)], pod("p", HIGH, size=LARGE),
        [], [], (), (["low-prio"], 0), id="prefer-lower-priority"),
    pytest.param(
        # PDB: Prefer non-violating victim with higher priority over violating victim with lower priority
        ["node1"], "node1",
        [pod("victim-pdb", LOW, on="node1", size=MEDIUM, labels=FOO), pod("victim-no-pdb", MID, on="node1", size=MEDIUM)],
        pod("p", HIGH, size=LARGE), [budget("pdb", FOO, 0)], [], (), (["victim-no-pdb"], 0),
        id="pdb-prefer-non-violating"),
    pytest.param(
        # PDB: Prefer lower prioirity pod for preemption, when preemption without pdb violation is not possible
        ["node1"], "node1",
        [pod("v1", LOW, on="node1", size=MEDIUM, labels=FOO), pod("v2", MID, on="node1", size=MEDIUM, labels=FOO)],
        pod("p", HIGH, size=LARGE), [budget("pdb", FOO, 0)], [], (), (["v1"], 1),
        id="pdb-all-violating-lower-goes"),
    pytest.param(
        # Workload Aware: Atomic preemption of PodGroup
        ["node1"], "node1",
        [pod("g1-1", LOW, on="node1", size=SMALL, group="pg1"), pod("g1-2", LOW, on="node1", size=MEDIUM, group="pg1")],
        pod("p", HIGH, size=LARGE), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD, (["g1-1", "g1-2"], 0),
        id="workload-atomic-pod-group"),
    pytest.param(
        # Workload Aware: prefer single pod over podGroup for preemption candidate
        ["node1"], "node1",
        [pod("p1", LOW, on="node1", size=SMALL), pod("g1-1", LOW, on="node1", size=SMALL, group="pg1"),
         pod("g1-2", LOW, on="node1", size=SMALL, group="pg1")],
        pod("p", HIGH, size=LARGE), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD, (["p1"], 0),
        id="workload-prefer-single-pod"),
    pytest.param(
        # Workload Aware: preempt lower priority pod group instead of higher priority single pod
        ["node1"], "node1",
        [pod("p1", HIGH, on="node1", size=MEDIUM), pod("g1-1", LOW, on="node1", size=MEDIUM, group="pg1")],
        pod("p", VERY_HIGH, size=LARGE), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD, (["g1-1"], 0),
        id="workload-lower-group-goes"),
    pytest.param(
        # Workload Aware: preempt lower priority single pod instead of higher priority pod group
        ["node1"], "node1",
        [pod("p1", LOW, on="node1", size=MEDIUM), pod("g1-1", HIGH, on="node1", size=MEDIUM, group="pg1")],
        pod("p", VERY_HIGH, size=LARGE), [], [group("pg1", HIGH, WHOLE)], GENERIC_WORKLOAD, (["p1"], 0),
        id="workload-lower-single-pod-goes"),
    pytest.param(
        # Workload Aware: PDB: PodGroup as victim with 2 PDB violations
        ["node1"], "node1",
        [pod("g1-1", LOW, on="node1", size=MEDIUM, labels=FOO, group="pg1"),
         pod("g1-2", LOW, on="node1", size=MEDIUM, labels=FOO, group="pg1")],
        pod("p", HIGH, size=LARGE), [budget("pdb", FOO, 0)], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD,
        (["g1-1", "g1-2"], 2), id="workload-pdb-group-two-violations"),
    pytest.param(
        # Workload Aware: PDB: Prefer non-violating PodGroup over lower-priority violating PodGroup (DisruptionModeAll)
        ["node1"], "node1",
        [pod("g1-1", LOW, on="node1", size=MEDIUM, labels=FOO, group="pg-violating"),
         pod("g2-1", MID, on="node1", size=MEDIUM, group="pg-non-violating")],
        pod("p", HIGH, size=LARGE), [budget("pdb", FOO, 0)],
        [group("pg-violating", LOW, WHOLE), group("pg-non-violating", MID, WHOLE)], GENERIC_WORKLOAD,
        (["g2-1"], 0), id="workload-pdb-prefer-non-violating-group-all"),
    pytest.param(
        # Workload Aware: PDB: Prefer non-violating PodGroup over lower-priority violating PodGroup (DisruptionModeSingle)
        ["node1"], "node1",
        [pod("g1-1", LOW, on="node1", size=MEDIUM, labels=FOO, group="pg-violating"),
         pod("g2-1", MID, on="node1", size=MEDIUM, group="pg-non-violating")],
        pod("p", HIGH, size=LARGE), [budget("pdb", FOO, 0)],
        [group("pg-violating", LOW), group("pg-non-violating", MID)], GENERIC_WORKLOAD,
        (["g2-1"], 0), id="workload-pdb-prefer-non-violating-group-single"),
    pytest.param(
        # Failure: Cannot preempt the victim with higher priority (UnschedulableAndUnresolvable)
        ["node1"], "node1", [pod("victim", HIGH, on="node1")], pod("p", MID),
        [], [], (), None, id="failure-only-higher-priority"),
    pytest.param(
        # Failure: Cannot preempt if node is empty (UnschedulableAndUnresolvable)
        ["node1"], "node1", [], pod("p", MID), [], [], (), None, id="failure-empty-node"),
    pytest.param(
        # Cross-node PodGroup: zone anti-affinity blocks reprieve via PreFilterExtension on node-a
        ZONE1, "node-a",
        [pod("pod-x", LOW, on="node-a", group="pg1"), pod("pod-y", LOW, on="node-b", labels={"foo": ""}, group="pg1")],
        pod("p", HIGH, pod_anti_affinity=(ANTI_FOO_ZONE,)), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD,
        (["pod-x", "pod-y"], 0), id="cross-node-zone-anti-affinity-node-a"),
    pytest.param(
        # Cross-node PodGroup: zone anti-affinity blocks reprieve via PreFilterExtension on node-b
        ZONE1, "node-b",
        [pod("pod-x", LOW, on="node-a", group="pg1"), pod("pod-y", LOW, on="node-b", labels={"foo": ""}, group="pg1")],
        pod("p", HIGH, pod_anti_affinity=(ANTI_FOO_ZONE,)), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD,
        (["pod-x", "pod-y"], 0), id="cross-node-zone-anti-affinity-node-b"),
    pytest.param(
        # Cross-node PodGroup: zone anti-affinity reprieve succeeds when remote pod lacks constraint label
        # (negative control): success with no victims
        ZONE1, "node-a",
        [pod("pod-x", LOW, on="node-a", group="pg1"), pod("pod-y", LOW, on="node-b", group="pg1")],
        pod("p", HIGH, pod_anti_affinity=(ANTI_FOO_ZONE,)), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD,
        ([], 0), id="cross-node-negative-control"),
    pytest.param(
        # Cross-node PodGroup: whole pod group across multiple nodes expected to be preempted
        ["node-a", "node-b"], "node-a",
        [pod("pod-a", LOW, on="node-a", size=LARGE, group="pg1"), pod("pod-b", LOW, on="node-b", size=LARGE, group="pg1")],
        pod("p", HIGH, size=LARGE), [], [group("pg1", LOW, WHOLE)], GENERIC_WORKLOAD,
        (["pod-a", "pod-b"], 0), id="cross-node-whole-group"),
]


@pytest.mark.parametrize("nodes, main, pods, preemptor, pdbs, groups, gates, want", SELECT_VICTIMS)
def test_select_victims_on_node(nodes, main, pods, preemptor, pdbs, groups, gates, want):
    """TestSelectVictimsOnNode: the dry run on ``main`` (nodes of the very large size) succeeds with
    these victims (names) and PDB violations, or (``want`` None) finds no pod it may preempt, which
    upstream answers UnschedulableAndUnresolvable."""
    state = cluster([big_node(n) for n in nodes], [preemptor, *pods], pdbs, groups)
    v = verdict(state, preemptor.name, main, gates)
    if want is None:
        assert (v.candidate, v.reason) == (False, NO_VICTIMS)
        return
    assert v.candidate, v.reason
    assert (names(v.victims), v.pdb_violations) == want


# -- preemption_test.go: TestGetVictimsOnNode --------------------------------------------------------------

# Upstream's priorities in preemption_test.go.
P_LOW, P_MID, P_HIGH = 10, 100, 1000
ABOVE_ALL = 2**31  # GetVictimsOnNode gathers every pod of the node: a preemptor above every priority


def victims_on(state: ClusterState, node_name: str, gates) -> set[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """The victims the model weighs on ``node_name`` for a lone preemptor at 1.37: (priority, pod
    names, nodes they run on) each."""
    if not groups_on(gates):
        # Gate off: each pod of the node, at its own priority (select_victims_on_node with no units).
        return {(p.priority, (p.name,), (node_name,)) for p in state.pods_on(node_name)}
    out = set()
    for u in units_by_node(state, ABOVE_ALL, RELEASE, T0).get(node_name, []):
        pods = [state.pod_keyed(k) for k in u.keys]
        out.add((u.priority, tuple(sorted(p.name for p in pods)), tuple(sorted({p.node_name for p in pods}))))
    return out


GET_VICTIMS = [
    pytest.param(
        # GenericWorkload disabled, two pods on target node
        (), [], [pod("p1", P_MID, on="node1"), pod("p2", P_LOW, on="node1")],
        {(P_MID, ("p1",), ("node1",)), (P_LOW, ("p2",), ("node1",))}, id="gate-off-two-pods"),
    pytest.param(
        # GenericWorkload enabled, pods with no PodGroup
        GENERIC_WORKLOAD, [], [pod("p1", P_MID, on="node1"), pod("p2", P_LOW, on="node1")],
        {(P_MID, ("p1",), ("node1",)), (P_LOW, ("p2",), ("node1",))}, id="gate-on-no-pod-group"),
    pytest.param(
        # GenericWorkload enabled, pod belonging to PodGroup with disruptionMode All
        GENERIC_WORKLOAD, [group("pg1", P_MID, WHOLE)],
        [pod("p1", P_MID, on="node1", group="pg1"), pod("p2", P_MID, on="node2", group="pg1"),
         pod("p3", P_LOW, on="node1")],
        {(P_MID, ("p1", "p2"), ("node1", "node2")), (P_LOW, ("p3",), ("node1",))}, id="gate-on-group-all"),
    pytest.param(
        # GenericWorkload enabled, pods belonging to PodGroup with disruptionMode Single: each pod of the
        # group at the group's priority
        GENERIC_WORKLOAD, [group("pg1", P_MID)],
        [pod("p1", P_LOW, on="node1", group="pg1"), pod("p2", P_LOW, on="node2", group="pg1"),
         pod("p3", P_LOW, on="node1", group="pg1"), pod("p4", P_LOW, on="node1")],
        {(P_MID, ("p1",), ("node1",)), (P_MID, ("p3",), ("node1",)), (P_LOW, ("p4",), ("node1",))},
        id="gate-on-group-single"),
    pytest.param(
        # GenericWorkload enabled, mixed test with individual pods, PodGroup with DisruptionMode Single, and
        # PodGroup with DisruptionMode All
        GENERIC_WORKLOAD, [group("pg-all", P_HIGH, WHOLE), group("pg-single", P_MID)],
        [pod("p-all-1", P_HIGH, on="node1", group="pg-all"), pod("p-all-2", P_HIGH, on="node2", group="pg-all"),
         pod("p-single-1", P_LOW, on="node1", group="pg-single"), pod("p-single-2", P_LOW, on="node2", group="pg-single"),
         pod("p-ind", P_LOW, on="node1")],
        {(P_HIGH, ("p-all-1", "p-all-2"), ("node1", "node2")), (P_MID, ("p-single-1",), ("node1",)),
         (P_LOW, ("p-ind",), ("node1",))}, id="gate-on-mixed"),
]


@pytest.mark.parametrize("gates, groups, pods, want", GET_VICTIMS)
def test_get_victims_on_node(gates, groups, pods, want):
    """preemption_test.go TestGetVictimsOnNode: the victims gathered for node1 (nodes without
    capacity set; the row has no preemptor), each with its priority, its pods and their nodes."""
    state = cluster([node("node1"), node("node2")], pods, groups=groups)
    assert victims_on(state, "node1", gates) == want
