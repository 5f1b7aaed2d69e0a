"""kube-scheduler's preemption metrics, as what one scheduling cycle adds to them.

The model does not time anything: a histogram is kept as its observations' labels and values (a
duration histogram's value is of no interest, only that, and under which labels, it was observed).
Each function maps one of the model's cycle outcomes (a ``preemption.Prediction`` and the node the
cycle chose, or a ``podgroup.GroupAttempt``) to the observations upstream makes in that cycle, where
upstream makes them (1.37.2; ``pkg/scheduler/metrics/metrics.go`` defines them):

* ``scheduler_preemption_attempts_total``: once per DefaultPreemption PostFilter call, i.e. per
  cycle of a lone pod that fits no node (default_preemption.go PostFilter). A cycle that finds no
  node at all ends before PostFilter (ErrNoNodesAvailable).
* ``scheduler_workload_preemption_attempts_total{result}``: once per PodGroupPostFilter call, under
  its status code (default_preemption.go PodGroupPostFilter).
* ``scheduler_preemption_evaluation_duration_seconds{preemptor,result}``: once per victim search,
  under its status code (preemption.go evaluate for a pod, podgrouppreemption.go evaluate for a
  pod group); a pod not eligible to preempt still counts (evaluate checks eligibility itself), a
  group not eligible, or whose preemption is ongoing, does not (Preempt checks those first).
* At the chosen candidate (executor.go observeVictims, before any API call):
  ``scheduler_preemption_victims`` (a pod preemptor) or ``scheduler_workload_preemption_victims``
  (a pod group) observes the number of victim pods; ``scheduler_preemption_workload_disruptions
  {preemptor}`` observes the number of victims that are pod groups' (units, a group disrupted as a
  whole counting once), when there is any; ``scheduler_preemption_pdb_violations_total{preemptor}``
  grows by the candidate's PDB violations.
* ``scheduler_preemption_execution_duration_seconds{preemptor,result}``: once per preemption that
  sends calls, under "success" or "error" (executor.go prepareCandidate; with async preemption,
  prepareCandidateAsync observes it only when some victim is not already being deleted). The
  model's calls always succeed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime

from . import filter as flt
from .objects import ClusterState, PodGroup
from .podgroup import GroupAttempt
from .preemption import NO_NODES, Prediction
from .victim import Unit, pdb_verdicts, victim_units

POD, POD_GROUP = "pod", "podgroup"  # the preemptor label (fwk.PodKeyType, fwk.PodGroupKeyType)
SUCCESS, UNSCHEDULABLE, ERROR = "Success", "Unschedulable", "Error"  # status codes as labels
CALLS_OK, CALLS_FAILED = "success", "error"  # metrics.GoroutineResultSuccess / ...Error


@dataclass(frozen=True)
class Candidate:
    """What the executor is handed (preemption.Candidate): the victim pods, the PDB violations
    their removal makes, and how many of the victims are pod groups'."""

    preemptor: str  # POD or POD_GROUP
    victims: tuple[str, ...]
    pdb_violations: int = 0
    group_disruptions: int = 0
    already_terminating: int = 0  # victims whose deletion has begun: no call is sent for them


@dataclass(frozen=True)
class Observations:
    """What a cycle adds: a counter as its increment, a histogram as its observations."""

    preemption_attempts: int = 0
    workload_preemption_attempts: tuple[str, ...] = ()  # result label of each increment
    evaluation_durations: tuple[tuple[str, str], ...] = ()  # (preemptor, result) of each observation
    execution_durations: tuple[tuple[str, str], ...] = ()  # (preemptor, result)
    preemption_victims: tuple[int, ...] = ()
    workload_preemption_victims: tuple[int, ...] = ()
    workload_disruptions: tuple[tuple[str, int], ...] = ()  # (preemptor, value)
    pdb_violations: tuple[tuple[str, int], ...] = ()  # (preemptor, amount added)

    def __add__(self, other: Observations) -> Observations:
        return Observations(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def count(self, name: str, label=None) -> int:
        """A counter's increase, or a histogram's number of observations, under ``label`` (None: all)."""
        value = getattr(self, name)
        if isinstance(value, int):
            return value
        if name == "pdb_violations":
            return sum(n for who, n in value if label is None or who == label)
        return sum(1 for v in value if label is None or v == label or (isinstance(v, tuple) and v[0] == label))


def executed(candidate: Candidate, asynchronous: bool = True, calls_ok: bool = True) -> Observations:
    """The executor's observations for the chosen candidate (observeVictims, then the execution)."""
    n = len(candidate.victims)
    workload = candidate.preemptor != POD
    sends = len(candidate.victims) > candidate.already_terminating
    return Observations(
        preemption_victims=() if workload else (n,),
        workload_preemption_victims=(n,) if workload else (),
        workload_disruptions=((candidate.preemptor, candidate.group_disruptions),) if candidate.group_disruptions else (),
        pdb_violations=((candidate.preemptor, candidate.pdb_violations),) if candidate.pdb_violations else (),
        execution_durations=((candidate.preemptor, CALLS_OK if calls_ok else CALLS_FAILED),)
        if sends or not asynchronous else (),
    )


def _failed_with_error(pr: Prediction) -> bool:
    # A node the dry run could not judge (an error status, which DryRunPreemption gathers): when no
    # candidate is left, evaluate returns that error.
    return any(v.reason.startswith(("error:", "expected at least one victim pod")) for v in pr.per_node
               if v.filter.code != flt.UNRESOLVABLE)


def pod_candidate(state: ClusterState, pr: Prediction, node: str) -> Candidate:
    """The candidate a lone pod's preemption hands the executor: the chosen node's victims and PDB
    violations. A pod's candidate never counts pod-group disruptions (DryRunPreemption leaves
    numPodGroupDisruptions unset; only pod-group preemption sets it)."""
    verdict = next(v for v in pr.per_node if v.node == node)
    terminating = sum(1 for k in pr.victims[node] if (p := state.pod_keyed(k)) is not None and p.terminating)
    return Candidate(POD, pr.victims[node], verdict.pdb_violations, 0, terminating)


def pod_cycle(state: ClusterState, pr: Prediction, node: str = "", asynchronous: bool = True) -> Observations:
    """What one attempt of a lone pod adds (``state``: the cluster before it; ``node``: the node
    the cycle chose when it preempted)."""
    if pr.outcome == "schedule" or pr.message == NO_NODES:
        return Observations()
    if pr.outcome == "preempt":
        result = SUCCESS
    else:
        result = ERROR if not any(v.candidate for v in pr.per_node) and _failed_with_error(pr) else UNSCHEDULABLE
    seen = Observations(preemption_attempts=1, evaluation_durations=((POD, result),))
    if pr.outcome == "preempt":
        seen += executed(pod_candidate(state, pr, node or sorted(pr.nodes)[0]), asynchronous)
    return seen


def group_candidate(state: ClusterState, group: PodGroup, ga: GroupAttempt, release: str, now: datetime) -> Candidate:
    """The candidate a pod group's preemption hands the executor: its victim pods, the victims
    that are pod groups' (IsGroup: a group disrupted as a whole, or a pod that names a group), and
    the PDB violations of the units it preempts, budgets spent in the units' order of importance
    (podgrouppreemption.go selectVictimsOnDomain)."""
    chosen = set(ga.victims)
    units = sorted(victim_units(state, group.priority, release, now), key=Unit.importance)
    taken = [u for u in units if chosen.issuperset(u.keys)]
    violations = sum(n for u, n in pdb_verdicts(units, state.pdbs, state.pods,
                                                lambda u: [state.pod_keyed(k) for k in u.keys]) if u in taken)
    terminating = sum(1 for k in ga.victims if (p := state.pod_keyed(k)) is not None and p.terminating)
    return Candidate(POD_GROUP, ga.victims, violations, sum(u.grouped for u in taken), terminating)


def group_cycle(state: ClusterState, group: PodGroup, ga: GroupAttempt, release: str, now: datetime,
                asynchronous: bool = True) -> Observations:
    """What one pod-group cycle adds (``state``: the cluster before it)."""
    if not ga.post_filter:
        return Observations()
    seen = Observations(workload_preemption_attempts=(ga.post_filter,),
                        evaluation_durations=((POD_GROUP, ga.evaluation),) if ga.evaluation else ())
    if ga.outcome == "preempt":
        seen += executed(group_candidate(state, group, ga, release, now), asynchronous)
    return seen


__all__ = ["CALLS_FAILED", "CALLS_OK", "Candidate", "ERROR", "Observations", "POD", "POD_GROUP", "SUCCESS",
           "UNSCHEDULABLE", "executed", "group_candidate", "group_cycle", "pod_candidate", "pod_cycle"]
