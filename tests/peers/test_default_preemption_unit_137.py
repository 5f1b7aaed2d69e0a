"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/plugins/defaultpreemption
default_preemption_test.go and pkg/scheduler/framework/preemption/preemption_test.go
(TestGetVictimsOnNode), through the model's preemption (reference.preemption, reference.candidates,
reference.victim) at release "1.37". Each test names its upstream function and case, and is the
``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts (capacities,
requests, priorities, start times, labels, pod groups, budgets, expected victims, nodes and
messages) are the upstream rows', written anew.

The rows 1.35.8 has too are default_preemption_rows.py's and default_preemption_sampling.py's;
this file adds 1.37.2's own. Builders, conventions (units, start times, given filter statuses,
GenericWorkload) and harness are upstream_tables.py's. Rows that register test-only filter plugins
in place of the real ones (TestDryRunPreemption's FalseFilter, TrueFilter, MatchFilter) give the
model the same filter set (``given_filters``): for that call the model's pod-dependent filters are
that one plugin, as upstream's profile has only it.
"""

from __future__ import annotations

import pytest

from reference import filter as flt
from reference.objects import ClusterState, LabelSelector, PodAffinityTerm, Requirement
from reference.preemption import eligible
from reference.victim import COMPOSITE as CPG_KEY, GROUP as PG_KEY, composite_on, units_by_node

from tests.builders import T0
from tests.peers.default_preemption_rows import (
    DRY_RUN,
    ELIGIBLE,
    FAKE_FILTERS,
    FOO,
    GONE,
    NO_VICTIMS,
    ONE_POD,
    POST_FILTER,
    PREEMPT,
    SELECT_BEST,
    check_dry_run_with_test_filter,
    check_eligible,
    check_post_filter,
    check_preempt,
    check_select_best,
)
from tests.peers.default_preemption_sampling import (
    LIMITED,
    check_dry_run_limited_by_args,
    check_dry_run_looks_past_num_candidates,
)
from tests.peers.upstream_tables import (
    COMPOSITE,
    GENERIC_WORKLOAD,
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    SMALL,
    UPSTREAM,
    VERY_HIGH,
    big_node,
    budget,
    cluster,
    composite,
    dry_run,
    group,
    groups_on,
    names,
    node,
    pod,
    verdict,
)

RELEASE = "1.37"


# -- TestPostFilter (default_preemption_test.go) ---------------------------------------------------------

POST_FILTER_137 = POST_FILTER + [
    pytest.param(
        # pod with SchedulingGroup with GenericWorkload and TAS disabled should preempt: the preemptor
        # names pod group "foo" (which does not exist); with the gates off it is a lone pod
        dict(nodes=[node("node1", **ONE_POD)], pods=[pod("p", HIGH, group="foo"), pod("p1", on="node1")],
             codes={"node1": flt.UNSCHEDULABLE}),
        "node1", 1, None, id="scheduling-group-gates-off-preempts"),
]


@pytest.mark.parametrize("row, nominated, victims, message", POST_FILTER_137)
def test_post_filter(monkeypatch, row, nominated, victims, message):
    """TestPostFilter: PostFilter with the row's filter statuses nominates ``nominated``, preempting
    ``victims`` pods, with 1.37's success message (or, when empty, clears the nomination and fails
    with ``message``)."""
    check_post_filter(monkeypatch, RELEASE, row, nominated, victims, message)


# -- TestDryRunPreemption (default_preemption_test.go) ----------------------------------------------------


@pytest.mark.parametrize("nodes, pods, pdbs, candidates", DRY_RUN)
def test_dry_run_preemption(nodes, pods, pdbs, candidates):
    """TestDryRunPreemption: the dry run over every node finds these candidates (victims, PDB violations)."""
    assert dry_run(cluster(nodes, pods, pdbs), "p") == candidates


@pytest.mark.parametrize("plugin, preemptor", FAKE_FILTERS)
def test_dry_run_preemption_with_test_filter(monkeypatch, plugin, preemptor):
    """TestDryRunPreemption, the rows whose profile has one test filter plugin and no NodeResourcesFit."""
    check_dry_run_with_test_filter(monkeypatch, plugin, preemptor)


def test_dry_run_looks_past_num_candidates_for_a_pdb_clean_node():
    """TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB violating node is found"."""
    check_dry_run_looks_past_num_candidates(RELEASE)


@pytest.mark.parametrize("higher, returned", LIMITED)
def test_dry_run_limited_by_preemption_args(higher, returned):
    """TestDryRunPreemption, the rows whose DefaultPreemptionArgs limit the dry run to 2 candidates."""
    check_dry_run_limited_by_args(RELEASE, higher, returned)


# -- TestSelectBestCandidate (default_preemption_test.go) --------------------------------------------------

@pytest.mark.parametrize("n, preemptor, pods, best", SELECT_BEST)
def test_select_best_candidate(n, preemptor, pods, best):
    """TestSelectBestCandidate: the node chosen is one of ``best``."""
    check_select_best(RELEASE, n, preemptor, pods, best)


# -- TestPodEligibleToPreemptOthers (default_preemption_test.go) -------------------------------------------

ELIGIBLE_137 = ELIGIBLE + [
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


@pytest.mark.parametrize("preemptor, pods, groups, nodes, nominated_status, gates, want", ELIGIBLE_137)
def test_pod_eligible_to_preempt_others(preemptor, pods, groups, nodes, nominated_status, gates, want):
    """TestPodEligibleToPreemptOthers: whether the pod may preempt at all."""
    check_eligible(RELEASE, preemptor, pods, groups, nodes, nominated_status, gates, want)


# The rows with composite pod groups (GenericWorkload and CompositePodGroup on): the preemptor (ns1,
# high, group pg1, nominated to node1) finds there v1 (ns2, very high, terminating by preemption) of
# the row's pod group in ns2; the row's pod groups and composite groups are in ns2.
ELIGIBLE_COMPOSITE = [
    # pg1 (low) -> cpg1 (low): v1 counts at low, below the preemptor: it waits
    pytest.param("pg1", [group("pg1", LOW, ns="ns2", parent="cpg1")], [composite("cpg1", LOW, ns="ns2")], False,
                 id="victim-priority-from-its-cpg"),
    # pg1 (low) names cpg1, which does not exist: v1 counts at pg1's low: it waits
    pytest.param("pg1", [group("pg1", LOW, ns="ns2", parent="cpg1")], [], False, id="cpg-missing-pg-priority"),
    # no pod group pg1 in ns2: v1 counts at its own very high, above the preemptor: it may preempt
    pytest.param("pg1", [], [], True, id="pg-missing-pod-priority"),
    # leaf-pg (very high) -> child-cpg (very high) -> root-cpg (low): v1 counts at the root's low: it waits
    pytest.param("leaf-pg", [group("leaf-pg", VERY_HIGH, ns="ns2", parent="child-cpg")],
                 [composite("child-cpg", VERY_HIGH, ns="ns2", parent="root-cpg"), composite("root-cpg", LOW, ns="ns2")],
                 False, id="victim-priority-from-root-cpg"),
]


@pytest.mark.parametrize("victim_group, groups, composites, want", ELIGIBLE_COMPOSITE)
def test_pod_eligible_to_preempt_others_composite(victim_group, groups, composites, want):
    """TestPodEligibleToPreemptOthers, the rows with composite pod groups: whether the pod may preempt
    at all, the terminating victim on its nominated node counting at its root group's priority."""
    preemptor = pod("p", HIGH, ns="ns1", group="pg1", nominated_node_name="node1")
    v1 = pod("v1", VERY_HIGH, ns="ns2", on="node1", group=victim_group, deletion_timestamp=GONE,
             disruption_target_by_preemption=True)
    state = cluster([node("node1")], [preemptor, v1], groups=groups, composites=composites)
    ok, _ = eligible(state, preemptor, UPSTREAM, None, groups_on(RELEASE, COMPOSITE), composite_on(RELEASE, COMPOSITE))
    assert ok is want


# -- TestPreempt (default_preemption_test.go) --------------------------------------------------------------

@pytest.mark.parametrize("policy, nominated, victims", PREEMPT)
def test_preempt(monkeypatch, policy, nominated, victims):
    """TestPreempt: the preemptor's nomination and victims, then no second preemption."""
    check_preempt(monkeypatch, RELEASE, policy, nominated, victims)



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
    v = verdict(state, preemptor.name, main, RELEASE, gates)
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
    if not groups_on(RELEASE, gates):
        # Gate off: each pod of the node, at its own priority (select_victims_on_node with no units).
        return {(p.priority, (p.name,), (node_name,)) for p in state.pods_on(node_name)}
    out = set()
    for u in units_by_node(state, ABOVE_ALL, RELEASE, T0, gates).get(node_name, []):
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


# The rows with composite pod groups: cpg1 at mid priority over pg1 and pg2 (low), p1 of pg1 on node1
# and p2 of pg2 on node2, both low; each victim of node1 also with its kind (upstream's key type).
CPG_ROWS = [
    # CPG enabled, cpg1 disrupted as a whole: one victim of p1 and p2, at cpg1's priority, a composite group's
    pytest.param(COMPOSITE, WHOLE, "single", {(P_MID, ("p1", "p2"), ("node1", "node2"), CPG_KEY)},
                 id="cpg-on-root-all"),
    # CPG enabled, cpg1 single: p1 alone, at its root cpg1's priority, a pod group's
    pytest.param(COMPOSITE, "single", "single", {(P_MID, ("p1",), ("node1",), PG_KEY)}, id="cpg-on-root-single"),
    # CPG disabled (cpg1 all, pg1 and pg2 single): p1 alone at pg1's priority, a pod group's
    pytest.param(GENERIC_WORKLOAD, WHOLE, "single", {(P_LOW, ("p1",), ("node1",), PG_KEY)}, id="cpg-off"),
]


@pytest.mark.parametrize("gates, cpg_mode, pg_mode, want", CPG_ROWS)
def test_get_victims_on_node_composite(gates, cpg_mode, pg_mode, want):
    """preemption_test.go TestGetVictimsOnNode, the rows with composite pod groups: node1's victims,
    each with its priority, its pods, their nodes and its kind."""
    groups = [group("pg1", P_LOW, pg_mode, parent="cpg1"), group("pg2", P_LOW, pg_mode, parent="cpg1")]
    state = cluster([node("node1"), node("node2")],
                    [pod("p1", P_LOW, on="node1", group="pg1"), pod("p2", P_LOW, on="node2", group="pg2")],
                    groups=groups, composites=[composite("cpg1", P_MID, cpg_mode)])
    got = {(u.priority, tuple(sorted(state.pod_keyed(k).name for k in u.keys)),
            tuple(sorted({state.pod_keyed(k).node_name for k in u.keys})), u.kind)
           for u in units_by_node(state, ABOVE_ALL, RELEASE, T0, gates).get("node1", [])}
    assert got == want
