"""In-place pod resize: a running pod's cpu or memory request changed through the pods/resize
subresource, and what the scheduler does with it.

The scheduler counts an assigned pod by its requests, the larger of the spec's and what the
kubelet reports it allocated and actuated (``component-helpers/resource`` PodRequests with
UseStatusResources, InPlacePodVerticalScaling on by default since 1.33). The model's kubelet
actuates a resize at once, as the kit's kwok stages do (harness/data/kwok-stages.yaml): a node
with room for it (a deferred or infeasible resize is not modelled). The update that brings the
actuated resources down is an ``UpdatePodScaleDown`` event when a request went down
(``framework.PodSchedulingPropertiesChange``); NodeResourcesFit alone registers it among the
modelled plugins (``noderesources/fit.go`` EventsToRegister, v1.34.4 to v1.37.2). A scale-up
wakes nobody: 1.37's UpdatePodScaleUp hints are behind the InPlacePodVerticalScalingSchedulerPreemption
gate (off) and are about pods whose resize the kubelet deferred.
"""

from __future__ import annotations

from .objects import Pod
from .requeue import pod_scaled_down
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
    if any(q < pod.request_map.get(r, 0) for r, q in requests.items()):
        world = wake(world, pod_scaled_down(pod, resized))
    return run_queue(world, set())


class NotRunning(ValueError):
    """A scenario's fault: its resize names a pod that is pending, terminating or gone by then."""


__all__ = ["resize_pod", "NotRunning"]
