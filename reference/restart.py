"""A scheduler restarted: what the API keeps and what the new scheduler rebuilds.

Durable, in the API: each pod's nomination (status.nominatedNodeName), a victim's
deletionTimestamp and DisruptionTarget condition, bindings. Lost with the process: the queue
(which pods are parked, by which plugins, since when; backoff counts), an in-flight preemption
(a pod group's victims it was waiting for). The new scheduler lists every pod on start: each
pending pod enters the active queue at once, so each is tried again (in priority order; equal
priorities in the order the informer lists them, which the model does not know), and the
nominator is rebuilt from the nominations the pods carry. So a restart retries at once a pod
that was waiting for an event or the flush (``pkg/scheduler/eventhandlers.go`` addPodToSchedulingQueue
on the informer's initial list; ``backend/queue`` is new; ``nominator`` filled from
status.nominatedNodeName by the same handler).
"""

from __future__ import annotations

from dataclasses import replace

from .world import World


def restart(world: World, graceful: bool = False) -> World:
    """The scheduler stopped (SIGTERM) or killed (SIGKILL) and started again: nothing it had in
    memory survives; every pending pod is tried again at once. A terminating victim stays
    terminating and its room stays held until it is gone, as before."""
    from .scheduler import run_queue

    how = "stopped" if graceful else "killed"
    pending = {p.key for p in world.state.pending()}
    world = replace(world, parked=(), rejectors=(), failures=(), queued=(), group_preemptions=(),
                    state=replace(world.state, pods=tuple(p.with_(queued_at=world.now) if p.key in pending else p
                                                          for p in world.state.pods)))
    world = world.note(f"the scheduler is {how} and started again: its queue is rebuilt from the API, every "
                       f"pending pod ({', '.join(sorted(pending)) or 'none'}) tried again at once; nominations, "
                       "terminating victims and bindings are kept")
    return run_queue(world, pending)


def pause(world: World, seconds: float) -> World:
    """The scheduler frozen for ``seconds`` (SIGSTOP): the cluster goes on (victims' grace periods
    end, their pods are removed) but the scheduler neither sees nor does anything; when it goes on
    its informers deliver what happened, each event wakes whom it wakes, and the flush that was
    due runs, all at once."""
    from datetime import timedelta

    from .requeue import assigned_pod_gone
    from .scheduler import run_queue
    from .world import remove, wake

    until = world.now + timedelta(seconds=seconds)
    events = []
    for pod in sorted((p for p in world.state.pods if p.deletion_timestamp is not None
                       and p.deletion_timestamp <= until), key=lambda p: p.deletion_timestamp):
        world = remove(world, pod.key)
        if pod.node_name:
            events.append(assigned_pod_gone(pod))
    world = replace(world, now=until).note(f"the scheduler is frozen for {seconds:g} s: what happened meanwhile "
                                           "reaches it when it goes on")
    for event in events:
        world = wake(world, event)
    due = {k for k, at in world.parked if at + world.flush_after <= until}
    world = replace(world, parked=tuple(p for p in world.parked if p[0] not in due))
    return run_queue(world, due)


__all__ = ["restart", "pause"]
