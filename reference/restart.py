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

from .world import World, to_schedule


def restart(world: World, graceful: bool = False, how: str = "") -> World:
    """The scheduler stopped (SIGTERM) or killed (SIGKILL) and started again: nothing it had in
    memory survives; every pending pod is tried again at once. A terminating victim stays
    terminating and its room stays held until it is gone, as before."""
    from .scheduler import run_queue

    how = how or ("is stopped and started again" if graceful else "is killed and started again")
    # With InPlacePodVerticalScalingSchedulerPreemption (1.37) the informer's list queues a running pod
    # whose resize is deferred too (eventhandlers.go addPod).
    pending = {p.key for p in world.state.pending()} | {
        p.key for p in world.state.pods if p.resize_deferred and to_schedule(world, p)}
    world = replace(world, parked=(), rejectors=(), failures=(), queued=(),
                    state=replace(world.state, pods=tuple(p.with_(queued_at=world.now) if p.key in pending else p
                                                          for p in world.state.pods)))
    world = world.note(f"the scheduler {how}: its queue is rebuilt from the API, every "
                       f"pending pod ({', '.join(sorted(pending)) or 'none'}) tried again at once; nominations, "
                       "terminating victims and bindings are kept")
    return run_queue(world, pending)


def partly_written(world: World, preemptor: str, undone: frozenset[str], nomination_lost: bool) -> World:
    """The world a preemption leaves when the scheduler stops between its API writes: the
    ``undone`` victims marked (DisruptionTarget) but never deleted, and, if ``nomination_lost``,
    the preemptor's nomination never written. The writes are not ordered (v1.35.8
    ``preemption.go`` prepareCandidateAsync: a goroutine deletes every victim but the last in
    parallel, then the last, while the scheduling goroutine writes the nomination), so any of
    them may be missing. Each undone victim keeps running and stays a victim (its mark)."""
    pods = []
    for p in world.state.pods:
        if p.key in undone:
            p = p.with_(deletion_timestamp=None)
        elif p.key == preemptor and nomination_lost:
            p = p.with_(nominated_node_name="")
        pods.append(p)
    lost = ", ".join(sorted(undone)) or "none"
    world = replace(world, state=replace(world.state, pods=tuple(pods)))
    return world.note(f"the scheduler stopped between the preemption's writes: victims not deleted: {lost}; "
                      + ("the nomination was not written" if nomination_lost else "the nomination was written"))


def failover(world: World, lease: float, taken: bool = False) -> World:
    """The leader loses its lease for good; a standby (leader election on, ``cmd/kube-scheduler/app/server.go``:
    its informers and queue run before it leads) takes the lease once it expires, ``lease``
    seconds on. The leader is killed, or (``taken``) its Lease is rewritten to name another
    holder: it fails its next renewal and exits within its renew deadline (server.go
    OnStoppedLeading: "leaderelection lost"), before the taken lease runs out; at a quiet moment it
    has nothing to do meanwhile. Nobody schedules until the standby leads: victims whose grace
    ends are removed, and nothing binds. The new leader's queue holds every pending pod (it never
    tried one) and its nominator the pods' nominations, so, as after a restart, every pending pod
    is tried at once."""
    world, _ = unseen(world, lease)
    lost = "loses its lease to another holder and stops" if taken else "is killed"
    return restart(world, how=f"leader {lost}, and the standby leads {lease:g} s later (its lease)")


def restart_apiserver(world: World) -> World:
    """The API server stopped and started again on the same etcd: nothing stored is lost, and no
    write happens while it is down (kwok's terminations wait too). Each component's watch resumes
    from the last version it saw, or lists again; the scheduler ignores a relisted pending pod
    whose resourceVersion did not change (``eventhandlers.go`` updatePodInSchedulingQueue), so its
    queue, its nominations and an in-flight wait go on as before."""
    return world.note("the API server is restarted: the API keeps everything; the scheduler's watches resume "
                      "and its queue goes on as it was")


def pause(world: World, seconds: float) -> World:
    """The scheduler frozen for ``seconds`` (SIGSTOP): the cluster goes on (victims' grace periods
    end, their pods are removed) but the scheduler neither sees nor does anything; when it goes on
    its informers deliver what happened, each event wakes whom it wakes, and the flush that was
    due runs, all at once."""
    return catch_up(world, seconds, f"the scheduler is frozen for {seconds:g} s: what happened meanwhile "
                                    "reaches it when it goes on")


def disconnect(world: World, seconds: float) -> World:
    """The scheduler's own connection to the API server cut for ``seconds``, the API up for
    everyone else: the cluster goes on, and the scheduler sees none of it. Each informer's watch
    ends; a new one is refused and tried again with backoff (client-go ``tools/cache/reflector.go``
    watch, isWatchErrorRetriable: up to 30 s apart), and once the connection is back it resumes
    from the last version seen, the API server replaying what happened meanwhile (or, if that
    history is gone, a 410 makes it list again, and a pod removed meanwhile reaches the handlers as
    a DeletedFinalStateUnknown tombstone, ``eventhandlers.go`` deletePodFromCache). So, as after a
    pause, each event wakes whom it wakes and the flush that was due runs. The scheduler kept
    running meanwhile, but on a view that did not change it decides as before, and nothing it
    could write is modelled: a disconnect is a step of its own at a quiet moment, or a during:
    fault once a victim is gone, when the preemption's only write left is the bind. A bind that
    fails while cut forgets the assumed pod and retries it after its backoff (v1.35.8
    ``schedule_one.go`` handleBindingCycleError), so it binds once the connection is back, as the
    model's scheduler, which sees nothing until then, does.
    """
    return catch_up(world, seconds, f"the scheduler's connection to the API server is cut for {seconds:g} s: "
                                    "what happened meanwhile reaches it when its watches resume")


def unseen(world: World, seconds: float) -> tuple[World, list]:
    """``seconds`` on while no scheduler acts: the pods whose grace ends meanwhile are removed (in
    the order they go), and returned."""
    from datetime import timedelta

    from .world import remove

    until = world.now + timedelta(seconds=seconds)
    gone = sorted((p for p in world.state.pods if p.deletion_timestamp is not None and p.deletion_timestamp <= until),
                  key=lambda p: p.deletion_timestamp)
    for pod in gone:
        world = remove(world, pod.key)
    return replace(world, now=until), gone


def catch_up(world: World, seconds: float, note: str) -> World:
    """``seconds`` in which the cluster goes on unseen by the scheduler, then all of it at once."""
    from .requeue import assigned_pod_gone
    from .scheduler import run_queue
    from .world import wake

    world, gone = unseen(world, seconds)
    world = world.note(note)
    for pod in gone:
        if pod.node_name:
            world = wake(world, assigned_pod_gone(pod))
    due = {k for k, at in world.parked if at + world.flush_after <= world.now}
    world = replace(world, parked=tuple(p for p in world.parked if p[0] not in due))
    return run_queue(world, due)


__all__ = ["disconnect", "failover", "partly_written", "restart", "restart_apiserver", "pause"]
