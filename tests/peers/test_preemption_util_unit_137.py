"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/preemption/util_test.go, through the model's
victims (reference.victim: Unit, pdb_verdicts, pod_priority) and DefaultPreemption's wait rule
(reference.preemption). Each test names its upstream function and case, and is the ``test:`` of
that case (release 1.37.2) in peers/upstream-cases.yaml; the facts (pods, labels, budgets,
priorities, group sizes, start times, conditions, expected answers) are the upstream rows', written
anew. An upstream victim is the model's ``Unit``: a lone pod, or the pods of a pod group (its key
type PodGroup, ``grouped``) or of a composite pod group (its key type CompositePodGroup,
``composite``). Upstream's listers are the model's state: a PodGroup or CompositePodGroup the lister
holds is one of the state's; a nil CompositePodGroup lister is the CompositePodGroup gate off
(``composite=False``: the scheduler lists none).
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from kubernetes import client

from reference.objects import LabelSelector, Pod, PodDisruptionBudget
from reference.victim import COMPOSITE as CPG_KEY, GROUP as PG_KEY, POD as POD_KEY, Unit, pdb_verdicts, pod_priority, walk_up

from harness.kube import disrupted_by_preemption
from tests.builders import T0
from tests.peers.upstream_tables import UPSTREAM, cluster, composite, group, node, pod, verdict

RELEASE = "1.37"

NS = "default"


# -- TestFilterVictimsWithPDBViolation ---------------------------------------------------------------------

def _pod(name: str, ns: str = NS, **labels: str) -> Pod:
    return Pod(name, ns, labels=tuple(sorted(labels.items())))


def _pdb(allowed: int, disrupted=(), **labels: str) -> PodDisruptionBudget:
    return PodDisruptionBudget("pdb", NS, LabelSelector(tuple(sorted(labels.items()))), allowed, tuple(disrupted))


P1_NO_NS = _pod("p1", "", app="foo")  # the victim that names no namespace
P1, P2 = _pod("p1", app="foo"), _pod("p2", app="foo")
P1_TWO_LABELS = _pod("p1", app="foo", tier="backend")

# Each victim: its name in the row and its pods.
NO_MATCH, MATCH, MATCH2, GROUP, MULTI = (("no-match", (P1_NO_NS,)), ("match", (P1,)), ("match2", (P2,)),
                                         ("group", (P1, P2)), ("multi", (P1_TWO_LABELS,)))

FILTER_PDB = [
    # no victims, no PDBs
    pytest.param([], [], [], [], id="no-victims-no-pdbs"),
    # victim with no matching PDBs: the budget selects app=bar (and the victim names no namespace)
    pytest.param([NO_MATCH], [_pdb(0, app="bar")], [], ["no-match"], id="victim-no-matching-pdb"),
    # victim matching PDB, adequate DisruptionsAllowed
    pytest.param([MATCH], [_pdb(1, app="foo")], [], ["match"], id="matching-pdb-adequate-allowed"),
    # victim matching PDB, no DisruptionsAllowed
    pytest.param([MATCH], [_pdb(0, app="foo")], [("match", 1)], [], id="matching-pdb-none-allowed"),
    # podgroup victim with multiple pods, all violating: two pods, no disruption allowed
    pytest.param([GROUP], [_pdb(0, app="foo")], [("group", 2)], [], id="podgroup-all-violating"),
    # podgroup victim with multiple pods, none violating: two pods, two disruptions allowed
    pytest.param([GROUP], [_pdb(2, app="foo")], [], ["group"], id="podgroup-none-violating"),
    # multiple victims matching the same PDB: one disruption allowed, spent by the first
    pytest.param([MATCH, MATCH2], [_pdb(1, app="foo")], [("match2", 1)], ["match"], id="same-pdb-spent-in-order"),
    # pod in DisruptedPods is ignored: no disruption allowed, but p1 is already counted as disrupted
    pytest.param([MATCH], [_pdb(0, disrupted=("p1",), app="foo")], [], ["match"], id="disrupted-pod-ignored"),
    # PDB with empty selector: it matches nothing
    pytest.param([MATCH], [_pdb(0)], [], ["match"], id="empty-selector"),
    # Multiple PDBs: app=foo allows one, tier=backend none; the pod counts once as violating
    pytest.param([MULTI], [_pdb(1, app="foo"), _pdb(0, tier="backend")], [("multi", 1)], [], id="multiple-pdbs"),
]


@pytest.mark.parametrize("victims, pdbs, violating, fine", FILTER_PDB)
def test_filter_victims_with_pdb_violation(victims, pdbs, violating, fine):
    """TestFilterVictimsWithPDBViolation: the victims, in order, split into those that would violate a
    budget (with how many of their pods do) and those that would not."""
    pods = dict(victims)
    got = list(pdb_verdicts([name for name, _ in victims], tuple(pdbs), pods_of=pods.__getitem__))
    assert [(name, n) for name, n in got if n] == violating
    assert [name for name, n in got if not n] == fine


# -- TestMoreImportantVictim -------------------------------------------------------------------------------

NOW, BEFORE = (datetime.fromtimestamp(s, timezone.utc) for s in (1000, 500))


def unit(priority: int, pods: int = 1, grouped: bool = False, start: datetime = NOW, cpg: bool = False) -> Unit:
    """A victim of ``pods`` pods (a pod group's when ``grouped``, a composite pod group's when
    ``cpg``), started at ``start`` (the rows that give no start time give both victims the same one)."""
    return Unit(tuple(f"default/p{i}" for i in range(pods)), priority, grouped or cpg, start, cpg)


MORE_IMPORTANT = [
    pytest.param(unit(20, 0), unit(10, 0), True, id="vi1-higher-priority"),
    pytest.param(unit(10, 0), unit(20, 0), False, id="vi2-higher-priority"),
    pytest.param(unit(10, grouped=True), unit(10), True, id="vi1-pod-group-vi2-pod"),
    pytest.param(unit(10), unit(10, grouped=True), False, id="vi1-pod-vi2-pod-group"),
    pytest.param(unit(10, start=BEFORE), unit(10, start=NOW), True, id="both-pods-vi1-older"),
    pytest.param(unit(10, start=NOW), unit(10, start=BEFORE), False, id="both-pods-vi2-older"),
    pytest.param(unit(10, 2, True), unit(10, 1, True), True, id="both-pod-groups-vi1-larger"),
    pytest.param(unit(10, 1, True), unit(10, 2, True), False, id="both-pod-groups-vi2-larger"),
    pytest.param(unit(10, 2, True, BEFORE), unit(10, 2, True, NOW), True, id="both-pod-groups-same-size-vi1-older"),
    pytest.param(unit(10, 2, True, NOW), unit(10, 2, True, BEFORE), False, id="both-pod-groups-same-size-vi2-older"),
    # composite pod groups (a victim of one pod each unless the row says otherwise)
    pytest.param(unit(10, cpg=True), unit(10), True, id="cpg-over-pod"),
    pytest.param(unit(10), unit(10, cpg=True), False, id="pod-under-cpg"),
    pytest.param(unit(10, cpg=True), unit(10, grouped=True), True, id="cpg-over-pg"),
    pytest.param(unit(10, grouped=True), unit(10, cpg=True), False, id="pg-under-cpg"),
    pytest.param(unit(10, cpg=True), unit(20, grouped=True), False, id="cpg-under-higher-pg"),
    pytest.param(unit(20, grouped=True), unit(10, cpg=True), True, id="higher-pg-over-cpg"),
    # the kind ranks before the size: a one-pod composite group's victim over a two-pod pod group's
    pytest.param(unit(10, cpg=True), unit(10, 2, True), True, id="cpg-rank-over-size"),
    # and before the start: a composite group's victim started later over a pod group's started before
    pytest.param(unit(10, cpg=True, start=NOW), unit(10, grouped=True, start=BEFORE), True, id="cpg-rank-over-start"),
    pytest.param(unit(10, 2, cpg=True), unit(10, 1, cpg=True), True, id="both-cpgs-vi1-larger"),
    pytest.param(unit(10, 1, cpg=True), unit(10, 2, cpg=True), False, id="both-cpgs-vi2-larger"),
    pytest.param(unit(10, cpg=True, start=BEFORE), unit(10, cpg=True, start=NOW), True, id="both-cpgs-vi1-older"),
    pytest.param(unit(10, cpg=True, start=NOW), unit(10, cpg=True, start=BEFORE), False, id="both-cpgs-vi2-older"),
]


@pytest.mark.parametrize("vi1, vi2, want", MORE_IMPORTANT)
def test_more_important_victim(vi1, vi2, want):
    """TestMoreImportantVictim: whether vi1 is the more important (spared first) of the two."""
    assert (vi1.importance() < vi2.importance()) is want


# -- TestPodTerminatingByPreemption ------------------------------------------------------------------------

def _api_pod(terminating: bool, condition: tuple[str, str] | None) -> client.V1Pod:
    """An API pod p1, deleted or not, with a DisruptionTarget condition of (status, reason) or none."""
    conditions = [client.V1PodCondition(type="DisruptionTarget", status=condition[0], reason=condition[1])] \
        if condition else None
    return client.V1Pod(metadata=client.V1ObjectMeta(name="p1", deletion_timestamp=T0 if terminating else None),
                        status=client.V1PodStatus(conditions=conditions))


BY_PREEMPTION = "PreemptionByScheduler"
TERMINATING = [
    pytest.param(False, None, False, id="no-deletion-timestamp"),
    pytest.param(True, None, False, id="deletion-timestamp-no-condition"),
    pytest.param(True, ("False", BY_PREEMPTION), False, id="condition-status-false"),
    pytest.param(True, ("True", "SomeOtherReason"), False, id="condition-other-reason"),
    pytest.param(True, ("True", BY_PREEMPTION), True, id="condition-true-by-preemption"),
]


@pytest.mark.parametrize("terminating, condition, want", TERMINATING)
def test_pod_terminating_by_preemption(terminating, condition, want):
    """TestPodTerminatingByPreemption: the API pod read into the model (harness.kube reads its
    condition), it is terminating by preemption, so it makes a higher-priority preemptor
    nominated to its node wait, exactly when upstream says so."""
    api = _api_pod(terminating, condition)
    p = pod("p1", 0, on="node1", deletion_timestamp=api.metadata.deletion_timestamp,
            disruption_target_by_preemption=disrupted_by_preemption(api))
    assert UPSTREAM.terminating_blocks(p, pod("preemptor", 1000, nominated_node_name="node1"), p.priority) is want


# -- TestGetPodPriority ------------------------------------------------------------------------------------

GET_PRIORITY = [
    # pod without PodGroup returns pod priority
    pytest.param(pod("p1", 10), [], 10, id="no-pod-group"),
    # pod with PodGroup returns PodGroup priority instead of pod priority
    pytest.param(pod("p2", 10, group="pg1"), [group("pg1", 50)], 50, id="pod-group-priority"),
    # pod with PodGroup but PodGroup not found in lister falls back to pod priority
    pytest.param(pod("p5", 30, group="missing-pg"), [], 30, id="pod-group-not-found"),
    # pod with nil priority and without PodGroup returns zero priority
    pytest.param(Pod("p6"), [], 0, id="nil-priority"),
]


@pytest.mark.parametrize("p, groups, want", GET_PRIORITY)
def test_get_pod_priority(p, groups, want):
    """TestGetPodPriority: the priority the pod counts at as a victim."""
    assert pod_priority(cluster([], [p], groups=groups), p) == want


# The rows with composite pod groups: the pod's priority, its pod group (pg1, unless the row names
# another), the row's CompositePodGroups (None: the lister is nil, the gate off) and the answer.
GET_PRIORITY_COMPOSITE = [
    # parent composite group cpg1 at 150 (pg1 has no priority): its root's
    pytest.param(10, [group("pg1", 0, parent="cpg1")], [composite("cpg1", 150)], 150, id="parent-cpg"),
    # pg1 -> cpg1 (no priority) -> cpg2 at 250: the grandparent's
    pytest.param(10, [group("pg1", 0, parent="cpg1")], [composite("cpg1", parent="cpg2"), composite("cpg2", 250)], 250,
                 id="grandparent-cpg"),
    # pg1 at 50 names cpg1, but no composite lister: the pod group's
    pytest.param(10, [group("pg1", 50, parent="cpg1")], None, 50, id="cpg-lister-nil"),
    # pg1 at 50 names cpg1, which the lister lacks: the pod group's
    pytest.param(10, [group("pg1", 50, parent="cpg1")], [], 50, id="parent-cpg-missing"),
    # pg1 at 50 -> cpg1 at 150 -> a missing cpg2: the last found, cpg1's
    pytest.param(10, [group("pg1", 50, parent="cpg1")], [composite("cpg1", 150, parent="missing-cpg2")], 150,
                 id="grandparent-cpg-missing"),
    # the pod (at 50) names a pod group the lister lacks, composite lister present: the pod's own
    pytest.param(50, [], [], 50, id="pg-missing-cpg-lister-set"),
]


@pytest.mark.parametrize("own, groups, composites, want", GET_PRIORITY_COMPOSITE)
def test_get_pod_priority_composite(own, groups, composites, want):
    """TestGetPodPriority, the rows with composite pod groups: the priority of the pod's root group,
    as far as its lineage is found."""
    p = pod("p", own, group=groups[0].name if groups else "missing-pg")
    state = cluster([], [p], groups=groups, composites=composites or ())
    assert pod_priority(state, p, composite=composites is not None) == want


# -- TestTraverseHierarchyUp -------------------------------------------------------------------------------

CHAIN = [composite("cpg1", parent="cpg2"), composite("cpg2")]
TRAVERSE = [
    # no PodGroup lister (GenericWorkload off): nothing visited
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0)], [], dict(groups=False, composite=False), "", [], id="pg-lister-nil"),
    # no CompositePodGroup lister (its gate off): nothing visited
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0)], [], dict(composite=False), "", [], id="cpg-lister-nil"),
    # a pod's key starts no walk
    pytest.param((POD_KEY, "p1"), [], [], {}, "", [], id="pod-key"),
    # a pod group with no parent: itself
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0)], [], {}, "", [(PG_KEY, "pg1")], id="pg-alone"),
    # pg1 -> cpg1 -> cpg2
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0, parent="cpg1")], CHAIN, {}, "",
                 [(PG_KEY, "pg1"), (CPG_KEY, "cpg1"), (CPG_KEY, "cpg2")], id="pg-parent-grandparent"),
    # from a composite group: cpg1 -> cpg2
    pytest.param((CPG_KEY, "cpg1"), [], CHAIN, {}, "", [(CPG_KEY, "cpg1"), (CPG_KEY, "cpg2")], id="from-cpg"),
    # the visitor stops at cpg1
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0, parent="cpg1")], CHAIN, {}, "cpg1",
                 [(PG_KEY, "pg1"), (CPG_KEY, "cpg1")], id="stop-at-cpg1"),
    # cpg1 and cpg2 name each other: each visited once
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0, parent="cpg1")],
                 [composite("cpg1", parent="cpg2"), composite("cpg2", parent="cpg1")], {}, "",
                 [(PG_KEY, "pg1"), (CPG_KEY, "cpg1"), (CPG_KEY, "cpg2")], id="cycle"),
    # the starting pod group is missing: nothing visited
    pytest.param((PG_KEY, "missing-pg"), [], [], {}, "", [], id="pg-missing"),
    # pg1's parent is missing: pg1 alone
    pytest.param((PG_KEY, "pg1"), [group("pg1", 0, parent="missing-cpg")], [], {}, "", [(PG_KEY, "pg1")],
                 id="parent-cpg-missing"),
]


@pytest.mark.parametrize("start, groups, composites, listers, stop_at, want", TRAVERSE)
def test_traverse_hierarchy_up(start, groups, composites, listers, stop_at, want):
    """TestTraverseHierarchyUp: the groups visited, in order, walking up from the start key."""
    state = cluster([], [], groups=groups, composites=composites)
    got = walk_up(state, "default", *start, stop_at=stop_at, **listers)
    assert [(kind, g.name) for kind, g in got] == want


def test_get_pod_priority_without_pod_group_lister():
    """TestGetPodPriority, "pod with PodGroup but nil PodGroupLister falls back to pod priority": p4
    (priority 20) names pod group pg1. Upstream passes no lister where GenericWorkload is off
    (GetVictimsOnNode), and the model then weighs each pod on the node at its own priority: p4
    counts at 20, so a preemptor at 21 may take it and one at 20 may not."""
    for preemptor, victims in ((21, ("default/p4",)), (20, ())):
        state = cluster([node("node1", pods=1)], [pod("p", preemptor), pod("p4", 20, on="node1", group="pg1")])
        assert verdict(state, "p", "node1", RELEASE).victims == victims
