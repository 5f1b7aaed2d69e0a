"""Preemption, the PostFilter step: who may preempt, where, and whom.

Two variants share the evaluator, as upstream: ``DefaultPreemption``
(kubernetes pkg/scheduler/framework/plugins/defaultpreemption) and
``PreemptionToleration`` (scheduler-plugins pkg/preemptiontoleration). They
differ only at two named points, like the framework's preemption.Interface:
who is eligible to preempt, and which lower-priority pods may be victims.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cmp_to_key, lru_cache
from typing import Callable, Protocol

from . import filter as flt
from .candidates import ScoreFunc, num_candidates, pick_nodes
from .fit_error import NOT_HELPFUL, fit_error, summary
from .objects import PREEMPT_NEVER, ClusterState, Node, Pod
from .release import DEFAULT_RELEASE, DEFERRED_RESIZE_PREEMPTION, LONE_PREEMPTOR_GROUP_VICTIMS, Gates, has
from .toleration import DEFAULT_PREFIX, ClassMissing, Exemption, exempted_from_preemption
from .victim import Unit, Victim, composite_on, pdb_verdicts, pod_priority, start_time, units_by_node


# --- the two extension points ---------------------------------------------------


@dataclass(frozen=True)
class VictimCheck:
    allowed: bool
    reason: str
    until: datetime | None = None  # a toleration that ends later


LOWER_PRIORITY = VictimCheck(True, "lower priority than the preemptor")
NOT_ELIGIBLE = VictimCheck(False, "not eligible: the plugin's IsEligiblePod says no")


class PreemptionPlugin(Protocol):
    name: str
    asynchronous: bool

    def terminating_blocks(self, victim: Pod, preemptor: Pod, at: int) -> bool:
        """A pod on the preemptor's nominated node whose termination makes it wait, not preempt again.
        ``at``: the pod's priority as a victim (its pod group's, from 1.37 with GenericWorkload on)."""

    def may_preempt(self, state: ClusterState, victim: Pod, preemptor: Pod, now: datetime) -> VictimCheck:
        """May ``victim`` (already known to have lower priority) be removed for ``preemptor``?"""

    def no_victims_message(self, node: Node, preemptor: Pod) -> str: ...


@dataclass(frozen=True)
class DefaultPreemption:
    name: str = "DefaultPreemption"
    # SchedulerAsyncPreemption, on by default: the nomination is written
    # before the victims are deleted.
    asynchronous: bool = True

    def terminating_blocks(self, victim: Pod, preemptor: Pod, at: int) -> bool:
        # Only pods being terminated *by preemption* count (isPreemptionAllowed: the victim's priority).
        return at < preemptor.priority and victim.terminating and victim.disruption_target_by_preemption

    def may_preempt(self, state: ClusterState, victim: Pod, preemptor: Pod, now: datetime) -> VictimCheck:
        return LOWER_PRIORITY

    def no_victims_message(self, node: Node, preemptor: Pod) -> str:
        return "No preemption victims found for incoming pod"


@dataclass(frozen=True)
class PreemptionToleration:
    prefix: str = DEFAULT_PREFIX
    name: str = "PreemptionToleration"
    asynchronous: bool = False

    def terminating_blocks(self, victim: Pod, preemptor: Pod, at: int) -> bool:
        # Any terminating lower-priority pod counts, whoever deleted it; its own code reads the pod's
        # own priority (no build of it exists for the releases with pod groups).
        return victim.priority < preemptor.priority and victim.terminating

    def may_preempt(self, state: ClusterState, victim: Pod, preemptor: Pod, now: datetime) -> VictimCheck:
        ex = exempted_from_preemption(victim, preemptor, state, now, self.prefix)  # may raise ClassMissing
        return _victim_check(ex)

    def no_victims_message(self, node: Node, preemptor: Pod) -> str:
        return f"No victims found on node {node.name} for preemptor pod {preemptor.name}"


@lru_cache(maxsize=65536)
def _victim_check(ex: Exemption) -> VictimCheck:
    # Most verdicts depend on the class alone and repeat for every victim of it.
    if ex:
        return VictimCheck(False, "exempted: " + ex.reason, ex.until)
    return VictimCheck(True, ex.reason)


PLUGINS: dict[str, PreemptionPlugin] = {
    "upstream": DefaultPreemption(),
    "plugins": PreemptionToleration(),
}


# --- DefaultPreemption's hooks ----------------------------------------------------
# Upstream lets a plugin built on DefaultPreemption replace two of its fields, and any preemption
# plugin answer OrderedScoreFuncs (reference.candidates.ScoreFunc). The model takes them as optional
# pure functions of the evaluator's steps below; None is upstream's default, which is what every
# scenario runs, so only a test that hands one in sees a difference.

EligibleVictim = Callable[[Node, Victim, Pod], bool]
"""DefaultPreemption.IsEligiblePod: may ``victim``, on ``node``, go for ``preemptor``? Asked only of
victims already below the preemptor's priority (that test stays the evaluator's own), and an
answer of False keeps the victim. Upstream's default says yes to all.

1.34/1.35 (IsEligiblePodFunc over a ``fwk.PodInfo``; default_preemption.go 1.34:55, 1.35:51): the
victim is a pod (here a one-pod Victim at its own priority), asked on its node, in
SelectVictimsOnNode (isPreemptionAllowed, 1.34:362, 1.35:351) and for the terminating pods on
the preemptor's nominated node in PodEligibleToPreemptOthers (1.34:344, 1.35:333).
1.37 (over a ``preemption.Victim``; 1.37:53): the victim is a pod or, with GenericWorkload on, a
pod group disrupted as a whole at the group's priority, asked once for each node it has pods on
and kept if any says no (isPreemptionAllowedAcrossAllVictimNodes, 1.37:490); a pod on the
nominated node is asked as a one-pod victim there (1.37:468, 481)."""

MoreImportant = Callable[[Victim, Victim], bool]
"""The order SelectVictimsOnNode gives victims back in: True when the first is the more important
(it is tried first, so less likely to go). It sorts the node's potential victims before the
reprieve and, when some would violate a PDB and some not, the victims after it, which is the
order a candidate lists them in.

1.34/1.35: DefaultPreemption.MoreImportantPod over two pods (default_preemption.go 1.34:65, used at
274 and 311; 1.35:61, used at 263 and 300), default util.MoreImportantPod. 1.37:
DefaultPreemption.MoreImportantVictim over two victims (1.37:63, used at 381 and 431), default
preemption.MoreImportantVictim. Both defaults are reference.victim.more_important_victim, which
a hook may fall back on."""


def _victim_view(state: ClusterState, item, members, now: datetime) -> Victim:
    """What the hooks see of a dry-run victim: a pod (``members`` None) or a Unit."""
    if members is None:
        return Victim((item,), item.priority, False, start_time(item, now))
    return Victim(tuple(members(item)), item.priority, item.grouped, item.start, item.composite)


# ErrNoNodesAvailable (scheduler.go): the cycle's error when the snapshot has no node at all.
NO_NODES = "no nodes available to schedule pods"


# --- results --------------------------------------------------------------------


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    filter: flt.Status
    candidate: bool = False
    victims: tuple[str, ...] = ()  # pod keys, most important first
    pdb_violations: int = 0
    reason: str = ""
    # What the node adds to the failure message where that is not ``reason``: the filters' own
    # reasons for a node the preemptor does not fit even with every lower-priority pod removed
    # (SelectVictimsOnNode returns the filters' status itself).
    message_reasons: tuple[str, ...] = ()
    spared: tuple[tuple[str, str], ...] = ()  # (pod key, why)
    exempted: tuple[tuple[str, str], ...] = ()
    exempt_until: datetime | None = None  # earliest end of a time-limited exemption here


@dataclass(frozen=True)
class Prediction:
    """What one scheduling attempt of ``pod`` may do.

    outcome:
      ``schedule``      bound to one of ``nodes``;
      ``preempt``       nominated to one of ``nodes``, evicting ``victims[node]``;
      ``unschedulable`` stays pending (``nominated_node`` says what its
                        nomination becomes: None means unchanged).
    """

    pod: str
    outcome: str
    nodes: frozenset[str] = frozenset()
    victims: dict[str, tuple[str, ...]] = field(default_factory=dict)
    nominations_cleared: dict[str, tuple[str, ...]] = field(default_factory=dict)
    nominated_node: str | None = None
    per_node: tuple[NodeVerdict, ...] = ()
    reasons: tuple[str, ...] = ()
    message: str = ""
    # The filter plugins that turned down some node in this attempt: only their queueing
    # hints decide when the pod, parked, is tried again (reference.queue.woken_by).
    rejectors: frozenset[str] = frozenset()
    # When every path was blocked by toleration windows, the earliest moment one ends.
    retry_not_before: datetime | None = None

    @property
    def possible_victims(self) -> frozenset[str]:
        return frozenset(k for v in self.victims.values() for k in v)

    @property
    def certain_victims(self) -> frozenset[str]:
        sets = [set(v) for v in self.victims.values()]
        return frozenset(set.intersection(*sets)) if sets else frozenset()


# --- the evaluator --------------------------------------------------------------


def eligible(state: ClusterState, pod: Pod, plugin: PreemptionPlugin, nominated_status: flt.Status | None,
             as_groups: bool = False, composite: bool = False, *, eligible_victim: EligibleVictim | None = None,
             now: datetime | None = None) -> tuple[bool, str]:
    """PodEligibleToPreemptOthers. ``as_groups``: a pod on the nominated node counts at its pod
    group's priority (1.37 with GenericWorkload on: NewPodVictim, GetPodPriority); ``composite``: at
    its root group's, up through composite pod groups (the CompositePodGroup gate on too). A
    terminating pod there holds the preemptor back only if ``eligible_victim`` (IsEligiblePod) would
    let it go; the hook needs ``now``, when a pod without a start time counts as started."""
    if eligible_victim is not None and now is None:
        raise TypeError("eligible(): an eligible_victim hook needs now")
    if pod.preemption_policy == PREEMPT_NEVER:
        return False, "not eligible due to preemptionPolicy=Never."
    if pod.nominated_node_name:
        if nominated_status is not None and nominated_status.code == flt.UNRESOLVABLE:
            return True, ""
        for other in state.pods_on(pod.nominated_node_name):
            at = pod_priority(state, other, composite) if as_groups else other.priority
            if plugin.terminating_blocks(other, pod, at) and (
                    eligible_victim is None or eligible_victim(
                        state.node_named(other.node_name),
                        Victim((other,), at, as_groups and bool(other.group), start_time(other, now)),
                        pod)):
                return False, "not eligible due to a terminating pod on the nominated node."
    return True, ""


def select_victims_on_node(
    state: ClusterState, preemptor: Pod, node: Node, plugin: PreemptionPlugin, now: datetime, status: flt.Status,
    units: list[Unit] | None = None, *, eligible_victim: EligibleVictim | None = None,
    more_important: MoreImportant | None = None,
) -> NodeVerdict:
    """The dry run on one node (SelectVictimsOnNode): remove every lower-priority victim the plugin
    allows, check that the preemptor fits, then give victims back, most important first, while it
    still fits; those it cannot give back are the node's victims.

    ``units``: the victims below the preemptor that have a pod on this node, as 1.37 gathers them
    with GenericWorkload on (reference.victim.units_by_node): a unit goes or stays whole, and its
    pods on other nodes go with it (their room there is of no use here, but they are victims and
    count in the node choice). None: each lower-priority pod on the node is a victim of its own.

    ``eligible_victim`` and ``more_important``: the plugin's hooks (IsEligiblePod, and
    MoreImportantPod or from 1.37 MoreImportantVictim); None, upstream's defaults."""
    members = None if units is None else (lambda u: [state.pod_keyed(k) for k in u.keys])
    items: list = [p for p in state.pods_on(node.name) if p.priority < preemptor.priority] if units is None else units
    potential: list = []
    exempted: list[tuple[str, str]] = []
    until: list[datetime] = []
    for item in items:
        pods = members(item) if members else (item,)
        try:
            for pod in pods:  # a unit is eligible when all its pods are (isPreemptionAllowedAcrossAllVictimNodes)
                check = plugin.may_preempt(state, pod, preemptor, now)
                if not check.allowed:
                    break
        except ClassMissing as e:
            return NodeVerdict(node.name, status, reason=f"error: {e}")
        if check.allowed and eligible_victim is not None:
            view = _victim_view(state, item, members, now)
            if not all(eligible_victim(state.node_named(n), view, preemptor)
                       for n in dict.fromkeys(p.node_name for p in pods)):
                check = NOT_ELIGIBLE
        if check.allowed:
            potential.append(item)
        else:
            exempted += [(pod.key, check.reason) for pod in pods]
            if check.until:
                until.append(check.until)
    exempt_until = min(until) if until else None
    if not potential:
        return NodeVerdict(node.name, status, reason=plugin.no_victims_message(node, preemptor),
                           exempted=tuple(exempted), exempt_until=exempt_until)
    if members is None:
        here, far, gone = None, None, potential
    else:
        here = {u: [p for p in members(u) if p.node_name == node.name] for u in potential}
        far = {u: frozenset(p.key for p in members(u) if p.node_name != node.name) for u in potential}
        gone = [p for u in potential for p in here[u]]
    base = flt.residents_on(state, node.name)
    if flt.only_resources_matter(state, preemptor, node):
        # Only NodeResourcesFit can still say no, so the dry run counts instead of filtering
        # (the model's hot path): running sums of what stays, the rule inlined.
        alloc = node.allocatable_map
        room = {name: alloc.get(name, 0) - want for name, want in preemptor.request_map.items() if want > 0}
        pod_room = alloc.get("pods", 0) - 1  # the preemptor takes a pod slot too
        count, used = len(base) - len(gone), dict(base.used)
        for p in gone:
            for name, qty in p.requests:
                used[name] -= qty
        if count > pod_room or any(used.get(name, 0) > free for name, free in room.items()):
            why = flt.run_filters(state, preemptor, node, base.minus(gone))
            return NodeVerdict(node.name, status, reason="does not fit even without its lower-priority pods: "
                               + ", ".join(why.reasons), message_reasons=why.reasons, exempted=tuple(exempted),
                               exempt_until=exempt_until)

        def gives_back(item) -> bool:
            nonlocal count
            back = here[item] if here is not None else (item,)
            if count + len(back) > pod_room:
                return False
            if len(back) == 1:
                requests = back[0].requests
            else:  # a unit with several pods here gives them back together
                wanted: dict[str, int] = {}
                for pod in back:
                    for name, qty in pod.requests:
                        wanted[name] = wanted.get(name, 0) + qty
                requests = tuple(wanted.items())
            for name, qty in requests:
                if name in room and used.get(name, 0) + qty > room[name]:
                    return False
            count += len(back)
            for name, qty in requests:
                used[name] = used.get(name, 0) + qty
            return True
    else:
        # The victims' pods elsewhere are gone too: a filter that looks past the node (inter-pod
        # affinity) sees them gone (upstream tells it through PreFilterExtension RemovePod).
        elsewhere = frozenset().union(*far.values()) if far else frozenset()
        seen = state.without_pods(elsewhere) if elsewhere else state
        remaining = base.minus(gone)
        # Only Unschedulable nodes get here, so the node-only filters have passed.
        if not flt.fits(seen, preemptor, node, remaining, node_checked=True):
            why = flt.run_filters(seen, preemptor, node, remaining)
            return NodeVerdict(node.name, status, reason="does not fit even without its lower-priority pods: "
                               + ", ".join(why.reasons), message_reasons=why.reasons, exempted=tuple(exempted),
                               exempt_until=exempt_until)

        def gives_back(item) -> bool:
            nonlocal remaining, seen, elsewhere
            trial = remaining.plus(*(here[item] if here is not None else (item,)))
            back = far[item] if far is not None else frozenset()
            rest = elsewhere - back
            view = seen if not back else state.without_pods(rest) if rest else state
            if not flt.fits(view, preemptor, node, trial, node_checked=True):
                return False
            remaining, seen, elsewhere = trial, view, rest
            return True

    # Most important first: for pods priority, then the earlier start (inlined: a hot path); for units
    # MoreImportantVictim, which reduces to that for pods in no group. A plugin's own order replaces it.
    if more_important is None:
        order = Unit.importance if members else (lambda p: (-p.priority, p.start_time or now))
    else:
        views = {item: _victim_view(state, item, members, now) for item in potential}
        order = cmp_to_key(lambda a, b: -1 if more_important(views[a], views[b])
                           else 1 if more_important(views[b], views[a]) else 0)
    potential.sort(key=order)
    verdicts = list(pdb_verdicts(potential, state.pdbs, state.pods, members))
    violating, fine = [v for v in verdicts if v[1]], [v for v in verdicts if not v[1]]
    victims: list = []
    spared: list[tuple[str, str]] = []
    violations = 0
    for item, violators in violating + fine:
        if gives_back(item):
            for k in item.keys if members else (item.key,):
                spared.append((k, "preemptor still fits with it"))
        else:
            victims.append(item)
            violations += violators  # 1.37 counts a unit's violating pods (ViolateCount)
    if violating and fine:
        victims.sort(key=order)
    keys = tuple(k for v in victims for k in (v.keys if members else (v.key,)))
    return NodeVerdict(
        node.name, status, candidate=True, victims=keys, pdb_violations=violations,
        reason=f"{len(keys)} victim(s), {violations} PDB violation(s)", spared=tuple(spared),
        exempted=tuple(exempted), exempt_until=exempt_until,
    )


def filter_nodes(state: ClusterState, pod: Pod) -> tuple[dict[str, flt.Status], set[str], frozenset[str]]:
    """The filter phase of an attempt: each node's status, the feasible nodes, and the plugins
    that rejected some node (the pod's rejectors, should it be parked)."""
    statuses = {n.name: flt.run_filters(state, pod, n) for n in state.nodes}
    feasible = {n.name for n in state.nodes if statuses[n.name].ok and flt.fits(state, pod, n)}
    rejectors = frozenset(flt.rejector(state, pod, n, statuses[n.name]) for n in state.nodes if n.name not in feasible)
    return statuses, feasible, rejectors - {""}


def dry_run(state: ClusterState, pod: Pod, plugin, now: datetime, statuses: dict[str, flt.Status],
            units: dict | None = None, *, eligible_victim: EligibleVictim | None = None,
            more_important: MoreImportant | None = None) -> list[NodeVerdict]:
    """Every node's verdict in the preemption's dry run (DryRunPreemption): an unresolvable node
    is no candidate; each other one gets its victims (select_victims_on_node), and one where the
    preemptor fits with every pod back is no candidate either: upstream takes that for an error
    ("expected at least one victim pod on node"). The filters saw the same pods and turned the
    node down, so only a dry run that sees a node otherwise than the filters did meets it; with no
    candidate left, upstream's PostFilter then fails with that error. ``eligible_victim``,
    ``more_important``: the plugin's hooks, as select_victims_on_node takes them."""
    # Only hooks handed in are passed on: the victim search may be a test's stand-in that takes none.
    hooks = {name: hook for name, hook in (("eligible_victim", eligible_victim), ("more_important", more_important))
             if hook is not None}
    verdicts: list[NodeVerdict] = []
    for node in state.nodes:
        st = statuses[node.name]
        if st.code == flt.UNRESOLVABLE:
            verdicts.append(NodeVerdict(node.name, st, reason="not a candidate: " + ", ".join(st.reasons)
                                        + " (UnschedulableAndUnresolvable)"))
            continue
        verdict = select_victims_on_node(state, pod, node, plugin, now, st,
                                         None if units is None else units.get(node.name, []), **hooks)
        if verdict.candidate and not verdict.victims:
            why = f'expected at least one victim pod on node "{node.name}"'
            verdict = replace(verdict, candidate=False, reason=why, message_reasons=(why,))
        verdicts.append(verdict)
    return verdicts


def predict(state: ClusterState, pod_key: str, build: str | PreemptionPlugin | None, now: datetime,
            release: str = DEFAULT_RELEASE, gates: Gates = (), *, eligible_victim: EligibleVictim | None = None,
            more_important: MoreImportant | None = None, score_funcs: tuple[ScoreFunc, ...] | None = None,
            ) -> Prediction:
    """One scheduling attempt of a pending pod: schedule, preempt, or stay pending. ``release`` and
    ``gates`` decide how victims are weighed (``release.LONE_PREEMPTOR_GROUP_VICTIMS``).
    ``eligible_victim``, ``more_important``, ``score_funcs``: the plugin's hooks (EligibleVictim,
    MoreImportant, reference.candidates.ScoreFunc); None, upstream's defaults. ``build`` None: a
    profile with no PostFilter plugin (preemption disabled)."""
    plugin = PLUGINS[build] if isinstance(build, str) else build
    pod = state.pod_keyed(pod_key)
    if pod is None:
        raise KeyError(pod_key)
    if pod.resize_deferred and not has(release, DEFERRED_RESIZE_PREEMPTION, gates):
        raise ValueError(f"{pod_key} runs on {pod.node_name}: its deferred resize is scheduled only from 1.37 "
                         "with InPlacePodVerticalScalingSchedulerPreemption on")
    if not state.nodes:
        # schedule_one.go schedulePod: with no node in the snapshot the cycle stops before the
        # filters (ErrNoNodesAvailable): no PostFilter, the nomination cleared (clearNominatedNode),
        # and no plugin named as a rejector.
        return Prediction(pod.key, "unschedulable", nominated_node="", reasons=(NO_NODES,), message=NO_NODES)
    statuses, feasible, rejectors = filter_nodes(state, pod)
    if pod.nominated_node_name in feasible:
        # The nominated node is tried first and wins when it fits.
        return Prediction(pod.key, "schedule", frozenset({pod.nominated_node_name}),
                          reasons=(f"fits its nominated node {pod.nominated_node_name}",))
    if feasible:
        return Prediction(pod.key, "schedule", frozenset(feasible),
                          reasons=(f"fits {len(feasible)} node(s) without preemption",))

    n = len(state.nodes)
    filter_msg = fit_error(statuses)
    if plugin is None:
        # No PostFilter plugin: the cycle fails with the filters' message and clears any
        # nomination, with no preemption tried (schedule_one.go HasPostFilterPlugins, 1.34:181,
        # 1.35:172, 1.37:290).
        return Prediction(pod.key, "unschedulable", nominated_node="",
                          reasons=("preemption is disabled in the scheduler profile",),
                          message=filter_msg, rejectors=rejectors)
    as_groups = has(release, LONE_PREEMPTOR_GROUP_VICTIMS, gates)
    composite = as_groups and composite_on(release, gates)
    # A nominated node the snapshot no longer has (deleted) is absent from the filters' statuses,
    # which count an absent node UnschedulableAndUnresolvable (NodeToStatus.Get, absentNodesStatus):
    # the pod may preempt again, whatever still terminates on the node it was nominated to.
    nominated_status = statuses.get(pod.nominated_node_name, flt.Status(flt.UNRESOLVABLE)) if pod.nominated_node_name else None
    ok, why = eligible(state, pod, plugin, nominated_status, as_groups, composite,
                       eligible_victim=eligible_victim, now=now)
    if not ok:
        return Prediction(pod.key, "unschedulable", reasons=(why,), message=f"{filter_msg} preemption: {why}",
                          rejectors=rejectors)

    units = units_by_node(state, pod.priority, release, now, gates) if as_groups else None
    verdicts = dry_run(state, pod, plugin, now, statuses, units, eligible_victim=eligible_victim,
                       more_important=more_important)
    candidates = [v for v in verdicts if v.candidate]
    if not candidates:
        # The message names a node left out of the dry run as upstream does.
        reasons = [r for v in verdicts for r in ((NOT_HELPFUL,) if v.filter.code == flt.UNRESOLVABLE
                                                 else v.message_reasons or (v.reason,))]
        ends = [v.exempt_until for v in verdicts if v.exempt_until is not None and v.filter.code != flt.UNRESOLVABLE]
        return Prediction(
            pod.key, "unschedulable", nominated_node="", per_node=tuple(verdicts),
            reasons=("no node can make room by preemption",),
            message=f"{filter_msg} preemption: 0/{n} nodes are available: {summary(reasons)}.",
            retry_not_before=min(ends) if ends else None, rejectors=rejectors,
        )
    potential = sum(1 for v in verdicts if v.filter.code != flt.UNRESOLVABLE)
    chosen, criterion = pick_nodes(candidates, state, now, num_candidates(potential), score_funcs=score_funcs)
    by_node = {v.node: v for v in verdicts}
    victims = {name: by_node[name].victims for name in chosen}
    cleared = {
        name: tuple(p.key for p in state.nominated_to(name) if p.key != pod.key and p.priority < pod.priority)
        for name in chosen
    }
    # The attempt still failed: the pod is left pending with the filter phase's message (what a
    # successful preemption adds to it depends on the release: reference.cycle.success_message).
    return Prediction(
        pod.key, "preempt", chosen, victims=victims, nominations_cleared=cleared, per_node=tuple(verdicts),
        reasons=(f"node chosen by {criterion}",), rejectors=rejectors, message=filter_msg,
    )
