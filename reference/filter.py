"""Filter plugins, as far as the scenarios need them.

What matters most here is the status code: a node rejected as
``Unschedulable`` may become feasible by preempting pods on it and is a
preemption candidate; one rejected as ``UnschedulableAndUnresolvable`` never
is. Plugins run in the default profile's order and the first failure decides,
as in the framework.

Upstream: pkg/scheduler/framework/plugins/{nodeunschedulable,tainttoleration,
nodeaffinity,noderesources,interpodaffinity}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from .objects import ClusterState, Node, Pod, PodAffinityTerm, Taint

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
FilterPlugin = Callable[[ClusterState, Pod, Node], Status]


def node_unschedulable(state: ClusterState, pod: Pod, node: Node) -> Status:
    taint = Taint("node.kubernetes.io/unschedulable", "NoSchedule")
    if node.unschedulable and not any(t.tolerates(taint) for t in pod.tolerations):
        return Status(UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable")
    return OK


def taint_toleration(state: ClusterState, pod: Pod, node: Node) -> Status:
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in pod.tolerations):
            return Status(UNRESOLVABLE, ("node(s) had untolerated taint(s)",), "TaintToleration")
    return OK


def node_affinity(state: ClusterState, pod: Pod, node: Node) -> Status:
    labels = node.label_map
    selector_ok = all(labels.get(k) == v for k, v in pod.node_selector)
    affinity_ok = not pod.node_affinity or any(all(r.matches(labels) for r in term) for term in pod.node_affinity)
    if selector_ok and affinity_ok:
        return OK
    return Status(UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",), "NodeAffinity")


def _resident(state: ClusterState, node: Node, pod: Pod) -> tuple[Pod, ...]:
    # Terminating pods still hold their resources until they are gone.
    return tuple(p for p in state.pods_on(node.name) if p.key != pod.key)


def node_resources_fit(state: ClusterState, pod: Pod, node: Node) -> Status:
    alloc = node.allocatable_map
    resident = _resident(state, node, pod)
    reasons, unresolvable = [], False
    if len(resident) + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    for name, want in sorted(pod.request_map.items()):
        if want <= 0:
            continue
        used = sum(p.request_map.get(name, 0) for p in resident)
        have = alloc.get(name, 0)
        if want > have - used:
            reasons.append(f"Insufficient {name}")
            # Even an empty node could not hold it: preemption cannot help.
            unresolvable |= want > have
    if not reasons:
        return OK
    return Status(UNRESOLVABLE if unresolvable else UNSCHEDULABLE, tuple(reasons), "NodeResourcesFit")


def _domain(node: Node, key: str) -> str | None:
    return node.label_map.get(key)


def _term_matches(state: ClusterState, term: PodAffinityTerm, owner: Pod, other: Pod) -> bool:
    # Terms without namespaces apply to the owner's namespace.
    return other.namespace == owner.namespace and term.selector.matches(other.label_map)


def _pods_in_domain(state: ClusterState, node: Node, key: str):
    value = _domain(node, key)
    if value is None:
        return
    for n in state.nodes:
        if _domain(n, key) == value:
            yield from state.pods_on(n.name)


def inter_pod_affinity(state: ClusterState, pod: Pod, node: Node) -> Status:
    others = [p for p in state.pods if p.node_name and p.key != pod.key]
    for term in pod.pod_affinity:
        in_domain = [p for p in _pods_in_domain(state, node, term.topology_key) if p.key != pod.key]
        if any(_term_matches(state, term, pod, p) for p in in_domain):
            continue
        # The first pod of a group that selects itself may go anywhere the key exists.
        nobody_matches = not any(_term_matches(state, term, pod, p) for p in others)
        if nobody_matches and _term_matches(state, term, pod, pod) and _domain(node, term.topology_key) is not None:
            continue
        return Status(UNRESOLVABLE, ("node(s) didn't match pod affinity rules",), "InterPodAffinity")
    for term in pod.pod_anti_affinity:
        if any(_term_matches(state, term, pod, p) for p in _pods_in_domain(state, node, term.topology_key) if p.key != pod.key):
            return Status(UNSCHEDULABLE, ("node(s) didn't match pod anti-affinity rules",), "InterPodAffinity")
    for other in others:
        other_node = state.node_named(other.node_name)
        if other_node is None:
            continue
        for term in other.pod_anti_affinity:
            value = _domain(other_node, term.topology_key)
            if value is not None and _domain(node, term.topology_key) == value and _term_matches(state, term, other, pod):
                return Status(
                    UNSCHEDULABLE, ("node(s) didn't satisfy existing pods anti-affinity rules",), "InterPodAffinity"
                )
    return OK


# The default profile's filter order (the subset modelled).
FILTERS: tuple[FilterPlugin, ...] = (
    node_unschedulable,
    taint_toleration,
    node_affinity,
    node_resources_fit,
    inter_pod_affinity,
)


def with_nominated(state: ClusterState, pod: Pod, node: Node) -> ClusterState:
    """Pods nominated to ``node`` with priority >= ``pod``'s count as already there."""
    for other in state.pods:
        if (
            other.nominated_node_name == node.name
            and not other.node_name
            and other.key != pod.key
            and other.priority >= pod.priority
        ):
            state = state.with_pod(other.with_(node_name=node.name))
    return state


def run_filters(state: ClusterState, pod: Pod, node: Node, nominated: bool = True) -> Status:
    view = with_nominated(state, pod, node) if nominated else state
    for plugin in FILTERS:
        status = plugin(view, pod, node)
        if not status.ok:
            return status
    return OK


def fits(state: ClusterState, pod: Pod, node: Node) -> bool:
    # Like RunFilterPluginsWithNominatedPods: with the nominated pods and, when
    # there are any, without them too (they might not come).
    if not run_filters(state, pod, node, nominated=True).ok:
        return False
    return run_filters(state, pod, node, nominated=False).ok
