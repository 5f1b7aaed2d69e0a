"""When a parked pod is tried again: the cluster events a scenario causes, and which parked pods
each one wakes.

A pod that fails a scheduling attempt is parked (the unschedulable pool) together with the set
of filter plugins that turned down some node (its rejectors; the preemption step is never one:
upstream leaves PostFilter out of that set). An event wakes a parked pod when one of its
rejectors registered for the event (``EventsToRegister``) and that plugin's queueing hint
(``QueueingHintFn``) says Queue for it. Events nobody registered for wake nobody: a pending
pod created, a pod's deletion starting (its deletionTimestamp set), a nomination first set, a
PriorityClass or a PodDisruptionBudget created, changed or deleted. The periodic flush wakes
everybody parked for five minutes (``queue.retry_after_toleration``).

Read from the pinned releases' code (k8s.io/kubernetes v1.34.4, v1.35.8, v1.36.4, v1.37.2), the
handlers in ``pkg/scheduler/eventhandlers.go``, the queue's ``MoveAllToActiveOrBackoffQueue``
and its pre-check in ``pkg/scheduler/backend/queue/scheduling_queue.go``, and each plugin's
``EventsToRegister`` under ``pkg/scheduler/framework/plugins/``. Both of the kit's builds share
these rules: PreemptionToleration is a PostFilter plugin only and registers no events, and
DefaultPreemption's own hint always says QueueSkip.
"""

from __future__ import annotations

from dataclasses import dataclass

from .filter import hard_spread, matches_required, term_matches, untolerated
from .objects import Node, Pod
from .release import ANY_TERM_IN_AFFINITY_HINTS, NOMINATED_PODS_IN_AFFINITY_HINTS, TAINT_EVENT_FOR_NODE_ADD_PLUGINS, has

NODE_RESOURCES_FIT = "NodeResourcesFit"
INTER_POD_AFFINITY = "InterPodAffinity"
NODE_UNSCHEDULABLE = "NodeUnschedulable"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
# For a deferred resize only (1.37, InPlacePodVerticalScalingSchedulerPreemption): NodeName rejects
# every node but the pod's own (reference.filter.node_name), DeferredPodScheduling a node closed to
# resize preemption.
NODE_NAME = "NodeName"
DEFERRED_POD_SCHEDULING = "DeferredPodScheduling"
# Registered for node events only: no pod event the scenarios cause wakes a pod they alone rejected.
NODE_ONLY = (TAINT_TOLERATION, NODE_AFFINITY, NODE_UNSCHEDULABLE)

ASSIGNED_POD_DELETE = "AssignedPodDelete"
ASSIGNED_POD_ADD = "AssignedPodAdd"
UPDATE_POD_SCALE_DOWN = "UpdatePodScaleDown"  # a running pod resized in place to ask less (reference.resize)
UPDATE_POD_SCALE_UP = "UpdatePodScaleUp"  # ... to ask more (its resize actuated, or deferred: reference.resize)
# Node events (framework/events.go NodeSchedulingPropertiesChange): an uncordon is an
# UpdateNodeTaint; a cordon is none (only the taint the node lifecycle controller then adds).
NODE_ADD = "NodeAdd"
NODE_DELETE = "NodeDelete"
UPDATE_NODE_ALLOCATABLE = "UpdateNodeAllocatable"
UPDATE_NODE_LABEL = "UpdateNodeLabel"
UPDATE_NODE_TAINT = "UpdateNodeTaint"
UPDATE_NODE_PREEMPTION_POLICY = "UpdateNodePreemptionPolicy"  # 1.37: spec.podPreemptionPolicy changed
NODE_EVENTS = (NODE_ADD, NODE_DELETE, UPDATE_NODE_ALLOCATABLE, UPDATE_NODE_LABEL, UPDATE_NODE_TAINT,
               UPDATE_NODE_PREEMPTION_POLICY)


@dataclass(frozen=True)
class ClusterEvent:
    """An event as the scheduling queue receives it.

    ``pod`` is the object a pod event is about: for a deletion, its last version; for a changed
    nomination, the version before the change; a node event has ``node`` and ``old_node``
    instead. ``at_most`` is the queue's pre-check for the
    events it makes of a nominated pod going away (``getLEPriorityPreCheck``): only parked pods
    of that priority or lower are considered. ``what`` says it in a scenario's words.
    """

    name: str
    pod: Pod | None
    what: str
    at_most: int | None = None
    # A node event's node as it is now (None once deleted), and as it was (None when added).
    node: Node | None = None
    old_node: Node | None = None
    old_pod: Pod | None = None  # a resize's pod as it was (``pod`` is the resized one)


def assigned_pod_gone(pod: Pod) -> ClusterEvent:
    """A bound pod finally removed (deleted at once, or a terminating pod at the end of its grace
    period, a preemption victim among them): ``deleteAssignedPodFromCache``, no pre-check."""
    return ClusterEvent(ASSIGNED_POD_DELETE, pod, f"{pod.key} gone from {pod.node_name}")


def nominated_pod_deleted(pod: Pod) -> ClusterEvent:
    """A pending pod with a nomination deleted: ``deletePodFromSchedulingQueue`` moves parked pods
    as for an assigned pod's deletion, but only those of at most its priority. Without a
    nomination a pending pod's deletion moves nobody."""
    return ClusterEvent(ASSIGNED_POD_DELETE, pod, f"{pod.key}, nominated to {pod.nominated_node_name}, deleted",
                        at_most=pod.priority)


def nomination_changed(before: Pod, now: str) -> ClusterEvent:
    """A pending pod's nomination moved or cleared (``updatePodInSchedulingQueue`` with
    ``hasNominatedNodeNameChanged``): as if the pod, nominated, had been deleted. Setting a first
    nomination is no such event."""
    change = f"moved to {now}" if now else "cleared"
    return ClusterEvent(ASSIGNED_POD_DELETE, before, f"{before.key}'s nomination to {before.nominated_node_name} {change}",
                        at_most=before.priority)


def pod_bound(pod: Pod) -> ClusterEvent:
    """A pod bound to a node (or created on one): ``addAssignedPodToCache``, no pre-check."""
    return ClusterEvent(ASSIGNED_POD_ADD, pod, f"{pod.key} bound to {pod.node_name}")


def pod_scaled_down(old: Pod, new: Pod) -> ClusterEvent:
    """A running pod resized to ask less of some resource: ``updatePodInCache``'s
    UpdatePodScaleDown, no pre-check."""
    return ClusterEvent(UPDATE_POD_SCALE_DOWN, new, f"{new.key} on {new.node_name} resized to ask less", old_pod=old)


def pod_scaled_up(old: Pod, new: Pod) -> ClusterEvent:
    """A running pod that asks more of some resource than before (``updatePodInCache``'s
    UpdatePodScaleUp): its resize actuated, or deferred (the cache counts a deferred resize at the
    spec's size). Only a deferred resize parked on the same node listens (1.37, the gate on)."""
    return ClusterEvent(UPDATE_POD_SCALE_UP, new, f"{new.key} on {new.node_name} resized to ask more", old_pod=old)


def node_added(node: Node) -> ClusterEvent:
    """``addNodeToCache``: no pre-check with queueing hints on."""
    return ClusterEvent(NODE_ADD, None, f"node {node.name} added", node=node)


def node_updated(action: str, old: Node, new: Node) -> ClusterEvent:
    """One of the events ``updateNodeInCache`` makes of a node's update, with both versions."""
    return ClusterEvent(action, None, f"node {new.name} changed ({action})", node=new, old_node=old)


def node_deleted(node: Node) -> ClusterEvent:
    """``deleteNodeFromCache``: of the modelled plugins none registers it (PodTopologySpread does)."""
    return ClusterEvent(NODE_DELETE, None, f"node {node.name} deleted", old_node=node)


def _taint_fallback(event: ClusterEvent, plugin: str, release: str) -> str:
    """Before 1.37 the scheduler gives a plugin that registers NodeAdd but not UpdateNodeTaint
    an UpdateNodeTaint registration whose hint always says Queue (``scheduler.go``
    buildQueueingHintMap, kubernetes#109437): any taint change, or an uncordon, wakes its pods."""
    if event.name == UPDATE_NODE_TAINT and not has(release, TAINT_EVENT_FOR_NODE_ADD_PLUGINS):
        return f"{plugin}: any taint change on {event.node.name} (the pre-1.37 UpdateNodeTaint registration)"
    return ""


def node_unschedulable(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``nodeunschedulable`` isSchedulableAfterNodeChange (Add|UpdateNodeTaint): a node added
    schedulable, or one uncordoned. Tolerations are not looked at."""
    node, old = event.node, event.old_node
    if event.name == NODE_ADD and not node.unschedulable:
        return f"{NODE_UNSCHEDULABLE}: {node.name} added schedulable"
    if event.name == UPDATE_NODE_TAINT and old.unschedulable and not node.unschedulable:
        return f"{NODE_UNSCHEDULABLE}: {node.name} uncordoned"
    return ""


def taint_toleration(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``tainttoleration`` isSchedulableAfterNodeChange (Add|UpdateNodeTaint): the pod tolerates
    every NoSchedule and NoExecute taint of the node now, and did not before (a node added
    counts as not tolerated before)."""
    if event.name not in (NODE_ADD, UPDATE_NODE_TAINT):
        return ""
    was = event.old_node is None or untolerated(parked, event.old_node)
    if was and not untolerated(parked, event.node):
        return f"{TAINT_TOLERATION}: it tolerates {event.node.name}'s taints now"
    return ""


def node_affinity(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``nodeaffinity`` isSchedulableAfterNodeChange (Add|UpdateNodeLabel): the node matches the
    pod's nodeSelector and required node affinity now, and did not before."""
    if event.name not in (NODE_ADD, UPDATE_NODE_LABEL):
        return _taint_fallback(event, NODE_AFFINITY, release)
    if not matches_required(parked, event.node):
        return ""
    if event.old_node is not None and matches_required(parked, event.old_node):
        return ""
    return f"{NODE_AFFINITY}: {event.node.name} matches its node selector now"


def _fits_empty(node: Node, pod: Pod) -> bool:
    # isFit: the node with no pods on it, allocatable only.
    alloc = node.allocatable_map
    return alloc.get("pods", 0) >= 1 and all(alloc.get(r, 0) >= q for r, q in pod.desired_map.items() if q)


def _resources_fit_node(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``noderesources/fit.go`` isSchedulableAfterNodeChange (Add|UpdateNodeAllocatable): the pod
    fits the node were it empty, and, for an update, the node's pod count or its allocatable of
    some resource the pod requests grew (not necessarily the one that was short)."""
    if event.name not in (NODE_ADD, UPDATE_NODE_ALLOCATABLE):
        return _taint_fallback(event, NODE_RESOURCES_FIT, release)
    node, old = event.node, event.old_node
    if parked.resize_deferred and node.name != parked.node_name:
        return ""  # a deferred resize is bound to its node: another node's change cannot help it (1.37)
    if not _fits_empty(node, parked):
        return ""
    if old is not None:
        new_alloc, old_alloc = node.allocatable_map, old.allocatable_map
        grew = new_alloc.get("pods", 0) > old_alloc.get("pods", 0) or any(
            q and new_alloc.get(r, 0) > old_alloc.get(r, 0) for r, q in parked.desired_map.items())
        if not grew:
            return ""
    return f"{NODE_RESOURCES_FIT}: it would fit {node.name} were the node empty"


def _label_changed(key: str, old: Node, new: Node) -> bool:
    return old.label_map.get(key) != new.label_map.get(key)


def _affinity_node(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``interpodaffinity/plugin.go`` isSchedulableAfterNodeChange (Add|UpdateNodeLabel), over the
    pod's own required terms' topology keys: for affinity, the key appears or changes; for
    anti-affinity, any node added, or the key removed or changed. A pod with no terms of its
    own is never woken by a node."""
    if event.name not in (NODE_ADD, UPDATE_NODE_LABEL):
        return _taint_fallback(event, INTER_POD_AFFINITY, release)
    node, old = event.node, event.old_node
    for t in parked.pod_affinity:
        has_key = t.topology_key in node.label_map
        if has_key and (old is None or _label_changed(t.topology_key, old, node)):
            return f"{INTER_POD_AFFINITY}: {node.name} has its affinity's topology {t.topology_key} now"
    for t in parked.pod_anti_affinity:
        if old is None:
            return f"{INTER_POD_AFFINITY}: {node.name} added (its anti-affinity may allow it)"
        if t.topology_key in old.label_map and _label_changed(t.topology_key, old, node):
            return f"{INTER_POD_AFFINITY}: {node.name}'s {t.topology_key} changed"
    return ""


def _all_or_any(release: str):
    return any if has(release, ANY_TERM_IN_AFFINITY_HINTS) else all


def _matches_terms(terms, owner: Pod, other: Pod, release: str) -> bool:
    # An empty set of terms matches nothing (podMatchesAllAffinityTerms).
    return bool(terms) and _all_or_any(release)(term_matches(t, owner, other) for t in terms)


def node_resources_fit(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``noderesources/fit.go`` isSchedulableAfterPodEvent (1.37: ...AfterAssignedPodDelete): a pod
    that held room (bound, or nominated) going away may make room for anybody."""
    if event.name in NODE_EVENTS:
        return _resources_fit_node(event, parked, release)
    # A deferred resize (1.37, the gate on) is bound to its node: a pod elsewhere changes nothing
    # for it (isSchedulableAfterAssignedPodDelete, haveEnoughRelevantResourcesDecreased).
    elsewhere = parked.resize_deferred and event.pod.node_name != parked.node_name
    if event.name == ASSIGNED_POD_DELETE and (event.pod.node_name or event.pod.nominated_node_name):
        return "" if elsewhere else f"{NODE_RESOURCES_FIT}: the room {event.pod.key} held may fit it"
    if event.name == UPDATE_POD_SCALE_DOWN and event.old_pod is not None and not elsewhere:
        # isSchedulableAfterPodScaleDown (1.37 ...AssignedPodScaleDown): only a resource the
        # parked pod asks for, and that the resized pod now asks less of, counts.
        less = sorted(r for r, q in parked.desired_map.items()
                      if q and event.pod.request_map.get(r, 0) < event.old_pod.request_map.get(r, 0))
        if event.pod.node_name and less:
            return f"{NODE_RESOURCES_FIT}: {event.pod.key} now asks less {', '.join(less)}"
    if event.name == UPDATE_POD_SCALE_UP and parked.resize_deferred and not elsewhere:
        # isSchedulableAfterAssignedPodScaleUp (registered with the gate): room it waited for may be
        # gone, so it tries again, to preempt.
        return f"{NODE_RESOURCES_FIT}: {event.pod.key} asks more on {parked.node_name}"
    return ""


def inter_pod_affinity(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``interpodaffinity/plugin.go`` isSchedulableAfterPodChange (1.37:
    isSchedulableAfterAssignedPodChange). Before 1.36 an unbound pod's event is skipped even when
    it was nominated; the deleted pod's own anti-affinity against the parked pod counts from 1.36;
    "all terms" became "any term" in 1.37."""
    if event.name in NODE_EVENTS:
        return _affinity_node(event, parked, release)
    other = event.pod
    counted = other.node_name or (other.nominated_node_name and has(release, NOMINATED_PODS_IN_AFFINITY_HINTS))
    if not counted:
        return ""
    if event.name == ASSIGNED_POD_ADD:
        if _matches_terms(parked.pod_affinity, parked, other, release):
            return f"{INTER_POD_AFFINITY}: {other.key} matches its pod affinity"
        return ""
    if _matches_terms(parked.pod_anti_affinity, parked, other, release):
        return f"{INTER_POD_AFFINITY}: {other.key} matched its pod anti-affinity"
    if has(release, NOMINATED_PODS_IN_AFFINITY_HINTS) and _matches_terms(other.pod_anti_affinity, other, parked, release):
        return f"{INTER_POD_AFFINITY}: {other.key}'s anti-affinity matched it"
    return ""


def _spread_keys_on(node: Node | None, constraints) -> bool:
    return node is not None and all(c.topology_key in node.label_map for c in constraints)


def pod_topology_spread(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``podtopologyspread/plugin.go`` (the same from 1.34 to 1.37): isSchedulableAfterAssignedPodChange
    (AssignedPod Add|Delete; a nominated pod's deletion or nomination change counts, as the queue
    makes it one): a pod bound or nominated, in the parked pod's namespace, that one of its
    DoNotSchedule constraints selects; isSchedulableAfterNodeChange (Node Add|Delete|UpdateNodeLabel|
    UpdateNodeTaint): a node with every constraint's key added or deleted, or one that gains or
    loses the keys, or has them and changes one or its taints."""
    constraints = hard_spread(parked)
    if not constraints:
        return ""  # its PreFilter skips such a pod: the plugin never rejected it
    if event.name in (ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE):
        other = event.pod
        if not (other.node_name or other.nominated_node_name) or other.namespace != parked.namespace:
            return ""
        if any(c.selector.matches(other.label_map) for c in constraints):
            return f"{POD_TOPOLOGY_SPREAD}: {other.key} counts in its spread"
        return ""
    if event.name not in (NODE_ADD, NODE_DELETE, UPDATE_NODE_LABEL, UPDATE_NODE_TAINT):
        return ""
    new, old = event.node, event.old_node
    if event.name == NODE_ADD:
        return f"{POD_TOPOLOGY_SPREAD}: {new.name} added in its topology" if _spread_keys_on(new, constraints) else ""
    if event.name == NODE_DELETE:
        return f"{POD_TOPOLOGY_SPREAD}: {old.name} deleted from its topology" if _spread_keys_on(old, constraints) else ""
    was, now = _spread_keys_on(old, constraints), _spread_keys_on(new, constraints)
    if was != now:
        return f"{POD_TOPOLOGY_SPREAD}: {new.name} {'joins' if now else 'leaves'} its topology"
    if now and (any(old.label_map.get(c.topology_key) != new.label_map.get(c.topology_key) for c in constraints)
                or set(old.taints) != set(new.taints)):
        return f"{POD_TOPOLOGY_SPREAD}: {new.name}'s topology or taints changed"
    return ""


def node_name(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``nodename`` registers NodeAdd with no hint, which is Queue: any node added retries the
    pods it rejected: only a pod that names a node (a deferred resize, whose attempt it narrows to
    its own node) is ever rejected by it."""
    if event.name == NODE_ADD and parked.node_name:
        return f"{NODE_NAME}: node {event.node.name} added"
    return ""


def _closed(node: Node) -> bool:
    return bool(node.resize_preemption_disabled)


def deferred_pod_scheduling(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``deferredpodscheduling`` (1.37) isSchedulableAfterNodeChange (UpdateNodePreemptionPolicy)
    and isSchedulableAfterNodeAdd: the pod's own node open to resize preemption now, having been
    closed before (an added node counts as closed before); another node never."""
    if event.name not in (NODE_ADD, UPDATE_NODE_PREEMPTION_POLICY) or not parked.resize_deferred:
        return ""
    node = event.node
    if node.name != parked.node_name or _closed(node):
        return ""
    if event.old_node is None or _closed(event.old_node):
        return f"{DEFERRED_POD_SCHEDULING}: {node.name} allows resize preemption now"
    return ""


# Each modelled filter plugin's queueing hints: pod events for the first two, node events for all.
HINTS = {NODE_RESOURCES_FIT: node_resources_fit, INTER_POD_AFFINITY: inter_pod_affinity,
         NODE_UNSCHEDULABLE: node_unschedulable, TAINT_TOLERATION: taint_toleration, NODE_AFFINITY: node_affinity,
         NODE_NAME: node_name, DEFERRED_POD_SCHEDULING: deferred_pod_scheduling,
         POD_TOPOLOGY_SPREAD: pod_topology_spread}


def woken_by(event: ClusterEvent, parked: Pod, rejectors: frozenset[str], release: str) -> str:
    """Why ``event`` moves the parked pod back to the queue, or "" when it stays parked.

    The first rejector whose hint says Queue decides (``isPodWorthRequeuing``); rejectors that
    registered no such event, or whose hint says QueueSkip, leave the pod where it is.
    """
    if event.at_most is not None and parked.priority > event.at_most:
        return ""
    for plugin in sorted(rejectors):
        hint = HINTS.get(plugin)
        why = hint(event, parked, release) if hint is not None else ""
        if why:
            return why
    return ""


__all__ = ["ClusterEvent", "assigned_pod_gone", "pod_scaled_down", "pod_scaled_up", "nominated_pod_deleted", "nomination_changed", "pod_bound", "woken_by",
           "node_added", "node_updated", "node_deleted", "HINTS", "NODE_ONLY", "NODE_EVENTS"]
