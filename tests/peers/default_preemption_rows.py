"""The rows of kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
whose facts are the same at v1.34.4, v1.35.8 and v1.37.2, and the checks that run them through the
model at a release: test_default_preemption_unit.py runs them at 1.34 and 1.35,
test_default_preemption_unit_137.py at 1.37 (with that release's own rows beside them). The dry-run
rows whose answer rests on upstream's seeded sample are default_preemption_sampling.py's. Each
row's id or comment names its upstream case; the builders and conventions are upstream_tables.py's.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from reference import filter as flt
from reference.cycle import success_message
from reference.objects import PREEMPT_NEVER, LabelSelector, Pod, PodAffinityTerm, Requirement
from reference.podgroup import group_key
from reference.preemption import eligible, predict
from reference.release import PREEMPTION_SUCCESS_MESSAGE, has

from tests.builders import T0
from tests.peers.upstream_tables import (
    HIGH, LARGE, LOW, MEDIUM, MID, NEG, NS, SMALL, UPSTREAM, VERY_HIGH, VERY_LARGE,
    at, big_node, budget, cluster, dry_run, false_filter, given_filters, given_statuses, groups_on, match_filter,
    names, node, pod, true_filter,
)


# -- TestPostFilter ----------------------------------------------------------------------------------------

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
]


def check_post_filter(monkeypatch, release: str, row: dict, nominated: str, victims: int, message: str | None) -> None:
    """TestPostFilter: PostFilter with the row's filter statuses nominates ``nominated``, preempting
    ``victims`` pods (from 1.37 its message says so), or, when ``nominated`` is empty, clears the
    nomination and fails with ``message``."""
    given_statuses(monkeypatch, row["codes"])
    state = cluster(row["nodes"], row["pods"], row.get("pdbs", ()))
    p = state.pod_keyed(f"{NS}/p")
    assert group_key(state, p, release, ()) == ""  # scheduled on its own
    pr = predict(state, p.key, UPSTREAM, T0, release=release)
    if nominated:
        assert (pr.outcome, pr.nodes) == ("preempt", frozenset({nominated}))
        if has(release, PREEMPTION_SUCCESS_MESSAGE):
            assert len(pr.victims[nominated]) == victims
            assert success_message(pr.message, nominated, victims, release).endswith(
                f" preemption: found a potential placement for pod on node {nominated}, preempting {victims} victims")
        return
    assert (pr.outcome, pr.nominated_node, pr.victims) == ("unschedulable", "", {})
    assert pr.message.endswith(" " + message), pr.message

# -- TestDryRunPreemption ----------------------------------------------------------------------------------

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


# Rows whose profile has one test-only filter plugin and no NodeResourcesFit (given_filters).
FAKE_FILTERS = [
    # a pod that does not fit on any node: the one filter (FalseFilter) always says Unschedulable
    pytest.param(false_filter, "p", id="does-not-fit-any-node"),
    # a pod that fits with no preemption: the one filter (TrueFilter) always passes
    pytest.param(true_filter, "p", id="fits-with-no-preemption"),
    # a pod that fits on one node with no preemption: MatchFilter passes where the pod is named as the
    # node; the preemptor is named node1
    pytest.param(match_filter, "node1", id="fits-one-node-with-no-preemption"),
]


def check_dry_run_with_test_filter(monkeypatch, plugin, preemptor: str) -> None:
    """TestDryRunPreemption with one test filter plugin: two nodes of the very large size, each with
    one mid pod (no requests); the high preemptor (no requests) finds no candidate at all."""
    given_filters(monkeypatch, plugin)
    state = cluster(TWO_NODES, [pod(preemptor, HIGH), pod("p1", MID, on="node1"), pod("p2", MID, on="node2")])
    assert dry_run(state, preemptor) == {}


# -- TestSelectBestCandidate -------------------------------------------------------------------------------

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



def check_select_best(release: str, n: int, preemptor: Pod, pods: list[Pod], best: set[str]) -> None:
    """TestSelectBestCandidate: after the dry run over every node, the node chosen is one of ``best``
    (the model's set of equally good nodes is exactly those upstream accepts)."""
    state = cluster([big_node(f"node{i}") for i in range(1, n + 1)], [preemptor, *pods])
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=release)
    assert (pr.outcome, pr.nodes) == ("preempt", frozenset(best)), pr.reasons

# -- TestPodEligibleToPreemptOthers ----------------------------------------------------------------------

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
]


def check_eligible(release: str, preemptor: Pod, pods, groups, nodes, nominated_status, gates, want: bool) -> None:
    """TestPodEligibleToPreemptOthers: whether the pod may preempt at all."""
    state = cluster([node(n) for n in nodes], [preemptor, *pods], groups=groups)
    ok, _ = eligible(state, preemptor, UPSTREAM, nominated_status, groups_on(release, gates))
    assert ok is want

# -- TestPreempt -------------------------------------------------------------------------------------------

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



def check_preempt(monkeypatch, release: str, policy: str | None, nominated: str | None, victims: list[str]) -> None:
    """TestPreempt: with every node given as Unschedulable, the preemptor is nominated to
    ``nominated`` and exactly ``victims`` are preempted (none, and no nomination, when it may not
    preempt). Then, with its victims terminating by preemption and itself nominated there, a second
    attempt, given no node statuses, preempts nobody more."""
    nodes = [big_node(f"node{i}") for i in (1, 2, 3)]
    state = cluster(nodes, _preempt_pods(policy))
    given_statuses(monkeypatch, {n.name: flt.UNSCHEDULABLE for n in nodes})
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=release)
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
    again = predict(after, f"{NS}/p", UPSTREAM, T0 + timedelta(seconds=1), release=release)
    assert again.outcome != "preempt" and not again.victims
