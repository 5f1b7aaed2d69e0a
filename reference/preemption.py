"""Preemption, the PostFilter step: who may preempt, where, and whom.

Two variants share the evaluator, as upstream: ``DefaultPreemption``
(kubernetes pkg/scheduler/framework/plugins/defaultpreemption) and
``PreemptionToleration`` (scheduler-plugins pkg/preemptiontoleration). They
differ only at two named points, like the framework's preemption.Interface:
who is eligible to preempt, and which lower-priority pods may be victims.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Callable, Iterable, Protocol

from . import filter as flt
from .objects import PREEMPT_NEVER, ClusterState, Node, Pod, PodDisruptionBudget
from .toleration import DEFAULT_PREFIX, ClassMissing, Exemption, exempted_from_preemption


# --- the two extension points ---------------------------------------------------


@dataclass(frozen=True)
class VictimCheck:
    allowed: bool
    reason: str
    until: datetime | None = None  # a toleration that ends later


LOWER_PRIORITY = VictimCheck(True, "lower priority than the preemptor")


class PreemptionPlugin(Protocol):
    name: str
    asynchronous: bool

    def terminating_blocks(self, victim: Pod, preemptor: Pod) -> bool:
        """A pod on the preemptor's nominated node whose termination makes it wait, not preempt again."""

    def may_preempt(self, state: ClusterState, victim: Pod, preemptor: Pod, now: datetime) -> VictimCheck:
        """May ``victim`` (already known to have lower priority) be removed for ``preemptor``?"""

    def no_victims_message(self, node: Node, preemptor: Pod) -> str: ...


@dataclass(frozen=True)
class DefaultPreemption:
    name: str = "DefaultPreemption"
    # SchedulerAsyncPreemption, on by default: the nomination is written
    # before the victims are deleted.
    asynchronous: bool = True

    def terminating_blocks(self, victim: Pod, preemptor: Pod) -> bool:
        # Only pods being terminated *by preemption* count.
        return victim.priority < preemptor.priority and victim.terminating and victim.disruption_target_by_preemption

    def may_preempt(self, state: ClusterState, victim: Pod, preemptor: Pod, now: datetime) -> VictimCheck:
        return LOWER_PRIORITY

    def no_victims_message(self, node: Node, preemptor: Pod) -> str:
        return "No preemption victims found for incoming pod"


@dataclass(frozen=True)
class PreemptionToleration:
    prefix: str = DEFAULT_PREFIX
    name: str = "PreemptionToleration"
    asynchronous: bool = False

    def terminating_blocks(self, victim: Pod, preemptor: Pod) -> bool:
        # Any terminating lower-priority pod counts, whoever deleted it.
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


# --- results --------------------------------------------------------------------


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    filter: flt.Status
    candidate: bool = False
    victims: tuple[str, ...] = ()  # pod keys, most important first
    pdb_violations: int = 0
    reason: str = ""
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


def eligible(state: ClusterState, pod: Pod, plugin: PreemptionPlugin, nominated_status: flt.Status | None) -> tuple[bool, str]:
    if pod.preemption_policy == PREEMPT_NEVER:
        return False, "not eligible due to preemptionPolicy=Never."
    if pod.nominated_node_name:
        if nominated_status is not None and nominated_status.code == flt.UNRESOLVABLE:
            return True, ""
        for other in state.pods_on(pod.nominated_node_name):
            if plugin.terminating_blocks(other, pod):
                return False, "not eligible due to a terminating pod on the nominated node."
    return True, ""


def start_time(pod: Pod, now: datetime) -> datetime:
    return pod.start_time or now


def importance(pod: Pod, now: datetime) -> tuple:
    """Sort key: most important first (higher priority, then earlier start)."""
    return (-pod.priority, start_time(pod, now))


def split_by_pdb(items: list, pdbs: tuple[PodDisruptionBudget, ...], everyone: tuple[Pod, ...] = (),
                 pods_of: Callable[[object], Iterable[Pod]] | None = None) -> tuple[list, list]:
    """(would violate a PDB, would not), keeping order; budgets are spent in that order. An item is
    a pod, or with ``pods_of`` a unit of pods (a pod group's victim) that violates if any of them does."""
    allowed = [pdb.allowed_in(everyone) for pdb in pdbs]
    violating, fine = [], []
    for item in items:
        violated = False
        for pod in pods_of(item) if pods_of else (item,):
            if not pod.labels:
                continue
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or pdb.selector.empty or not pdb.selector.matches(pod.label_map):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else fine).append(item)
    return violating, fine


def select_victims_on_node(
    state: ClusterState, preemptor: Pod, node: Node, plugin: PreemptionPlugin, now: datetime, status: flt.Status
) -> NodeVerdict:
    potential: list[Pod] = []
    exempted: list[tuple[str, str]] = []
    until: list[datetime] = []
    for pod in state.pods_on(node.name):
        if pod.priority >= preemptor.priority:
            continue
        try:
            check = plugin.may_preempt(state, pod, preemptor, now)
        except ClassMissing as e:
            return NodeVerdict(node.name, status, reason=f"error: {e}")
        if check.allowed:
            potential.append(pod)
        else:
            exempted.append((pod.key, check.reason))
            if check.until:
                until.append(check.until)
    exempt_until = min(until) if until else None
    if not potential:
        return NodeVerdict(node.name, status, reason=plugin.no_victims_message(node, preemptor),
                           exempted=tuple(exempted), exempt_until=exempt_until)
    base = flt.residents_on(state, node.name)
    if flt.only_resources_matter(state, preemptor, node):
        # Only NodeResourcesFit can still say no, so the dry run counts instead of filtering
        # (the model's hot path): running sums of what stays, the rule inlined.
        alloc = node.allocatable_map
        room = {name: alloc.get(name, 0) - want for name, want in preemptor.request_map.items() if want > 0}
        pod_room = alloc.get("pods", 0) - 1  # the preemptor takes a pod slot too
        count, used = len(base) - len(potential), dict(base.used)
        for p in potential:
            for name, qty in p.requests:
                used[name] -= qty
        if count > pod_room or any(used.get(name, 0) > free for name, free in room.items()):
            why = flt.run_filters(state, preemptor, node, base.minus(potential))
            return NodeVerdict(node.name, status, reason="does not fit even without its lower-priority pods: "
                               + ", ".join(why.reasons), exempted=tuple(exempted), exempt_until=exempt_until)

        def gives_back(pod: Pod) -> bool:
            nonlocal count
            if count + 1 > pod_room:
                return False
            for name, qty in pod.requests:
                if name in room and used.get(name, 0) + qty > room[name]:
                    return False
            count += 1
            for name, qty in pod.requests:
                used[name] = used.get(name, 0) + qty
            return True
    else:
        remaining = base.minus(potential)
        # Only Unschedulable nodes get here, so the node-only filters have passed.
        if not flt.fits(state, preemptor, node, remaining, node_checked=True):
            why = flt.run_filters(state, preemptor, node, remaining)
            return NodeVerdict(node.name, status, reason="does not fit even without its lower-priority pods: "
                               + ", ".join(why.reasons), exempted=tuple(exempted), exempt_until=exempt_until)

        def gives_back(pod: Pod) -> bool:
            nonlocal remaining
            trial = remaining.plus(pod)
            if not flt.fits(state, preemptor, node, trial, node_checked=True):
                return False
            remaining = trial
            return True

    potential.sort(key=lambda p: (-p.priority, p.start_time or now))  # importance(), inlined: a hot path
    violating, fine = split_by_pdb(potential, state.pdbs, state.pods)
    victims: list[Pod] = []
    spared: list[tuple[str, str]] = []
    violations = 0
    for group, is_violating in ((violating, True), (fine, False)):
        for pod in group:
            if gives_back(pod):
                spared.append((pod.key, "preemptor still fits with it"))
            else:
                victims.append(pod)
                violations += is_violating
    if violating and fine:
        victims.sort(key=lambda p: importance(p, now))
    return NodeVerdict(
        node.name, status, candidate=True, victims=tuple(p.key for p in victims), pdb_violations=violations,
        reason=f"{len(victims)} victim(s), {violations} PDB violation(s)", spared=tuple(spared),
        exempted=tuple(exempted), exempt_until=exempt_until,
    )


CRITERIA = (
    "fewest PDB violations",
    "lowest highest-victim priority",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start of the highest-priority victims",
)


def node_score(v: NodeVerdict, pods: dict[str, Pod], now: datetime) -> tuple:
    """Upstream's node-choice criteria as one tuple: higher is better, compared in order."""
    victims = [pods[k] for k in v.victims]
    top = max(p.priority for p in victims)
    return (
        -v.pdb_violations,
        -victims[0].priority,
        -sum(p.priority + 2**31 for p in victims),
        -len(victims),
        min(start_time(p, now) for p in victims if p.priority == top),
    )


def num_candidates(potential_nodes: int, percentage: int = 10, absolute: int = 100) -> int:
    """How many candidates the dry run looks for before it may stop (the plugins' default args)."""
    return min(max(potential_nodes * percentage // 100, absolute), potential_nodes)


def pick_nodes(candidates: list[NodeVerdict], state: ClusterState, now: datetime,
               sample: int | None = None) -> tuple[frozenset[str], str]:
    """The set of nodes the preemptor may be nominated to, and why.

    With all candidates evaluated, the best by upstream's criteria (ties are a
    set). When the dry run may stop after ``sample`` candidates, visited from a
    random offset in an order the model cannot know, a candidate may win if
    some such sample holds it and nothing better; a sample must hold a
    PDB-respecting candidate when one exists.
    """
    if len(candidates) == 1:
        return frozenset({candidates[0].node}), "the only candidate"
    pods = {p.key: p for p in state.pods}
    scores = {v.node: node_score(v, pods, now) for v in candidates}
    if sample is not None and len(candidates) > sample:
        any_clean = any(v.pdb_violations == 0 for v in candidates)
        ranked = sorted(scores.values())
        allowed = set()
        for v in candidates:
            if any_clean and v.pdb_violations:
                continue
            not_better = bisect_right(ranked, scores[v.node]) - 1  # others scoring <= it
            if not_better >= sample - 1:
                allowed.add(v.node)
        return frozenset(allowed), (f"any of these: the dry run may stop after {sample} of "
                                    f"{len(candidates)} candidates, visited from a random offset")
    best = max(scores.values())
    winners = [v.node for v in candidates if scores[v.node] == best]
    if len(winners) == 1:
        runner_up = max(sc for n, sc in scores.items() if n != winners[0])
        decided = next(i for i, (a, b) in enumerate(zip(best, runner_up)) if a != b)
        return frozenset(winners), CRITERIA[decided]
    return frozenset(winners), "tie: the scheduler picks any of these"


NOT_HELPFUL = "Preemption is not helpful for scheduling"  # an UnschedulableAndUnresolvable node, in the message


def _summary(statuses: list[str]) -> str:
    counts = Counter(statuses)
    return ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))


def fit_error(statuses: dict[str, flt.Status]) -> str:
    """The filter phase's failure message: "0/N nodes are available: <count> <reason>, ..."."""
    return f"0/{len(statuses)} nodes are available: " + _summary([r for s in statuses.values() for r in s.reasons]) + "."


def rejector(state: ClusterState, pod: Pod, node: Node, status: flt.Status) -> str:
    """The filter plugin that turned ``node`` down: the first failing one, with the nominated pods
    counted, else the one failing without them (RunFilterPluginsWithNominatedPods runs both)."""
    if not status.ok:
        return status.plugin
    return flt.run_filters(state, pod, node, nominated=False).plugin or status.plugin


def filter_nodes(state: ClusterState, pod: Pod) -> tuple[dict[str, flt.Status], set[str], frozenset[str]]:
    """The filter phase of an attempt: each node's status, the feasible nodes, and the plugins
    that rejected some node (the pod's rejectors, should it be parked)."""
    statuses = {n.name: flt.run_filters(state, pod, n) for n in state.nodes}
    feasible = {n.name for n in state.nodes if statuses[n.name].ok and flt.fits(state, pod, n)}
    rejectors = frozenset(rejector(state, pod, n, statuses[n.name]) for n in state.nodes if n.name not in feasible)
    return statuses, feasible, rejectors - {""}


def predict(state: ClusterState, pod_key: str, build: str | PreemptionPlugin, now: datetime) -> Prediction:
    """One scheduling attempt of a pending pod: schedule, preempt, or stay pending."""
    plugin = PLUGINS[build] if isinstance(build, str) else build
    pod = state.pod_keyed(pod_key)
    if pod is None:
        raise KeyError(pod_key)
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
    ok, why = eligible(state, pod, plugin, statuses.get(pod.nominated_node_name))
    if not ok:
        return Prediction(pod.key, "unschedulable", reasons=(why,), message=f"{filter_msg} preemption: {why}",
                          rejectors=rejectors)

    verdicts: list[NodeVerdict] = []
    for node in state.nodes:
        st = statuses[node.name]
        if st.code == flt.UNRESOLVABLE:
            verdicts.append(NodeVerdict(node.name, st, reason="not a candidate: " + ", ".join(st.reasons)
                                        + " (UnschedulableAndUnresolvable)"))
        else:
            verdicts.append(select_victims_on_node(state, pod, node, plugin, now, st))
    candidates = [v for v in verdicts if v.candidate]
    if not candidates:
        # The message names a node left out of the dry run as upstream does.
        reasons = [NOT_HELPFUL if v.filter.code == flt.UNRESOLVABLE else v.reason for v in verdicts]
        ends = [v.exempt_until for v in verdicts if v.exempt_until is not None and v.filter.code != flt.UNRESOLVABLE]
        return Prediction(
            pod.key, "unschedulable", nominated_node="", per_node=tuple(verdicts),
            reasons=("no node can make room by preemption",),
            message=f"{filter_msg} preemption: 0/{n} nodes are available: {_summary(reasons)}.",
            retry_not_before=min(ends) if ends else None, rejectors=rejectors,
        )
    potential = sum(1 for v in verdicts if v.filter.code != flt.UNRESOLVABLE)
    chosen, criterion = pick_nodes(candidates, state, now, num_candidates(potential))
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
