"""Filter plugins, as far as the scenarios need them.

What matters most here is the status code: a node rejected as
``Unschedulable`` may become feasible by preempting pods on it and is a
preemption candidate; one rejected as ``UnschedulableAndUnresolvable`` never
is. Plugins run in the default profile's order and the first failure decides,
as in the framework.

Upstream: pkg/scheduler/framework/plugins/{nodeunschedulable,tainttoleration,
nodeaffinity,noderesources,podtopologyspread,interpodaffinity}; for a deferred resize (1.37,
InPlacePodVerticalScalingSchedulerPreemption) also nodename and deferredpodscheduling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence

from .objects import ClusterState, Node, Pod, PodAffinityTerm, SpreadConstraint, Taint

Code = Literal["Success", "Unschedulable", "UnschedulableAndUnresolvable"]
SUCCESS: Code = "Success"
UNSCHEDULABLE: Code = "Unschedulable"
UNRESOLVABLE: Code = "UnschedulableAndUnresolvable"


@dataclass(frozen=True)
class Status:
    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code == SUCCESS


OK = Status(SUCCESS)


class Residents(tuple):
    """The pods on a node as one check supposes them, with their summed requests.

    A preemption dry run removes pods and gives them back one by one; keeping
    the sums alongside makes each step O(1) in the node's pod count, as the
    scheduler's NodeInfo does.
    """

    used: dict[str, int]
    anti_affinity: bool  # does any of them carry required anti-affinity terms

    def __new__(cls, pods=(), used: dict[str, int] | None = None, keys: frozenset[str] | None = None,
                anti_affinity: bool | None = None):
        self = super().__new__(cls, pods)
        if used is None:
            used = {}
            for p in self:
                for name, qty in p.requests:
                    used[name] = used.get(name, 0) + qty
        self.used = used
        self._keys = keys
        self.anti_affinity = any(p.pod_anti_affinity for p in self) if anti_affinity is None else anti_affinity
        return self

    @property
    def keys(self) -> frozenset[str]:
        # Asked for only when a bound pod is re-checked: not built for every node of a dry run.
        if self._keys is None:
            self._keys = frozenset(p.key for p in self)
        return self._keys

    def minus(self, pods: list[Pod]) -> Residents:
        """Without ``pods`` (all of them among these), sums kept by subtraction."""
        gone = {p.key for p in pods}
        used = dict(self.used)
        for p in pods:
            for name, qty in p.requests:
                used[name] -= qty
        rest = [p for p in self if p.key not in gone]
        return Residents(rest, used, None, any(p.pod_anti_affinity for p in rest))

    def plus(self, *pods: Pod) -> Residents:
        used = dict(self.used)
        for p in pods:
            for name, qty in p.requests:
                used[name] = used.get(name, 0) + qty
        return Residents((*self, *pods), used, None,
                         self.anti_affinity or any(p.pod_anti_affinity for p in pods))


# A filter sees the cluster, the pod, the node and the pods on that node as
# this check supposes them (a preemption dry run removes some of them).
FilterPlugin = Callable[[ClusterState, Pod, Node, Residents], Status]


def node_unschedulable(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod]) -> Status:
    taint = Taint("node.kubernetes.io/unschedulable", "NoSchedule")
    if node.unschedulable and not any(t.tolerates(taint) for t in pod.tolerations):
        return Status(UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable")
    return OK


def untolerated(pod: Pod, node: Node) -> bool:
    """Whether the node has a NoSchedule or NoExecute taint the pod does not tolerate."""
    return any(t.effect in ("NoSchedule", "NoExecute") and not any(x.tolerates(t) for x in pod.tolerations)
               for t in node.taints)


def matches_required(pod: Pod, node: Node) -> bool:
    """Whether the node passes the pod's nodeSelector and required node affinity."""
    labels = node.label_map
    return (all(labels.get(k) == v for k, v in pod.node_selector)
            and (not pod.node_affinity or any(all(r.matches(labels) for r in term) for term in pod.node_affinity)))


def taint_toleration(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod]) -> Status:
    if untolerated(pod, node):
        return Status(UNRESOLVABLE, ("node(s) had untolerated taint(s)",), "TaintToleration")
    return OK


def node_affinity(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod]) -> Status:
    if matches_required(pod, node):
        return OK
    return Status(UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",), "NodeAffinity")


def resource_shortfall(alloc: dict[str, int], count: int, used: dict[str, int],
                       requests: dict[str, int]) -> tuple[list[str], bool]:
    """NodeResourcesFit's rule on plain numbers: (reasons it does not fit, whether even an empty node could not).

    ``count`` and ``used`` are the pods already on the node and their summed requests.
    """
    reasons, unresolvable = [], False
    if count + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    for name, want in sorted(requests.items()):
        if want <= 0:
            continue
        have = alloc.get(name, 0)
        if want > have - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > have
    return reasons, unresolvable


def node_resources_fit(state: ClusterState, pod: Pod, node: Node, resident: Residents) -> Status:
    # Terminating pods still hold their resources until they are gone.
    count, used = len(resident), resident.used
    if pod.resize_deferred and pod.node_name == node.name:
        return _deferred_resize_fit(pod, node, resident)
    if pod.node_name == node.name and pod.key in resident.keys:  # re-checking a bound pod: do not count it twice
        count -= 1
        used = {k: v - pod.request_map.get(k, 0) for k, v in used.items()}
    reasons, unresolvable = resource_shortfall(node.allocatable_map, count, used, pod.request_map)
    if not reasons:
        return OK
    return Status(UNRESOLVABLE if unresolvable else UNSCHEDULABLE, tuple(reasons), "NodeResourcesFit")


def _deferred_resize_fit(pod: Pod, node: Node, resident: Residents) -> Status:
    """NodeResourcesFit for a deferred resize on its own node (1.37 fit.go fitsRequest with
    adjustDeltasToAccomodateCacheDiscrepancy): the pod is among the node's pods at what the cache
    counts for it, so each resource it asks for is judged by how much more than that it wants,
    max(0, desired - counted), against what is free with it counted. The node's pod count is not
    adjusted: the pod counts once as a resident and once as the incoming pod."""
    own = next((p for p in resident if p.key == pod.key), None)
    counted = own.request_map if own is not None else {}
    alloc, used = node.allocatable_map, resident.used
    reasons, unresolvable = [], False
    if len(resident) + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    for name, want in sorted(pod.desired_map.items()):
        if want <= 0:
            continue
        have = alloc.get(name, 0)
        # Also when it wants no more than is counted: a node the cache sees overcommitted (the pod
        # counted at its desired size beside pods that no longer leave it room) does not fit.
        if max(0, want - counted.get(name, 0)) > have - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > have
    if not reasons:
        return OK
    return Status(UNRESOLVABLE if unresolvable else UNSCHEDULABLE, tuple(reasons), "NodeResourcesFit")


def node_name(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod]) -> Status:
    """NodeName: a pod that names its node (here, a bound pod whose resize was deferred) fits no
    other; its PreFilter narrows the attempt to that node, and the nodes it leaves out are
    UnschedulableAndUnresolvable with the framework's reason (schedule_one.go findNodesThatFitPod)."""
    if pod.node_name and pod.node_name != node.name:
        return Status(UNRESOLVABLE, ("node(s) didn't satisfy plugin(s) [NodeName]",), "NodeName")
    return OK


def deferred_pod_scheduling(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod]) -> Status:
    """DeferredPodScheduling (1.37): a node whose spec.podPreemptionPolicy.disableResizePreemption
    names anybody is closed to its pods' deferred resizes, UnschedulableAndUnresolvable, so
    nobody there is preempted for them (deferred_pod_scheduling.go Filter)."""
    if pod.resize_deferred and node.resize_preemption_disabled:
        return Status(UNRESOLVABLE, ("node had resize preemption disabled",), "DeferredPodScheduling")
    return OK


def for_deferred_resize(plugins: Sequence[FilterPlugin]) -> tuple[FilterPlugin, ...]:
    """The filters a deferred resize meets: the plugins whose PreFilter returns Skip for such a pod
    (marked ``skips_deferred_resize``; the framework then never runs their Filter, in an attempt
    and in a preemption dry run alike) left out, NodeName first and DeferredPodScheduling before
    NodeResourcesFit, where 1.37's default profile puts them (apis/config/v1/default_plugins.go
    applyDeferredPodScheduling). Both look at the node only: in a dry run they pass again."""
    return (node_name, deferred_pod_scheduling) + tuple(
        p for p in plugins if not getattr(p, "skips_deferred_resize", False) and p not in (node_name, deferred_pod_scheduling))


def only_resources_matter(state: ClusterState, pod: Pod, node: Node) -> bool:
    """True when, for ``pod`` on ``node``, the pod-dependent filters reduce to NodeResourcesFit:
    no affinity terms anywhere, no spread constraint of its own and no nominated pods there. A dry
    run may then count instead of filter.
    Never for a deferred resize: the pod is itself among the node's pods (``_deferred_resize_fit``)."""
    if pod.resize_deferred:
        return False
    return not ((pod.topology_spread and hard_spread(pod)) or pod.pod_affinity or pod.pod_anti_affinity
                or state.with_anti_affinity or state.nominated_to(node.name)
                or any(p.pod_anti_affinity for p in state.pods_on(node.name)))


def hard_spread(pod: Pod) -> tuple[SpreadConstraint, ...]:
    """The pod's DoNotSchedule spread constraints: the only ones its filter looks at."""
    return tuple(c for c in pod.topology_spread if c.when_unsatisfiable == "DoNotSchedule")


def _spread_counts_on(node: Node, pod: Pod, c: SpreadConstraint) -> bool:
    """Whether a node's pods count for the constraint (matchNodeInclusionPolicies): under Honor, only a
    node that passes the pod's required node affinity and nodeSelector, or whose NoSchedule and
    NoExecute taints it tolerates (the NodeAffinity and TaintToleration filters' own tests)."""
    if c.node_affinity_policy == "Honor" and not matches_required(pod, node):
        return False
    return not (c.node_taints_policy == "Honor" and untolerated(pod, node))


def _spread_matching(pods: Sequence[Pod], c: SpreadConstraint, pod: Pod) -> int:
    # countPodsMatchSelector: an empty selector counts nobody; a terminating pod is not counted. Nor
    # is the pod itself where a check supposes it placed already (a pod group's placed pod checked
    # again: upstream removes it from the snapshot first, podgrouppreemption.go).
    if c.selector.empty:
        return 0
    return sum(1 for p in pods if not p.terminating and p.namespace == pod.namespace and p.key != pod.key
               and c.selector.matches(p.label_map))


def _spread_state(state: ClusterState, pod: Pod):
    """PreFilter's counts for ``pod``, once per state: per constraint, each domain (topology value)
    and the matching pods in it, over the nodes that have every constraint's key and count for that
    constraint; and the constraints each node counts for."""
    cache = state.memo.setdefault("spread", {})
    got = cache.get(pod.key)
    if got is None:
        constraints = hard_spread(pod)
        totals: list[dict[str, int]] = [{} for _ in constraints]
        counted: dict[str, tuple[int, ...]] = {}
        for n in state.nodes:
            labels = n.label_map
            if not all(c.topology_key in labels for c in constraints):
                continue
            mine = []
            for i, c in enumerate(constraints):
                if not _spread_counts_on(n, pod, c):
                    continue
                value = labels[c.topology_key]
                totals[i][value] = totals[i].get(value, 0) + _spread_matching(state.pods_on(n.name), c, pod)
                mine.append(i)
            counted[n.name] = tuple(mine)
        got = cache[pod.key] = (constraints, totals, counted)
    return got


def pod_topology_spread(state: ClusterState, pod: Pod, node: Node, resident: Residents) -> Status:
    """PodTopologySpread's Filter for the pod's DoNotSchedule constraints: a node without a
    constraint's key is UnschedulableAndUnresolvable; otherwise the pods matching in the node's
    domain, plus the pod itself if it matches, minus the fewest in any domain (0 while there are
    fewer domains than minDomains), may exceed maxSkew by nothing, else Unschedulable. The node's
    own pods are those this check supposes (a preemption dry run removes some: upstream's
    PreFilterExtension RemovePod and AddPod keep the counts so), the other nodes' those of the state.
    Upstream keeps only two "critical paths" per constraint for the minimum, which after pods are
    added back need not be the true one; the model takes the true minimum."""
    if not pod.topology_spread:
        return OK
    constraints, totals, counted = _spread_state(state, pod)
    if not constraints:
        return OK
    labels = node.label_map
    mine = counted.get(node.name, ())
    for i, c in enumerate(constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status(UNRESOLVABLE, ("node(s) didn't match pod topology spread constraints (missing required label)",),
                          "PodTopologySpread")
        counts = totals[i]
        if i in mine:
            delta = _spread_matching(resident, c, pod) - _spread_matching(state.pods_on(node.name), c, pod)
            if delta:
                counts = {**counts, value: counts.get(value, 0) + delta}
        fewest = 0 if len(counts) < c.min_domains or not counts else min(counts.values())
        itself = 1 if c.selector.matches(pod.label_map) else 0
        if counts.get(value, 0) + itself - fewest > c.max_skew:
            return Status(UNSCHEDULABLE, ("node(s) didn't match pod topology spread constraints",), "PodTopologySpread")
    return OK


def _domain(node: Node, key: str) -> str | None:
    return node.label_map.get(key)


def term_matches(term: PodAffinityTerm, owner: Pod, other: Pod) -> bool:
    # Terms without namespaces apply to the owner's namespace.
    return other.namespace == owner.namespace and term.selector.matches(other.label_map)


def _pods_in_domain(state: ClusterState, node: Node, key: str, resident: Sequence[Pod]):
    value = _domain(node, key)
    if value is None:
        return
    yield from resident
    for n in state.nodes:
        if n.name != node.name and _domain(n, key) == value:
            yield from state.pods_on(n.name)


def skips_inter_pod_affinity(state: ClusterState, pod: Pod) -> bool:
    """InterPodAffinity's PreFilter returns Skip: the pod has no required terms of its own and no
    assigned pod's required anti-affinity term selects it on a node that has the term's
    topology key (interpodaffinity/filtering.go PreFilter, existingAntiAffinityCounts). The
    framework then leaves the plugin out of AddPod and Filter (runtime/framework.go
    SkipFilterPlugins), so a *nominated* pod's anti-affinity is never held against this pod,
    in a scheduling attempt and in a preemption dry run alike."""
    if pod.pod_affinity or pod.pod_anti_affinity:
        return False
    # PreFilter decides once per attempt; the filters ask for every node: once per state and pod.
    cache = state.memo.setdefault("inter_pod_affinity_skips", {})
    skips = cache.get(pod.key)
    if skips is None:
        skips = cache[pod.key] = not any(
            other.key != pod.key and (where := state.node_named(other.node_name)) is not None
            and any(_domain(where, t.topology_key) is not None and term_matches(t, other, pod)
                    for t in other.pod_anti_affinity)
            for other in state.with_anti_affinity)
    return skips


def inter_pod_affinity(state: ClusterState, pod: Pod, node: Node, resident: Residents) -> Status:
    if not (pod.pod_affinity or pod.pod_anti_affinity or state.with_anti_affinity or resident.anti_affinity):
        return OK  # no term anywhere that could apply
    if skips_inter_pod_affinity(state, pod):
        return OK
    for term in pod.pod_affinity:
        if any(term_matches(term, pod, p) for p in _pods_in_domain(state, node, term.topology_key, resident)
               if p.key != pod.key):
            continue
        # The first pod of a group that selects itself may go anywhere the key exists.
        # Counted over the snapshot's nodes: a pod left on a deleted node is not one of them.
        nobody_matches = not any(term_matches(term, pod, p) for p in state.pods
                                 if p.node_name and p.key != pod.key and state.node_named(p.node_name) is not None)
        if nobody_matches and term_matches(term, pod, pod) and _domain(node, term.topology_key) is not None:
            continue
        return Status(UNRESOLVABLE, ("node(s) didn't match pod affinity rules",), "InterPodAffinity")
    for term in pod.pod_anti_affinity:
        if any(term_matches(term, pod, p) for p in _pods_in_domain(state, node, term.topology_key, resident)
               if p.key != pod.key):
            return Status(UNSCHEDULABLE, ("node(s) didn't match pod anti-affinity rules",), "InterPodAffinity")
    holders = [p for p in state.with_anti_affinity if p.node_name != node.name]
    holders += [p for p in resident if p.pod_anti_affinity]
    for other in holders:
        if other.key == pod.key:
            continue
        other_node = node if other.node_name == node.name or other in resident else state.node_named(other.node_name)
        if other_node is None:
            continue
        for term in other.pod_anti_affinity:
            value = _domain(other_node, term.topology_key)
            if value is not None and _domain(node, term.topology_key) == value and term_matches(term, other, pod):
                return Status(
                    UNSCHEDULABLE, ("node(s) didn't satisfy existing pods anti-affinity rules",), "InterPodAffinity"
                )
    return OK


# Each returns Skip from PreFilter for a deferred resize (1.37, the gate on): the pod already runs
# on its node, so only whether the node has room for its new size is asked.
for _plugin in (node_unschedulable, taint_toleration, node_affinity, pod_topology_spread, inter_pod_affinity):
    _plugin.skips_deferred_resize = True

# The default profile's filter order (the subset modelled). The first three
# look only at the node, never at the pods on it, so a preemption dry run,
# which only changes the pods, need not run them again.
FILTERS: tuple[FilterPlugin, ...] = (
    node_unschedulable,
    taint_toleration,
    node_affinity,
    node_resources_fit,
    pod_topology_spread,
    inter_pod_affinity,
)
POD_DEPENDENT = FILTERS[3:]


def with_nominated(state: ClusterState, pod: Pod, node: Node, resident: Residents) -> Residents:
    """Pods nominated to ``node`` with priority >= ``pod``'s count as already there."""
    nominated = state.nominated_to(node.name)
    if not nominated:
        return resident
    extra = [o.with_(node_name=node.name) for o in nominated if o.key != pod.key and o.priority >= pod.priority]
    return resident.plus(*extra) if extra else resident


def residents_on(state: ClusterState, node: str) -> Residents:
    """The pods bound to ``node`` with their sums, computed once per state."""
    cache = state.memo.setdefault("residents", {})
    r = cache.get(node)
    if r is None:
        r = cache[node] = Residents(state.pods_on(node))
    return r


def run_filters(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod] | None = None,
                nominated: bool = True, plugins: tuple[FilterPlugin, ...] = FILTERS) -> Status:
    if resident is None:
        pods = residents_on(state, node.name)
    else:
        pods = resident if isinstance(resident, Residents) else Residents(resident)
    if nominated:
        pods = with_nominated(state, pod, node, pods)
    if pod.resize_deferred:
        plugins = for_deferred_resize(plugins)
    for plugin in plugins:
        status = plugin(state, pod, node, pods)
        if not status.ok:
            return status
    return OK


def fits(state: ClusterState, pod: Pod, node: Node, resident: Sequence[Pod] | None = None,
         node_checked: bool = False) -> bool:
    """Like RunFilterPluginsWithNominatedPods: with the nominated pods and, when
    there are any, without them too (they might not come). ``node_checked``: the
    node-only filters already passed for this pod."""
    plugins = POD_DEPENDENT if node_checked else FILTERS
    if not run_filters(state, pod, node, resident, nominated=True, plugins=plugins).ok:
        return False
    if not any(o.priority >= pod.priority and o.key != pod.key for o in state.nominated_to(node.name)):
        return True
    return run_filters(state, pod, node, resident, nominated=False, plugins=plugins).ok


def rejector(state: ClusterState, pod: Pod, node: Node, status: Status) -> str:
    """The filter plugin that turned ``node`` down: the first failing one, with the nominated pods
    counted, else the one failing without them (RunFilterPluginsWithNominatedPods runs both)."""
    if not status.ok:
        return status.plugin
    return run_filters(state, pod, node, nominated=False).plugin or status.plugin
