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

from .filter import term_matches
from .objects import Pod
from .release import NOMINATED_PODS_IN_AFFINITY_HINTS, ANY_TERM_IN_AFFINITY_HINTS, has

NODE_RESOURCES_FIT = "NodeResourcesFit"
INTER_POD_AFFINITY = "InterPodAffinity"
# Registered for node events only: no pod event the scenarios cause wakes a pod they alone rejected.
NODE_ONLY = ("TaintToleration", "NodeAffinity", "NodeUnschedulable")

ASSIGNED_POD_DELETE = "AssignedPodDelete"
ASSIGNED_POD_ADD = "AssignedPodAdd"


@dataclass(frozen=True)
class ClusterEvent:
    """An event as the scheduling queue receives it.

    ``pod`` is the object the event is about: for a deletion, its last version; for a changed
    nomination, the version before the change. ``at_most`` is the queue's pre-check for the
    events it makes of a nominated pod going away (``getLEPriorityPreCheck``): only parked pods
    of that priority or lower are considered. ``what`` says it in a scenario's words.
    """

    name: str
    pod: Pod
    what: str
    at_most: int | None = None


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


def _all_or_any(release: str):
    return any if has(release, ANY_TERM_IN_AFFINITY_HINTS) else all


def _matches_terms(terms, owner: Pod, other: Pod, release: str) -> bool:
    # An empty set of terms matches nothing (podMatchesAllAffinityTerms).
    return bool(terms) and _all_or_any(release)(term_matches(t, owner, other) for t in terms)


def node_resources_fit(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``noderesources/fit.go`` isSchedulableAfterPodEvent (1.37: ...AfterAssignedPodDelete): a pod
    that held room (bound, or nominated) going away may make room for anybody."""
    if event.name == ASSIGNED_POD_DELETE and (event.pod.node_name or event.pod.nominated_node_name):
        return f"{NODE_RESOURCES_FIT}: the room {event.pod.key} held may fit it"
    return ""


def inter_pod_affinity(event: ClusterEvent, parked: Pod, release: str) -> str:
    """``interpodaffinity/plugin.go`` isSchedulableAfterPodChange (1.37:
    isSchedulableAfterAssignedPodChange). Before 1.36 an unbound pod's event is skipped even when
    it was nominated; the deleted pod's own anti-affinity against the parked pod counts from 1.36;
    "all terms" became "any term" in 1.37."""
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


HINTS = {NODE_RESOURCES_FIT: node_resources_fit, INTER_POD_AFFINITY: inter_pod_affinity}


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


__all__ = ["ClusterEvent", "assigned_pod_gone", "nominated_pod_deleted", "nomination_changed", "pod_bound", "woken_by",
           "HINTS", "NODE_ONLY"]
