"""Pod groups: gang scheduling and workload-aware preemption (1.36 alpha, 1.37 beta).

A pod that names a PodGroup is not scheduled on its own: the scheduler takes every pending pod
of the group in one pod-group cycle (``schedule_one_podgroup.go``), places them one after another
on one snapshot (each placed pod taking its room), and binds them only if the group as a whole
succeeds: for a gang, ``minCount`` pods placed or already running. When the cycle fails, the
group preempts as one preemptor (``framework/preemption/podgrouppreemption.go``): at the group's
priority, against victims anywhere in the cluster, where a victim is a pod or, for a group
disrupted as a whole, every running pod of that group (reference.victim, which from 1.37 weighs a
lone preemptor's victims too).

The release decides the search (``release.GROUP_PLACEMENT_FIXED``) and a few details around it;
the facts, with file and line per release, are in docs/research/workload-aware-preemption.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from . import filter as flt
from .objects import PREEMPT_LOWER, PREEMPT_NEVER, ClusterState, Pod, PodGroup
from .fit_error import fit_error
from .preemption import filter_nodes
from .release import (GROUP_NOMINATED_WHERE_PLACED, GROUP_ONGOING_PREEMPTION, GROUP_PLACEMENT_FIXED,
                      GROUP_POLICY_FROM_GROUP, GROUP_PRIORITY_MUST_MATCH, Gates, has, minor)
from .victim import Unit, pod_priority, split_by_pdb, victim_units

# Pod groups exist from this release on (alpha; beta in 1.37): before it every pod is scheduled alone.
SINCE = "1.36"
# The scheduler's gates that build the pod-group cycle and its preemption: 1.36 needs all three,
# 1.37 folded the last two into GenericWorkload (docs/research/feature-gates.md section 3).
GATES = {SINCE: ("GenericWorkload", "GangScheduling", "WorkloadAwarePreemption")}
LATER_GATES = ("GenericWorkload",)

MISMATCH = "all pods in a single pod group should have the same priority as the pod group's priority"
POLICY_MISMATCH = "all pods in a single pod group should have the same preemption policy"
NO_VICTIMS = "No preemption victims found for incoming preemptor"
NEVER = "not eligible due to preemptionPolicy=Never."
UNSCHEDULABLE = "pod group is unschedulable"
ONGOING = "ongoing preemption on nominated nodes"
WAITING_FOR_GANG = "waiting for minCount pods from a gang to be scheduled"
# Status codes as the framework spells them (fwk.Code's String).
SUCCESS_CODE, UNSCHEDULABLE_CODE, UNRESOLVABLE_CODE, ERROR_CODE = (
    "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error")


def enabled(release: str, gates: Gates) -> bool:
    """Whether the scheduler runs pod groups as groups: the release has them and the cluster was
    started with their gates on (the API server drops spec.schedulingGroup otherwise, and the
    pods are plain pods)."""
    if minor(release) < minor(SINCE):
        return False
    needed = GATES.get(release, LATER_GATES)
    on: dict[str, bool] = {}
    for component, gate, value in gates:
        if component in ("", "kube-scheduler"):
            on[gate] = value
    # A gate folded into GenericWorkload in 1.37 is named by 1.36 scenarios: it counts there too.
    return all(on.get(g, False) for g in needed)


def group_key(state: ClusterState, pod: Pod, release: str, gates: Gates) -> str:
    """The key of the group whose cycle schedules ``pod`` ("" when it is scheduled on its own)."""
    if not pod.group or not enabled(release, gates):
        return ""
    return f"{pod.namespace}/{pod.group}"


@dataclass(frozen=True)
class GroupAttempt:
    """One pod-group cycle and, when it failed, its preemption.

    outcome: ``schedule`` (``placement`` binds), ``preempt`` (``victims`` go; ``nominations`` are
    written), ``unschedulable`` (nothing changes but the members' messages), ``held`` (not tried:
    its minCount pods do not exist yet).

    A group is never held for its own preemption: DefaultPreemption's PreEnqueue turns it away only
    until the executor has issued the delete of its last victim (executor.go isRunningPreemption,
    1.36 and 1.37 alike), and the model's API calls complete at once. While its victims terminate
    it is tried like any pending pod: 1.37 then keeps its nominations (``ongoing_preemption``), 1.36
    chooses the same victims again, already terminating, and sends no second call."""

    group: str
    outcome: str
    placement: dict[str, str] = field(default_factory=dict)
    ties: dict[str, frozenset[str]] = field(default_factory=dict)
    victims: tuple[str, ...] = ()
    nominations: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    rejectors: frozenset[str] = frozenset()
    # The status codes of what ran after the failed placement ("" where it did not run): the
    # PodGroupPostFilter as a whole (default_preemption.go PodGroupPostFilter), and within it the
    # victim search (podgrouppreemption.go evaluate), which an ineligible group or one whose
    # preemption is ongoing never reaches. reference.metrics counts them.
    post_filter: str = ""
    evaluation: str = ""


def members_in_order(state: ClusterState, group: PodGroup) -> list[Pod]:
    """The group's pending pods in the order the cycle places them: higher priority first, then
    the one created first (its name, as scenarios name them in order)."""
    pending = [p for p in state.members(group) if not p.node_name and not p.terminating]
    return sorted(pending, key=lambda p: (-p.priority, p.name))


@dataclass(frozen=True)
class Placement:
    nodes: dict[str, str]
    ties: dict[str, frozenset[str]]
    failed: dict[str, str]  # pod -> why no node took it
    rejectors: frozenset[str]


def place(state: ClusterState, pods: list[Pod], choices: dict[str, str] | None = None) -> Placement:
    """Each pod in turn on the snapshot, where the pods placed before it already take their room.

    Among several nodes that fit, the scheduler's scores decide, and on identical kwok nodes they
    tie: ``choices`` fixes a branch, else the first by name (the tie is recorded)."""
    assumed = state
    nodes: dict[str, str] = {}
    ties: dict[str, frozenset[str]] = {}
    failed: dict[str, str] = {}
    rejectors: set[str] = set()
    for pod in pods:
        statuses, fit, rejected_by = filter_nodes(assumed, pod)
        feasible = sorted(fit)
        if not feasible:
            failed[pod.key] = fit_error(statuses)
            rejectors |= rejected_by
            continue
        chosen = (choices or {}).get(pod.key)
        node = chosen if chosen in feasible else feasible[0]
        if len(feasible) > 1:
            ties[pod.key] = frozenset(feasible)
        nodes[pod.key] = node
        assumed = assumed.with_pod(pod.with_(node_name=node, nominated_node_name=""))
    return Placement(nodes, ties, failed, frozenset(rejectors))


def succeeds(state: ClusterState, group: PodGroup, placed: int) -> bool:
    """Basic: some pod placed. Gang: minCount pods running or placed, one of them new (a cycle that
    places nothing new is unschedulable)."""
    if placed == 0:
        return False
    if not group.gang:
        return True
    running = sum(1 for p in state.members(group) if p.node_name and not p.terminating)
    return running + placed >= group.min_count


def preempt(state: ClusterState, group: PodGroup, pods: list[Pod], release: str, now: datetime,
            choices: dict[str, str] | None = None) -> tuple[tuple[str, ...], Placement | None, str]:
    """Workload-aware preemption for a failed cycle: (victims, the placement they make room for, why
    none) -- the victims empty and the placement None when preemption cannot help."""
    eligible = victim_units(state, group.priority, release, now)
    if not eligible:
        return (), None, NO_VICTIMS
    everyone = {k for u in eligible for k in u.keys}
    room = place(state.without_pods(everyone), pods, choices)
    if not succeeds(state, group, len(room.nodes)):
        return (), None, "0/{} nodes are available even without every lower-priority pod".format(len(state.nodes))
    # PDB-protected units are tried first for a reprieve; a PDB never blocks.
    violating, fine = split_by_pdb(sorted(eligible, key=Unit.importance), state.pdbs, state.pods,
                                   lambda u: [p for k in u.keys if (p := state.pod_keyed(k)) is not None])
    kept: list[Unit] = []
    for unit in violating + fine:
        back = {k for u in kept + [unit] for k in u.keys}
        trial = state.without_pods(everyone - back)
        if has(release, GROUP_PLACEMENT_FIXED):
            assumed = trial
            for key, node in room.nodes.items():
                assumed = assumed.with_pod(trial.pod_keyed(key).with_(node_name=node, nominated_node_name=""))
            spared = all(flt.fits(assumed.without_pods([key]), trial.pod_keyed(key), assumed.node_named(node))
                         for key, node in room.nodes.items())
        else:
            spared = succeeds(trial, group, len(place(trial, pods, choices).nodes))
        if spared:
            kept.append(unit)
    victims = tuple(k for u in sorted(eligible, key=Unit.importance) if u not in kept for k in u.keys)
    return victims, room, ""


def ongoing_preemption(state: ClusterState, group: PodGroup, pods: list[Pod]) -> bool:
    """isOngoingPreemption (1.37): some pending pod of the group is nominated to a node where a pod
    below the group's priority -- at its own pod group's priority where it names one -- is
    terminating by preemption. Whose preemption it was does not matter."""
    nominated = {p.nominated_node_name for p in pods if p.nominated_node_name}
    return any(pod_priority(state, o) < group.priority and o.terminating and o.disruption_target_by_preemption
               for n in nominated for o in state.pods_on(n))


def invalid(group: PodGroup, members: list[Pod], policy_from_group: bool) -> str:
    """Why 1.37's validatePodGroup fails the group's cycle before any filter ("" when it does not):
    pod by pod, a priority other than the group's, then a preemption policy other than the group's
    (with its policy gate on) or than the first pod's (off)."""
    first = ""
    for p in members:
        if p.priority != group.priority:
            return f"{MISMATCH}, got {p.priority} and {group.priority}"
        if policy_from_group:
            mine = group.preemption_policy or PREEMPT_LOWER
            if p.preemption_policy != mine:
                return f"{POLICY_MISMATCH} as the pod group's preemption policy, got {p.preemption_policy} and {mine}"
        elif not first:
            first = p.preemption_policy
        elif p.preemption_policy != first:
            return f"{POLICY_MISMATCH}, got {p.preemption_policy} and {first}"
    return ""


def preemption_policy(group: PodGroup, members: list[Pod], policy_from_group: bool) -> str:
    """The group's policy as a preemptor (types.go resolvePreemptionPolicy): its own, as admission
    wrote it from its class, with the policy gate on (unset: PreemptLowerPriority); else Never when
    any of its pods has Never. 1.36's PodGroup has no policy field: the pods' rule."""
    if policy_from_group:
        return group.preemption_policy or PREEMPT_LOWER
    return PREEMPT_NEVER if any(p.preemption_policy == PREEMPT_NEVER for p in members) else PREEMPT_LOWER


def attempt(state: ClusterState, group: PodGroup, release: str, gates: Gates, now: datetime,
            choices: dict[str, str] | None = None) -> GroupAttempt:
    """One cycle of ``group``'s pending pods."""
    members = state.members(group)
    pods = members_in_order(state, group)
    if group.gang and sum(1 for p in members if not p.terminating) < group.min_count:
        return GroupAttempt(group.key, "held", reasons=(
            f"waits for {group.min_count} pods of gang {group.key} ({sum(1 for p in members if not p.terminating)} exist)",))
    policy_from_group = has(release, GROUP_POLICY_FROM_GROUP, gates)
    if has(release, GROUP_PRIORITY_MUST_MATCH):
        why = invalid(group, [p for p in members if not p.terminating], policy_from_group)
        if why:
            return GroupAttempt(group.key, "unschedulable", messages={p.key: why for p in pods}, reasons=(why,))
    first = place(state, pods, choices)
    if succeeds(state, group, len(first.nodes)):
        return GroupAttempt(group.key, "schedule", placement=first.nodes, ties=first.ties,
                            messages={k: why for k, why in first.failed.items()},
                            reasons=(f"pod group {group.key}: {len(first.nodes)} pod(s) placed",))
    fitted = WAITING_FOR_GANG if not has(release, GROUP_PLACEMENT_FIXED) else UNSCHEDULABLE
    messages = {p.key: first.failed.get(p.key, fitted) for p in pods}
    rejectors = first.rejectors or frozenset({"NodeResourcesFit"})
    if preemption_policy(group, members, policy_from_group) == PREEMPT_NEVER:
        return GroupAttempt(group.key, "unschedulable", messages={k: f"{m} preemption: {NEVER}" for k, m in messages.items()},
                            reasons=(f"pod group {group.key} does not fit and may not preempt: {NEVER}",),
                            rejectors=rejectors, post_filter=UNSCHEDULABLE_CODE)
    if has(release, GROUP_ONGOING_PREEMPTION) and ongoing_preemption(state, group, pods):
        # Upstream's preemption then succeeds with no victims and the pods' nominations as they are
        # (podgrouppreemption_test.go TestPodGroupEvaluator_Preempt, the "returns success with current
        # nominating infos" rows, 1.37.2): the group stays pending, its nominations untouched.
        return GroupAttempt(group.key, "unschedulable", messages=messages, rejectors=rejectors,
                            nominations={p.key: p.nominated_node_name for p in pods},
                            reasons=(f"pod group {group.key} does not fit and waits: {ONGOING}",),
                            post_filter=SUCCESS_CODE)
    victims, room, why = preempt(state, group, pods, release, now, choices)
    if room is None or not victims:
        # No victim below the group at all is UnschedulableAndUnresolvable (selectVictimsOnDomain);
        # a placement that fails even with them all gone is the group placement's Unschedulable.
        code = UNRESOLVABLE_CODE if why == NO_VICTIMS else UNSCHEDULABLE_CODE
        return GroupAttempt(group.key, "unschedulable",
                            messages={k: f"{m} pod group preemption: {why or NO_VICTIMS}" for k, m in messages.items()},
                            reasons=(f"pod group {group.key} does not fit, and preemption cannot help: {why or NO_VICTIMS}",),
                            rejectors=rejectors, post_filter=code, evaluation=code)
    if has(release, GROUP_NOMINATED_WHERE_PLACED):
        nominations = dict(room.nodes)
    else:
        # 1.36 writes the nodes the failed attempt found for the pods that fitted there.
        nominations = dict(first.nodes)
    return GroupAttempt(group.key, "preempt", placement=room.nodes, ties=room.ties, victims=victims,
                        nominations=nominations, messages=messages, rejectors=rejectors,
                        reasons=(f"pod group {group.key} preempts {len(victims)} pod(s) for a placement of "
                                 f"{len(room.nodes)} pod(s)",), post_filter=SUCCESS_CODE, evaluation=SUCCESS_CODE)


__all__ = ["GATES", "SINCE", "GroupAttempt", "Unit", "attempt", "enabled", "group_key", "invalid", "members_in_order",
           "ongoing_preemption", "place", "preempt", "preemption_policy", "succeeds", "victim_units"]
