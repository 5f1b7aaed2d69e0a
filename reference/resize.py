"""In-place pod resize: a running pod's cpu or memory request changed through the pods/resize
subresource, and what the scheduler does with it.

The scheduler counts an assigned pod by its requests, the larger of the spec's and what the
kubelet reports it allocated and actuated (``component-helpers/resource`` PodRequests with
UseStatusResources, InPlacePodVerticalScaling on by default since 1.33). The model's kubelet
actuates a resize at once, as the kit's kwok stages do (harness/data/kwok-stages.yaml): a node
with room for it (an infeasible resize is not modelled). The update that brings the
actuated resources down is an ``UpdatePodScaleDown`` event when a request went down
(``framework.PodSchedulingPropertiesChange``); NodeResourcesFit alone registers it among the
modelled plugins (``noderesources/fit.go`` EventsToRegister, v1.34.4 to v1.37.2). A scale-up
wakes nobody but a deferred resize parked on the same node: 1.37's UpdatePodScaleUp hints are
behind the InPlacePodVerticalScalingSchedulerPreemption gate (alpha, off).

A resize the kubelet cannot give room for yet it defers (``defer_resize``: PodResizePending,
reason Deferred). The cache counts the pod at the larger of its new spec and what the kubelet
allocated, whatever the gate. From 1.37 with the gate on the scheduler also queues the pod and
schedules it again, bound to its node: where the node has no room it preempts lower-priority
pods of that node (reference.cycle, the deferred attempt; reference.filter, its filters), and it
leaves the queue when the kubelet drops the condition (``resize_no_longer_deferred``) or the pod
is gone (``eventhandlers.go`` addPod, updatePod, deletePod).
"""

from __future__ import annotations

from dataclasses import replace

from .objects import Pod
from .release import DEFERRED_RESIZE_PREEMPTION, has
from .requeue import pod_scaled_down, pod_scaled_up
from .world import World, set_pod, wake


def resize_pod(world: World, key: str, requests: dict[str, int]) -> World:
    """``key``'s requests of the resources in ``requests`` set to those amounts."""
    from .scheduler import run_queue

    pod = world.state.pod_keyed(key)
    if pod is None or not pod.node_name or pod.terminating:
        raise NotRunning(f"{key} is not running by then: only a running pod is resized in place")
    resized: Pod = pod.with_(requests=tuple(sorted({**pod.request_map, **requests}.items())))
    changes = ", ".join(f"{r} {pod.request_map.get(r, 0)} -> {q}" for r, q in sorted(requests.items()))
    world = set_pod(world, resized).note(f"{key} resized in place on {pod.node_name}: {changes}")
    world = _resized_events(world, pod, resized)
    return run_queue(world, set())


def _resized_events(world: World, old: Pod, new: Pod) -> World:
    """The events the cache makes of a running pod counted at new requests: UpdatePodScaleDown when
    one went down, UpdatePodScaleUp when one went up (events.go extractPodScaleDown, extractPodScaleUp)."""
    before, after = old.request_map, new.request_map
    if any(after.get(r, 0) < q for r, q in before.items()):
        world = wake(world, pod_scaled_down(old, new))
    if any(q > before.get(r, 0) for r, q in after.items()):
        world = wake(world, pod_scaled_up(old, new))
    return world


def defer_resize(world: World, key: str, requests: dict[str, int], allocated: dict[str, int] | None = None) -> World:
    """``key``'s spec asks ``requests`` of those resources, and the kubelet defers the resize: it keeps
    ``allocated`` (by default what the pod had: its requests, or what was allocated if a resize of it
    is deferred already). The cache counts the larger of each; with the gate the pod is queued."""
    from .scheduler import run_queue

    pod = world.state.pod_keyed(key)
    if pod is None or not pod.node_name or pod.terminating:
        raise NotRunning(f"{key} is not running by then: only a running pod is resized in place")
    kept = dict(allocated if allocated is not None else (pod.allocated if pod.resize_deferred else pod.requests))
    spec = {**pod.desired_map, **requests}
    counted = {r: max(spec.get(r, 0), kept.get(r, 0)) for r in sorted({*spec, *kept})}
    deferred = pod.with_(requests=tuple(counted.items()), deferred_requests=tuple(sorted(spec.items())),
                         allocated=tuple(sorted(kept.items())))
    changes = ", ".join(f"{r} {pod.desired_map.get(r, 0)} -> {q}" for r, q in sorted(requests.items()))
    world = set_pod(world, deferred).note(f"{key}'s resize on {pod.node_name} deferred by the kubelet: {changes}")
    world = _resized_events(world, pod, deferred)
    if not has(world.release, DEFERRED_RESIZE_PREEMPTION, world.gates):
        return run_queue(world, set())
    if pod.resize_deferred and key in world.parked_keys():
        # Already queued (updatePod: SchedulingQueue.Update): its own update is one of the events
        # above, heard by its rejectors as any pod's on its node would be.
        return run_queue(world, set())
    # updatePod: a bound pod turning deferred is added to the scheduling queue.
    return run_queue(world, {key})


def resize_no_longer_deferred(world: World, key: str) -> World:
    """The kubelet drops the pod's PodResizePending condition (it actuated the resize, or no longer
    waits to): the pod leaves the scheduling queue (updatePod: deletePodFromSchedulingQueue). What
    the cache counts for it does not change with the condition."""
    pod = world.state.pod_keyed(key)
    if pod is None or not pod.resize_deferred:
        raise NotRunning(f"{key} has no deferred resize by then")
    world = set_pod(world, pod.with_(deferred_requests=(), allocated=())).note(f"{key}'s resize no longer deferred")
    return replace(world, parked=tuple(p for p in world.parked if p[0] != key),
                   queued=tuple(k for k in world.queued if k != key))


class NotRunning(ValueError):
    """A scenario's fault: its resize names a pod that is pending, terminating or gone by then."""


__all__ = ["resize_pod", "defer_resize", "resize_no_longer_deferred", "NotRunning"]
