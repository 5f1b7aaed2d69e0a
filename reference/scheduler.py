"""The scheduling loop over time: what a cluster looks like after an action or a wait.

``reference.cycle`` applies one scheduling attempt (``preemption.predict`` for a pod,
``podgroup.attempt`` for a pod group) to a ``reference.world.World``. This module chains
attempts the way kube-scheduler does: pending pods are tried in queue order;
a pod that cannot be placed is parked until an event its rejecting filters
registered for says it may help (``requeue``) or the periodic flush; victims
stay Terminating for their grace period and hold their room until they are gone.

Where the real scheduler may choose (tied nodes), the world records the
allowed set for the pod and proceeds with one member: scenarios that care
about what happens next keep such ties out of their way.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from itertools import groupby

from . import eviction, podgroup
from .admission import Rejected, admit_pod, admit_pod_group
from .cycle import attempt
from .objects import ClusterState, Pod, PodGroup
from .preemption import predict
from .queue import FLUSH_PERIOD, UNSCHEDULABLE_MAX_STAY, backoff, queue_key, queue_order
from .release import DEFAULT_RELEASE, GROUP_POLICY_FROM_GROUP, Gates, has
from .requeue import assigned_pod_gone, nominated_pod_deleted
from .world import PodView, World, backing_off, remove, set_pod, to_schedule, view, wake


def pop_order(world: World, keys: tuple[str, ...]) -> list[str]:
    """Woken pods in the order the scheduler pops them: those past their backoff in queue order,
    then those still backing off by when their backoff ends (SchedulerPopFromBackoffQ)."""
    pods = [p for p in (world.state.pod_keyed(k) for k in keys) if p is not None and to_schedule(world, p)]
    ready = [p for p in pods if not backing_off(world, p.key)]
    waiting = sorted((p for p in pods if backing_off(world, p.key)),
                     key=lambda p: (p.queued_at + backoff(dict(world.failures)[p.key]), queue_key(p)))
    return [k for group in queue_order(ready) for k in group] + [p.key for p in waiting]


def run_queue(world: World, keys: set[str] | None = None) -> World:
    """Try pending pods (``keys``, or every one not parked) and then every pod an event moved back
    to the queue meanwhile, until none is left."""
    if keys is None:
        # At start the informers' AddPod queues the pending pods and, with the gate, the deferred resizes.
        keys = {p.key for p in world.state.pods if (not p.node_name or p.resize_deferred) and to_schedule(world, p)
                and not p.terminating and p.key not in world.parked_keys()}
    world = replace(world, queued=world.queued + tuple(sorted(k for k in keys if k not in world.queued)))
    return _drain(world)


def _drain(world: World, check_order: bool = True) -> World:
    for _ in range(100):
        if not world.queued:
            return world
        order = pop_order(world, world.queued)
        world = replace(world, queued=())
        after = _try_each(world, order)
        if check_order and len(order) > 1:
            after = _order_decided(world, order, after)
        world = after
    raise RuntimeError("the model's queue did not drain after 100 rounds")


def _order_decided(world: World, order: list[str], after: World) -> World:
    """Woken together by one event: would another order the queue may pop them in differ?

    Two orders are possible besides the model's: equal priorities the other way round (the
    queue orders them by when each was last parked), and pods that failed before popped last
    in reverse (how long each still backs off depends on how often it was retried, and on a
    cluster shared with other work, other scenarios' events retry it any number of times)."""
    priority = {k: world.state.pod_keyed(k).priority for k in order}
    swapped = [k for _, same in groupby(order, key=priority.get) for k in reversed(list(same))]
    failed = dict(world.failures)
    delayed = [k for k in order if not failed.get(k)] + [k for k in reversed(order) if failed.get(k)]
    settled = None
    for other, why in ((swapped, "tied"), (delayed, "backoff")):
        if other == order:
            continue
        settled = settled or view(_drain(after, check_order=False))
        if view(_drain(_try_each(world, other), check_order=False)) == settled:
            continue
        when = world.now.isoformat(timespec="seconds")
        if why == "tied":
            tied = sorted(k for k in order if sum(priority[o] == priority[k] for o in order) > 1)
            text = f"[{when}] the queue order among {', '.join(tied)} decided"
        else:
            text = (f"[{when}] the queue order among {', '.join(order)} decided: how long each still backed off "
                    "(other scenarios' events retry parked pods)")
        return replace(after, order_decided=after.order_decided + (text,))
    return after


def _try_each(world: World, order: list[str]) -> World:
    tried_groups: set[str] = set()
    for key in order:
        pod = world.state.pod_keyed(key)
        if pod is None or not to_schedule(world, pod):
            continue  # gone, or bound meanwhile
        # A deferred resize is tried alone, whatever group it is in (scheduling_queue.go isPodGroupMember).
        group = "" if pod.resize_deferred else podgroup.group_key(world.state, pod, world.release, world.gates)
        if group:
            if group in tried_groups:
                continue  # its group's cycle took it with the others
            tried_groups.add(group)
        world = attempt(replace(world, parked=tuple(p for p in world.parked if p[0] != key)), key)
    return world


def create_pod(world: World, pod: Pod, requested_priority: int | None = None, requested_policy: str | None = None) -> World:
    decision = admit_pod(world.state, pod, requested_priority=requested_priority, requested_policy=requested_policy)
    if isinstance(decision, Rejected):
        return replace(world, rejected=world.rejected + ((pod.name, decision.reason),)).note(
            f"{pod.key} rejected: {decision.reason}")
    admitted = decision.obj.with_(queued_at=world.now)
    world = set_pod(world, admitted).note(f"{pod.key} admitted: {decision.reason}")
    return run_queue(world, {admitted.key})


def create_pod_group(world: World, group: PodGroup, requested_policy: str | None = None) -> World:
    """A PodGroup created: its pods, held until it existed (the gang plugin's PreEnqueue), are
    moved to the queue by its PodGroup Add event, and go into one cycle together."""
    decision = admit_pod_group(world.state, group, policy_field=has(world.release, GROUP_POLICY_FROM_GROUP, world.gates),
                               requested_policy=requested_policy)
    if isinstance(decision, Rejected):
        return replace(world, rejected=world.rejected + ((group.name, decision.reason),)).note(
            f"pod group {group.key} rejected: {decision.reason}")
    world = replace(world, state=world.state.with_group(decision.obj)).note(f"pod group {group.key} created")
    waiting = {p.key for p in podgroup.members_in_order(world.state, decision.obj)}
    world = replace(world, parked=tuple(p for p in world.parked if p[0] not in waiting))
    return run_queue(world, waiting)


def delete_pod(world: World, key: str, grace_seconds: int | None = None) -> World:
    """A pod deleted. ``grace_seconds`` is the delete call's own grace period (None: the pod's). A
    bound pod terminates for that long; a call with a shorter one than a terminating pod has
    left brings its end forward (the API server only ever shortens it), and 0 removes the pod at
    once, as a force delete does."""
    pod = world.state.pod_keyed(key)
    if pod is None or (pod.terminating and grace_seconds is None):
        return world
    if not pod.node_name:  # a pending pod goes at once; nominated, it gave back the room it held
        world = remove(world, key)
        return run_queue(wake(world, nominated_pod_deleted(pod)), set()) if pod.nominated_node_name else world
    ends = world.now + timedelta(seconds=pod.termination_grace_seconds if grace_seconds is None else grace_seconds)
    if pod.deletion_timestamp is not None and pod.deletion_timestamp <= ends:
        return world
    world = set_pod(world, pod.with_(deletion_timestamp=ends))
    return advance(world, world.now, flush=False) if ends <= world.now else world


def pressure(world: World, node: str, resource: eviction.Resource, evictions: int) -> World:
    """The kubelet of ``node`` runs short of ``resource`` until ``evictions`` pods have gone: each
    pass evicts the first non-critical pod of its ranking (reference.eviction). An evicted pod
    turns Failed at once and holds no room: for the scheduler, an assigned pod gone."""
    residents = [eviction.usage_of(p, resource) for p in world.state.pods if p.node_name == node and not p.terminating]
    world = world.note(f"{node} runs short of {resource}; the kubelet ranks: {eviction.explain(residents, resource)}")
    for victims in eviction.eviction_order(residents, resource, evictions):
        if len(victims) > 1:
            raise EvictionTie(f"the kubelet's ranking ties between {', '.join(sorted(victims))}: which one it "
                              "evicts is chance (give them different usage or priority)")
        key = next(iter(victims))
        gone = world.state.pod_keyed(key)
        world = world.note(f"the kubelet evicts {key} (Failed, reason Evicted): its room on {node} is free")
        world = replace(remove(world, key), evicted=world.evicted + ((key, node),))
        world = run_queue(wake(world, assigned_pod_gone(gone)), set())
    return world


class EvictionTie(ValueError):
    """A pressure step whose outcome the kubelet leaves to chance."""


def advance(world: World, until: datetime | None = None, flush: bool = True) -> World:
    """Let time pass: terminating pods disappear, which wakes the parked pods it may help; the flush
    wakes the rest.

    ``until=None`` runs until no pod is terminating any more: the settled
    outcome of an action. ``flush=False`` leaves the periodic flush out, for
    outcomes that must not depend on it.
    """
    if until is None:
        ends = [p.deletion_timestamp for p in world.state.pods if p.deletion_timestamp is not None]
        until = max(ends + [world.now])
    while True:
        due = [(p.deletion_timestamp, "gone", p.key) for p in world.state.pods
               if p.deletion_timestamp is not None and p.deletion_timestamp <= until]
        if flush:
            after = world.flush_after + (FLUSH_PERIOD if world.flush_late else timedelta(0))
            due += [(at + after, "flush", k) for k, at in world.parked if at + after <= until]
        if not due:
            break
        when, kind, key = min(due)
        world = replace(world, now=max(world.now, when))
        if kind == "gone":
            gone = world.state.pod_keyed(key)
            world = remove(world, key)
            if gone.node_name:
                world = run_queue(wake(world, assigned_pod_gone(gone)), set())
        else:
            world = replace(world, parked=tuple(p for p in world.parked if p[0] != key))
            world = run_queue(world, {key}).note(
                f"{key} retried by the periodic flush (a window: {_span(world.flush_after)} to "
                f"{_span(world.flush_after + FLUSH_PERIOD)} after it was parked)")
    return replace(world, now=max(world.now, until))


def branches(before: World, step, limit: int = 16) -> list[World]:
    """Every world ``step(before)`` can lead to when ties let the scheduler choose.

    ``step`` is a function of a world. Each tie met on a path splits it, one branch per node,
    depth first with the first node by name first (a pod group's cycle meets one tie per pod:
    each must be split, not only the first); up to ``limit`` worlds, the all-first-by-name one
    always among them.
    """
    done: list[World] = []
    todo = [before]
    while todo and len(done) < limit:
        start_world = todo.pop()
        after = step(start_world)
        fixed = dict(start_world.choices)
        tie = next(((k, nodes) for k, nodes in after.allowed_nodes[len(before.allowed_nodes):] if k not in fixed), None)
        if tie is None:
            done.append(after)
            continue
        key, nodes = tie
        for node in sorted(nodes, reverse=True):  # the last pushed is tried first
            todo.append(replace(start_world, choices=start_world.choices + ((key, node),)))
    return done


def start(state: ClusterState, build: str, now: datetime, release: str = DEFAULT_RELEASE, gates: Gates = (),
          flush: timedelta = UNSCHEDULABLE_MAX_STAY) -> World:
    return World(state, now, build, release=release, gates=gates, flush_after=flush)


def _span(t: timedelta) -> str:
    s = int(t.total_seconds())
    return f"{s // 60} min {s % 60} s" if s % 60 and s >= 60 else (f"{s // 60} min" if s >= 60 else f"{s} s")


def waiting_for_an_event(world: World) -> list[str]:
    """Parked pods an attempt now would place or let preempt: they wait for an event that their
    rejectors' hints accept, or for the flush. On a cluster shared with other work, any such
    event from elsewhere (a pod deleted in another namespace) retries them earlier, so an
    outcome that rests on their waiting can only be observed on a quiet cluster."""
    out = []
    for key, _ in world.parked:
        if podgroup.group_key(world.state, world.state.pod_keyed(key), world.release, world.gates):
            continue  # a group's pods wait together; the model has no single-pod answer for them
        pr = predict(world.state, key, world.build if world.preemption else None, world.now, world.release, world.gates)
        if pr.outcome == "schedule" or (pr.outcome == "preempt" and any(pr.victims.values())):
            out.append(key)
    return out


__all__ = ["World", "PodView", "advance", "attempt", "create_pod", "delete_pod", "run_queue", "start", "view",
           "wake", "waiting_for_an_event"]
