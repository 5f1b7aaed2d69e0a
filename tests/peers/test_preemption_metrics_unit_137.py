"""Peer cases: kubernetes v1.37.2 unit tests of the preemption metrics, through the model's cycle
outcomes (reference.preemption.predict, reference.podgroup.attempt) and the counts
reference.metrics derives from them:

* default_preemption_test.go TestDefaultPreemption_PodGroupPostFilter_WorkloadPreemptionAttempts
  (the success and unschedulable rows);
* preemption/preemption_test.go TestPreemptionEvaluationDurationMetric (both rows);
* preemption/podgrouppreemption_test.go TestPodGroupPreemptionEvaluationDurationMetric (the success row);
* preemption/executor_test.go TestPreemptionExecutionDurationMetric (the success row) and
  TestPrepareCandidate's three "metrics:" rows.

Each test names its upstream function and case and is the ``test:`` of that case in
peers/upstream-cases.yaml; the facts (the preemptor, its victim, which metric moves under which
labels and by how much) are the upstream rows', written anew.

How the rows map onto the model:

* Upstream stubs the evaluator (a status handed in, a plugin whose eligibility answer is handed
  in). Here the cluster is one that leads the model to that status: a high pod or pod group
  whose node is full with a lower pod (success), or a preemptor whose preemption policy is Never
  (not eligible: unschedulable).
* TestPrepareCandidate hands the executor a candidate built by hand, with counts no dry run
  would make (one victim pod, three PDB violations); here the model's candidate is built the
  same way, and the executor's observations of it (reference.metrics.executed) are checked.
  Upstream runs those rows with async preemption on and off: both here too.
* A duration histogram is checked as upstream checks it: its number of observations under the
  labels (the durations themselves are not).
"""

from __future__ import annotations

import pytest

from reference import metrics, podgroup
from reference.preemption import predict

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, cluster, group, node, pod

RELEASE = "1.37"
LOW, MID, HIGH = 0, 100, 1000  # the preemption package's priorities


def lone_preemptor(policy: str = "PreemptLowerPriority"):
    """node1 holds one pod, the mid-priority victim; the high preemptor fits nowhere."""
    state = cluster([node("node1", pods=1)], [pod("victim", MID, on="node1"),
                                              pod("preemptor", HIGH, preemption_policy=policy)])
    pr = predict(state, "default/preemptor", "upstream", T0, RELEASE)
    return state, pr


def group_preemptor(policy: str = "PreemptLowerPriority"):
    """node1 holds one pod, the low-priority victim; pod group preemptor-pg (high) has one pending pod."""
    pg = group("preemptor-pg", HIGH)
    state = cluster([node("node1", pods=1)], [pod("p2", LOW, on="node1"),
                                              pod("p1", HIGH, group=pg.name, preemption_policy=policy)], groups=[pg])
    ga = podgroup.attempt(state, pg, RELEASE, GENERIC_WORKLOAD, T0)
    return state, pg, ga


def test_workload_preemption_attempts_success():
    """TestDefaultPreemption_PodGroupPostFilter_WorkloadPreemptionAttempts, "preemption success": the
    group's PostFilter succeeds and the attempts counter grows by one under Success."""
    state, pg, ga = group_preemptor()
    assert ga.outcome == "preempt"
    seen = metrics.group_cycle(state, pg, ga, RELEASE, T0)
    assert seen.workload_preemption_attempts == (metrics.SUCCESS,)
    assert seen.preemption_attempts == 0


def test_workload_preemption_attempts_unschedulable():
    """TestDefaultPreemption_PodGroupPostFilter_WorkloadPreemptionAttempts, "preemption unschedulable":
    the group's PostFilter ends Unschedulable (here: its pods' policy is Never, so it may not preempt)
    and the attempts counter grows by one under Unschedulable; no victim search is timed."""
    state, pg, ga = group_preemptor("Never")
    assert ga.outcome == "unschedulable"
    seen = metrics.group_cycle(state, pg, ga, RELEASE, T0)
    assert seen.workload_preemption_attempts == (metrics.UNSCHEDULABLE,)
    assert seen.evaluation_durations == () and seen.workload_preemption_victims == ()


def test_pod_group_evaluation_duration_success():
    """TestPodGroupPreemptionEvaluationDurationMetric, "scheduling success": the group's victim
    search succeeds, observed once under preemptor podgroup and result Success."""
    state, pg, ga = group_preemptor()
    seen = metrics.group_cycle(state, pg, ga, RELEASE, T0)
    assert seen.evaluation_durations == ((metrics.POD_GROUP, metrics.SUCCESS),)


def test_evaluation_duration_eligible_success():
    """TestPreemptionEvaluationDurationMetric, "eligible preemptor, success": observed once under
    preemptor pod and result Success."""
    state, pr = lone_preemptor()
    assert pr.outcome == "preempt"
    seen = metrics.pod_cycle(state, pr, "node1")
    assert seen.evaluation_durations == ((metrics.POD, metrics.SUCCESS),)
    assert seen.preemption_attempts == 1


def test_evaluation_duration_ineligible_unschedulable():
    """TestPreemptionEvaluationDurationMetric, "ineligible preemptor, unschedulable": the preemptor may
    not preempt (here its policy is Never); the search is still observed once, under Unschedulable."""
    state, pr = lone_preemptor("Never")
    assert pr.outcome == "unschedulable"
    seen = metrics.pod_cycle(state, pr)
    assert seen.evaluation_durations == ((metrics.POD, metrics.UNSCHEDULABLE),)
    assert seen.execution_durations == () and seen.preemption_victims == ()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_execution_duration_success(asynchronous):
    """TestPreemptionExecutionDurationMetric, "success": the victim's delete succeeds; the execution
    is observed once under preemptor pod and result success."""
    state, pr = lone_preemptor()
    seen = metrics.pod_cycle(state, pr, "node1", asynchronous=asynchronous)
    assert seen.execution_durations == ((metrics.POD, metrics.CALLS_OK),)


HAND_BUILT = {
    # (preemptor, PDB violations, group disruptions) of the row's candidate; one victim pod each.
    "podgroup-disruptions": (metrics.POD_GROUP, 0, 2),
    "pod-pdb-violations": (metrics.POD, 3, 0),
    "podgroup-pdb-and-disruptions": (metrics.POD_GROUP, 1, 1),
}


@pytest.mark.parametrize("asynchronous", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("row", list(HAND_BUILT))
def test_prepare_candidate_metrics(row, asynchronous):
    """TestPrepareCandidate, "metrics: podgroup preemptor with workload disruptions", "metrics: pod
    preemptor with PDB violations" and "metrics: podgroup preemptor with PDB violations and
    disruptions": the victim count goes to the pod or the workload histogram by the preemptor's kind
    (and nothing to the other), the disruptions are observed once when there are any, and the PDB
    counter grows by the candidate's violations."""
    kind, violations, disruptions = HAND_BUILT[row]
    seen = metrics.executed(metrics.Candidate(kind, ("default/victim1",), violations, disruptions), asynchronous)
    workload = kind == metrics.POD_GROUP
    assert seen.workload_preemption_victims == ((1,) if workload else ())
    assert seen.preemption_victims == (() if workload else (1,))
    assert seen.workload_disruptions == (((kind, disruptions),) if disruptions else ())
    assert seen.count("pdb_violations", kind) == violations
