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
from .objects import PREEMPT_LOWER, PREEMPT_NEVER, ClusterState, CompositePodGroup, Pod, PodGroup
from .fit_error import fit_error
from .preemption import filter_nodes
from .release import (GROUP_NOMINATED_WHERE_PLACED, GROUP_ONGOING_PREEMPTION, GROUP_PLACEMENT_FIXED,
                      GROUP_POLICY_FROM_GROUP, GROUP_PRIORITY_MUST_MATCH, Gates, has, minor)
from .victim import COMPOSITE, GROUP, Unit, composite_on, leaf_groups, pod_priority, split_by_pdb, victim_units, walk_up

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
    """The key of the group whose cycle schedules ``pod`` ("" when it is scheduled on its own): its
    pod group's, or with composite pod groups on its root composite group's."""
    if not pod.group or not enabled(release, gates):
        return ""
    root = unit_of(state, pod, release, gates)
    return key_of(root) if root is not None else f"{pod.namespace}/{pod.group}"


def key_of(group: PodGroup | CompositePodGroup) -> str:
    """A group's key as a preemptor or a queue entity: a composite group's is prefixed by its kind
    (upstream keys them by UID, and a composite group and a pod group may share a name)."""
    return f"{COMPOSITE}:{group.key}" if isinstance(group, CompositePodGroup) else group.key


def unit_of(state: ClusterState, pod: Pod, release: str, gates: Gates) -> PodGroup | CompositePodGroup | None:
    """The group whose cycle takes ``pod``: its pod group, or with composite pod groups on (1.37,
    the CompositePodGroup gate) the root of its hierarchy, the whole hierarchy being one queue
    entity scheduled at once (schedule_one_podgroup.go runRootSchedulingAlgorithm). None while its
    pod group, or a composite group above it, does not exist: the queue keeps such a pod aside
    (scheduling_queue.go incompletePodGroupPods)."""
    g = state.group_of(pod)
    if g is None or not composite_on(release, gates) or not g.parent:
        return g
    chain = walk_up(state, pod.namespace, GROUP, pod.group)
    top = chain[-1][1]
    return top if not top.parent else None


Group = PodGroup | CompositePodGroup


def leaves(state: ClusterState, group: Group) -> list[PodGroup]:
    """The pod groups a group's cycle schedules: itself, or every pod group under a composite group."""
    if isinstance(group, PodGroup):
        return [group]
    return leaf_groups(state, COMPOSITE, group)


def group_members(state: ClusterState, group: Group) -> tuple[Pod, ...]:
    """Every pod of the group, or of every pod group under a composite group."""
    return tuple(p for g in leaves(state, group) for p in state.members(g))


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


def members_in_order(state: ClusterState, group: Group) -> list[Pod]:
    """The group's pending pods in the order the cycle places them: higher priority first, then
    the one created first (its name, as scenarios name them in order); a composite group's, pod
    group after pod group in the order its cycle takes them (``run_tree``)."""
    if isinstance(group, CompositePodGroup):
        return [p for g in leaves(state, group) for p in members_in_order(state, g)]
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


def run_tree(state: ClusterState, group: Group, choices: dict[str, str] | None = None) -> tuple[Placement, bool]:
    """A composite group's cycle (1.37 schedule_one_podgroup.go compositePodGroupSchedulingDefaultAlgorithm,
    podGroupSchedulingDefaultAlgorithm, PlacementFeasible of gangscheduling.go), on one snapshot:
    (what it places, whether the group's own policy is met). A pod group places its pending pods
    and is met when its running and placed pods reach its minCount (1 for the basic policy); a
    composite group tries its children in turn, each on what the ones before it placed, and is met
    when minGroupCount of them are (1 for the basic policy), giving up as soon as too few children
    remain. A group not met takes nothing: what it placed is undone. (CompositePodGroup needs the
    TopologyAwareWorkloadScheduling gate, whose placement algorithm runs this; for groups without
    topology constraints, which the model has none of, that is one placement over every node.)"""
    if isinstance(group, PodGroup):
        room = place(state, members_in_order(state, group), choices)
        running = sum(1 for p in state.members(group) if p.node_name and not p.terminating)
        ok = running + len(room.nodes) >= max(group.min_count, 1)
        return (room if ok else Placement({}, {}, room.failed, room.rejectors)), ok
    need = max(group.min_groups, 1)
    # GetChildGroups (framework/types.go) sorts them by creation, then name: the state keeps its
    # groups in the order they were created, composite groups (created first) before pod groups.
    children = state.children(group)
    nodes: dict[str, str] = {}
    ties: dict[str, frozenset[str]] = {}
    failed: dict[str, str] = {}
    rejectors: set[str] = set()
    assumed, met, remaining = state, 0, len(children)
    for child in children:
        if remaining + met < need:
            break
        sub, ok = run_tree(assumed, child, choices)
        remaining -= 1
        failed |= sub.failed
        rejectors |= sub.rejectors
        if ok:
            met += 1
            nodes |= sub.nodes
            ties |= sub.ties
            for key, node in sub.nodes.items():
                assumed = assumed.with_pod(assumed.pod_keyed(key).with_(node_name=node, nominated_node_name=""))
    if met < need:
        return Placement({}, {}, failed, frozenset(rejectors)), False
    return Placement(nodes, ties, failed, frozenset(rejectors)), True


def tree_ready(state: ClusterState, group: Group) -> bool:
    """The gang plugin's PreEnqueue for a hierarchy (gangscheduling.go isCPGTreeReady): enough
    pod groups have their minCount of pods (1 for the basic policy), and enough of a composite
    group's children are ready (minGroupCount; 1 for the basic policy)."""
    if isinstance(group, PodGroup):
        return sum(1 for p in state.members(group) if not p.terminating) >= max(group.min_count, 1)
    return sum(tree_ready(state, c) for c in state.children(group)) >= max(group.min_groups, 1)


def preempt(state: ClusterState, group: Group, pods: list[Pod], release: str, now: datetime,
            choices: dict[str, str] | None = None, gates: Gates = ()) -> tuple[tuple[str, ...], Placement | None, str]:
    """Workload-aware preemption for a failed cycle: (victims, the placement they make room for, why
    none) -- the victims empty and the placement None when preemption cannot help. A composite
    group (1.37) preempts as one, for the pods of all its pod groups, at its own priority."""
    if isinstance(group, CompositePodGroup):
        def run(st: ClusterState) -> tuple[Placement, bool]:
            room, ok = run_tree(st, group, choices)
            return room, ok and bool(room.nodes)
    else:
        def run(st: ClusterState) -> tuple[Placement, bool]:
            room = place(st, pods, choices)
            return room, succeeds(state, group, len(room.nodes))
    eligible = victim_units(state, group.priority, release, now, gates)
    if not eligible:
        return (), None, NO_VICTIMS
    everyone = {k for u in eligible for k in u.keys}
    room, ok = run(state.without_pods(everyone))
    if not ok:
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
        elif isinstance(group, CompositePodGroup):
            spared = run(trial)[1]
        else:
            spared = succeeds(trial, group, len(place(trial, pods, choices).nodes))
        if spared:
            kept.append(unit)
    victims = tuple(k for u in sorted(eligible, key=Unit.importance) if u not in kept for k in u.keys)
    return victims, room, ""


def ongoing_preemption(state: ClusterState, group: Group, pods: list[Pod], composite: bool = False) -> bool:
    """isOngoingPreemption (1.37): some pending pod of the group is nominated to a node where a pod
    below the group's priority -- at its own pod group's priority where it names one (its root
    group's, with composite pod groups on) -- is terminating by preemption. Whose preemption it was
    does not matter."""
    nominated = {p.nominated_node_name for p in pods if p.nominated_node_name}
    return any(pod_priority(state, o, composite) < group.priority and o.terminating and o.disruption_target_by_preemption
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


def attempt(state: ClusterState, group: Group, release: str, gates: Gates, now: datetime,
            choices: dict[str, str] | None = None) -> GroupAttempt:
    """One cycle of ``group``'s pending pods (a composite group's: of all its pod groups')."""
    tree = isinstance(group, CompositePodGroup)
    members = group_members(state, group)
    pods = members_in_order(state, group)
    if tree and not tree_ready(state, group):
        return GroupAttempt(group.key, "held", reasons=(f"waits for composite pod group {group.key}'s tree to meet quorum",))
    if not tree and group.gang and sum(1 for p in members if not p.terminating) < group.min_count:
        return GroupAttempt(group.key, "held", reasons=(
            f"waits for {group.min_count} pods of gang {group.key} ({sum(1 for p in members if not p.terminating)} exist)",))
    policy_from_group = has(release, GROUP_POLICY_FROM_GROUP, gates)
    if has(release, GROUP_PRIORITY_MUST_MATCH):
        why = invalid(group, [p for p in members if not p.terminating], policy_from_group)
        if why:
            return GroupAttempt(group.key, "unschedulable", messages={p.key: why for p in pods}, reasons=(why,))
    if tree:
        first, met = run_tree(state, group, choices)
        met = met and bool(first.nodes)
    else:
        first = place(state, pods, choices)
        met = succeeds(state, group, len(first.nodes))
    if met:
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
    if has(release, GROUP_ONGOING_PREEMPTION) and ongoing_preemption(state, group, pods, composite_on(release, gates)):
        # Upstream's preemption then succeeds with no victims and the pods' nominations as they are
        # (podgrouppreemption_test.go TestPodGroupEvaluator_Preempt, the "returns success with current
        # nominating infos" rows, 1.37.2): the group stays pending, its nominations untouched.
        return GroupAttempt(group.key, "unschedulable", messages=messages, rejectors=rejectors,
                            nominations={p.key: p.nominated_node_name for p in pods},
                            reasons=(f"pod group {group.key} does not fit and waits: {ONGOING}",),
                            post_filter=SUCCESS_CODE)
    victims, room, why = preempt(state, group, pods, release, now, choices, gates)
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


__all__ = ["GATES", "SINCE", "GroupAttempt", "Unit", "attempt", "enabled", "group_key", "group_members", "invalid", "key_of", "leaves",
           "members_in_order", "ongoing_preemption", "place", "preempt", "preemption_policy", "run_tree", "succeeds",
           "tree_ready", "unit_of", "victim_units"]
