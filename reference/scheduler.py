"""The scheduling loop over time: what a cluster looks like after an action or a wait.

``preemption.predict`` answers for one scheduling attempt. This module chains
attempts the way kube-scheduler does: pending pods are tried in queue order;
a pod that cannot be placed is parked until an event its rejecting filters
registered for says it may help (``requeue``) or the periodic flush; victims
stay Terminating for their grace period and hold their room until they are gone.

Where the real scheduler may choose (tied nodes), the world records the
allowed set for the pod and proceeds with one member: scenarios that care
about what happens next keep such ties out of their way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import groupby

from . import eviction, podgroup
from .admission import Rejected, admit_pod
from .objects import ClusterState, Pod
from .preemption import PLUGINS, Prediction, predict
from .release import DEFAULT_RELEASE, NOMINATION_CLEARED_ON_BINDING, TERMINATING_VICTIMS_SKIPPED, Gates, has
from .queue import UNSCHEDULABLE_MAX_STAY, backoff, queue_key, queue_order
from .requeue import (HINTS, ClusterEvent, assigned_pod_gone, nomination_changed, nominated_pod_deleted,
                      pod_bound, woken_by)


@dataclass(frozen=True)
class World:
    state: ClusterState
    now: datetime
    build: str
    parked: tuple[tuple[str, datetime], ...] = ()  # (pod key, parked at)
    preempted: frozenset[str] = frozenset()  # pods ever chosen as victims
    allowed_nodes: tuple[tuple[str, frozenset[str]], ...] = ()  # where a tie let the scheduler choose
    rejected: tuple[tuple[str, str], ...] = ()  # (object name, reason)
    log: tuple[str, ...] = ()
    predictions: tuple[Prediction, ...] = ()
    # Where a tie lets the scheduler choose, the branch this world follows:
    # (pod key, node). Without one, the first node by name.
    choices: tuple[tuple[str, str], ...] = ()
    release: str = DEFAULT_RELEASE  # the Kubernetes release whose behaviour is predicted (reference.release)
    gates: Gates = ()  # feature gates its cluster was started with, over the release's defaults
    # Events after which the order among equal-priority pods woken together decided what
    # happened. The queue orders them by when each was last parked, and on a cluster shared
    # with other work any unrelated event re-parks them in a new order: such an outcome can
    # only be observed on a quiet cluster.
    order_decided: tuple[str, ...] = ()
    # Each parked pod's rejectors: the filter plugins whose queueing hints decide what wakes it.
    rejectors: tuple[tuple[str, frozenset[str]], ...] = ()
    # Failed attempts per pod, for its backoff (1 s doubling to 10 s).
    failures: tuple[tuple[str, int], ...] = ()
    # Pods moved back to the queue by an event and not tried yet, in the order they came.
    queued: tuple[str, ...] = ()
    # Pods the kubelet evicted for node pressure, and the node each was on (they stay Failed).
    evicted: tuple[tuple[str, str], ...] = ()
    # Each pod group's last preemption: (group key, its victims). Until they are gone the group
    # is not tried again.
    group_preemptions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def parked_keys(self) -> set[str]:
        return {k for k, _ in self.parked}

    def allowed_for(self, key: str) -> frozenset[str] | None:
        return dict(self.allowed_nodes).get(key)

    def note(self, text: str) -> World:
        return replace(self, log=self.log + (f"[{self.now.isoformat(timespec='seconds')}] {text}",))


def _set_pod(world: World, pod: Pod) -> World:
    return replace(world, state=world.state.with_pod(pod))


def attempt(world: World, key: str) -> World:
    """One scheduling attempt of a pending pod, and its effects."""
    if podgroup.group_key(world.state, world.state.pod_keyed(key), world.release, world.gates):
        return attempt_group(world, key)
    pr = predict(world.state, key, world.build, world.now)
    world = replace(world, predictions=world.predictions + (pr,))
    pod = world.state.pod_keyed(key)
    assert pod is not None
    forced = dict(world.choices).get(key)
    chosen = forced if forced in pr.nodes else (sorted(pr.nodes)[0] if pr.nodes else "")
    if len(pr.nodes) > 1:
        world = replace(world, allowed_nodes=world.allowed_nodes + ((key, pr.nodes),))
    if pr.outcome == "schedule":
        # Before 1.35 nothing clears status.nominatedNodeName when a pod is bound: a preemptor
        # keeps showing the node it was nominated to (even if it landed elsewhere).
        kept = "" if has(world.release, NOMINATION_CLEARED_ON_BINDING, world.gates) else pod.nominated_node_name
        bound = pod.with_(node_name=chosen, nominated_node_name=kept, scheduled_at=world.now, start_time=world.now)
        world = _set_pod(world, bound).note(f"{key} scheduled on {chosen} ({pr.reasons[0]})")
        return wake(world, pod_bound(bound))
    if pr.outcome == "preempt":
        victims = pr.victims[chosen]
        skip_terminating = has(world.release, TERMINATING_VICTIMS_SKIPPED)
        evicted = []
        for v in victims:
            victim = world.state.pod_keyed(v)
            if victim is None or (victim.terminating and skip_terminating):
                continue
            # Before 1.35 a victim already terminating (its owner deleted it) still gets the
            # DisruptionTarget condition: upstream patches it before deleting again, and the second
            # delete keeps the first deletion time. It then holds the preemptor back like any victim.
            ends = victim.deletion_timestamp or world.now + timedelta(seconds=victim.termination_grace_seconds)
            world = _set_pod(world, victim.with_(deletion_timestamp=ends, disruption_target_by_preemption=True))
            evicted.append(v)
        # From 1.35 async preemption with nothing left to evict returns before clearing nominations.
        events: list[ClusterEvent] = []
        if evicted or not (skip_terminating and PLUGINS[world.build].asynchronous):
            for cleared in pr.nominations_cleared.get(chosen, ()):
                other = world.state.pod_keyed(cleared)
                if other is not None:
                    world = _set_pod(world, other.with_(nominated_node_name=""))
                    events.append(nomination_changed(other, ""))
        if pod.nominated_node_name and pod.nominated_node_name != chosen:
            events.append(nomination_changed(pod, chosen))
        world = _set_pod(world, world.state.pod_keyed(key).with_(nominated_node_name=chosen))
        world = replace(world, preempted=world.preempted | set(evicted))
        world = world.note(f"{key} preempts {', '.join(victims) or 'nobody new'} on {chosen} ({pr.reasons[0]})")
        world = _park(world, key, pr.rejectors)
        for event in events:
            world = wake(world, event)
        return world
    cleared = pr.nominated_node == "" and bool(pod.nominated_node_name)
    if pr.nominated_node == "":
        world = _set_pod(world, pod.with_(nominated_node_name=""))
    world = _park(world.note(f"{key} stays pending: {pr.message or pr.reasons[0]}"), key, pr.rejectors)
    return wake(world, nomination_changed(pod, "")) if cleared else world


def attempt_group(world: World, key: str) -> World:
    """One pod-group cycle for the group ``key`` belongs to (reference.podgroup), and its effects."""
    pod = world.state.pod_keyed(key)
    group = world.state.group_of(pod)
    if group is None:
        # The gang plugin's PreEnqueue: no PodGroup, no attempt (and no event, no message).
        return _hold(world.note(f"{key} waits for its pod group {pod.group} to exist"), [key], frozenset())
    victims = dict(world.group_preemptions).get(group.key, ())
    preempting = any((v := world.state.pod_keyed(k)) is not None and v.terminating for k in victims)
    ga = podgroup.attempt(world.state, group, world.release, world.gates, world.now, preempting, dict(world.choices))
    pending = [p.key for p in podgroup.members_in_order(world.state, group)]
    if ga.outcome == "held":
        rejectors = frozenset({"NodeResourcesFit"}) if preempting else frozenset()
        return _hold(world.note(f"{group.key}: {ga.reasons[0]}"), pending, rejectors)
    outcome = {"schedule": "schedule", "preempt": "preempt"}.get(ga.outcome, "unschedulable")
    world = replace(world, predictions=world.predictions + tuple(
        Prediction(k, outcome if k in ga.placement or outcome == "unschedulable" else "unschedulable",
                   frozenset({ga.placement[k]}) if k in ga.placement else frozenset(), reasons=ga.reasons,
                   message="" if outcome == "schedule" and k in ga.placement else ga.messages.get(k, ""),
                   rejectors=ga.rejectors)
        for k in pending))
    world = replace(world, allowed_nodes=world.allowed_nodes + tuple(ga.ties.items()))
    if ga.outcome == "schedule":
        events = []
        for k, node in ga.placement.items():
            member = world.state.pod_keyed(k)
            kept = "" if has(world.release, NOMINATION_CLEARED_ON_BINDING, world.gates) else member.nominated_node_name
            bound = member.with_(node_name=node, nominated_node_name=kept, scheduled_at=world.now, start_time=world.now)
            world = _set_pod(world, bound)
            events.append(pod_bound(bound))
        world = world.note(f"{ga.reasons[0]}: " + ", ".join(f"{k} on {n}" for k, n in sorted(ga.placement.items())))
        for k in pending:
            if k not in ga.placement:
                world = _park(world.note(f"{k} stays pending: {ga.messages.get(k, '')}"), k, ga.rejectors)
        for event in events:
            world = wake(world, event)
        return world
    if ga.outcome == "preempt":
        for v in ga.victims:
            victim = world.state.pod_keyed(v)
            ends = victim.deletion_timestamp or world.now + timedelta(seconds=victim.termination_grace_seconds)
            world = _set_pod(world, victim.with_(deletion_timestamp=ends, disruption_target_by_preemption=True))
        for k in pending:
            member = world.state.pod_keyed(k)
            world = _set_pod(world, member.with_(nominated_node_name=ga.nominations.get(k, "")))
        world = replace(world, preempted=world.preempted | set(ga.victims),
                        group_preemptions=tuple(g for g in world.group_preemptions if g[0] != group.key)
                        + ((group.key, ga.victims),))
        world = world.note(f"{ga.reasons[0]}: {', '.join(ga.victims)}; placement "
                           + ", ".join(f"{k} on {n}" for k, n in sorted(ga.placement.items())))
        for k in pending:
            world = _park(world, k, ga.rejectors)
        return world
    world = world.note(f"{group.key} stays pending: {ga.reasons[0]}")
    for k in pending:
        world = _park(world, k, ga.rejectors)
    return world


def _hold(world: World, keys: list[str], rejectors: frozenset[str]) -> World:
    """Parked without an attempt (a PreEnqueue plugin said not yet): no failure counted."""
    parked = tuple(p for p in world.parked if p[0] not in keys) + tuple((k, world.now) for k in keys)
    return replace(world, parked=parked,
                   rejectors=tuple((k, r) for k, r in world.rejectors if k not in keys) + tuple((k, rejectors) for k in keys))


def _park(world: World, key: str, rejectors: frozenset[str] = frozenset()) -> World:
    """Back to the unschedulable pool with the plugins that rejected it; its place in the queue,
    and the start of its backoff, are now."""
    parked = tuple(p for p in world.parked if p[0] != key) + ((key, world.now),)
    pod = world.state.pod_keyed(key)
    world = _set_pod(world, pod.with_(queued_at=world.now)) if pod is not None else world
    failures = dict(world.failures)
    failures[key] = failures.get(key, 0) + 1
    return replace(world, parked=parked, failures=tuple(sorted(failures.items())),
                   rejectors=tuple((k, r) for k, r in world.rejectors if k != key) + ((key, rejectors),))


def rejectors_of(world: World, key: str) -> frozenset[str]:
    """The plugins that rejected a parked pod. A world read from a cluster may not know them: then
    every plugin whose hints a pod event can satisfy counts, as if it had rejected the pod."""
    found = dict(world.rejectors).get(key)
    return found if found is not None else frozenset(HINTS)


def wake(world: World, event: ClusterEvent) -> World:
    """Move the parked pods that ``event`` may help back to the queue (``requeue.woken_by``)."""
    woken = []
    for key, _ in world.parked:
        pod = world.state.pod_keyed(key)
        why = woken_by(event, pod, rejectors_of(world, key), world.release) if pod is not None else ""
        if why:
            woken.append((key, why))
    if not woken:
        return world
    keys = {k for k, _ in woken}
    world = replace(world, parked=tuple(p for p in world.parked if p[0] not in keys),
                    queued=world.queued + tuple(k for k, _ in woken if k not in world.queued))
    return world.note(f"{event.what}: " + "; ".join(f"{k} tried again ({why})" for k, why in woken))


def backing_off(world: World, key: str) -> bool:
    """Whether a pod woken now is still in its backoff (it then waits in backoffQ behind the
    pods whose backoff is over: the scheduler pops backoffQ only when activeQ is empty)."""
    pod = world.state.pod_keyed(key)
    count = dict(world.failures).get(key, 0)
    if pod is None or not count or pod.queued_at is None:
        return False
    return world.now < pod.queued_at + backoff(count)


def pop_order(world: World, keys: tuple[str, ...]) -> list[str]:
    """Woken pods in the order the scheduler pops them: those past their backoff in queue order,
    then those still backing off by when their backoff ends (SchedulerPopFromBackoffQ)."""
    pods = [p for p in (world.state.pod_keyed(k) for k in keys) if p is not None and not p.node_name]
    ready = [p for p in pods if not backing_off(world, p.key)]
    waiting = sorted((p for p in pods if backing_off(world, p.key)),
                     key=lambda p: (p.queued_at + backoff(dict(world.failures)[p.key]), queue_key(p)))
    return [k for group in queue_order(ready) for k in group] + [p.key for p in waiting]


def run_queue(world: World, keys: set[str] | None = None) -> World:
    """Try pending pods (``keys``, or every one not parked) and then every pod an event moved back
    to the queue meanwhile, until none is left."""
    if keys is None:
        keys = {p.key for p in world.state.pending() if p.key not in world.parked_keys()}
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
        if pod is None or pod.node_name:
            continue  # gone, or bound meanwhile
        group = podgroup.group_key(world.state, pod, world.release, world.gates)
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
    world = _set_pod(world, admitted).note(f"{pod.key} admitted: {decision.reason}")
    return run_queue(world, {admitted.key})


def delete_pod(world: World, key: str) -> World:
    pod = world.state.pod_keyed(key)
    if pod is None or pod.terminating:
        return world
    if not pod.node_name:  # a pending pod goes at once; nominated, it gave back the room it held
        world = _remove(world, key)
        return run_queue(wake(world, nominated_pod_deleted(pod)), set()) if pod.nominated_node_name else world
    return _set_pod(world, pod.with_(deletion_timestamp=world.now + timedelta(seconds=pod.termination_grace_seconds)))


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
        world = replace(_remove(world, key), evicted=world.evicted + ((key, node),))
        world = run_queue(wake(world, assigned_pod_gone(gone)), set())
    return world


class EvictionTie(ValueError):
    """A pressure step whose outcome the kubelet leaves to chance."""


def _remove(world: World, key: str) -> World:
    world = replace(world, state=world.state.without_pods([key]), parked=tuple(p for p in world.parked if p[0] != key),
                    queued=tuple(k for k in world.queued if k != key))
    return world.note(f"{key} is gone")


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
            due += [(at + UNSCHEDULABLE_MAX_STAY, "flush", k) for k, at in world.parked
                    if at + UNSCHEDULABLE_MAX_STAY <= until]
        if not due:
            break
        when, kind, key = min(due)
        world = replace(world, now=max(world.now, when))
        if kind == "gone":
            gone = world.state.pod_keyed(key)
            world = _remove(world, key)
            if gone.node_name:
                world = run_queue(wake(world, assigned_pod_gone(gone)), set())
        else:
            world = replace(world, parked=tuple(p for p in world.parked if p[0] != key))
            world = run_queue(world, {key}).note(f"{key} retried by the periodic flush (a window: "
                                                 f"5 min to 5 min 30 s after it was parked)")
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


def start(state: ClusterState, build: str, now: datetime, release: str = DEFAULT_RELEASE, gates: Gates = ()) -> World:
    return World(state, now, build, release=release, gates=gates)


@dataclass(frozen=True)
class PodView:
    """What an observer sees of one pod; the same shape for model and cluster."""

    phase: str  # "running" | "pending" | "terminating" | "gone" | "rejected" | "evicted" (by the kubelet)
    node: str = ""
    nominated: str = ""
    preempted: bool = False

    def __str__(self) -> str:
        bits = [self.phase]
        if self.node:
            bits.append(f"on {self.node}")
        if self.nominated:
            bits.append(f"nominated to {self.nominated}")
        if self.preempted:
            bits.append("preempted")
        return " ".join(bits)


def view(world: World) -> dict[str, PodView]:
    out: dict[str, PodView] = {}
    for p in world.state.pods:
        phase = "terminating" if p.terminating else ("running" if p.node_name else "pending")
        out[p.name] = PodView(phase, p.node_name, p.nominated_node_name, p.key in world.preempted)
    for key, node in world.evicted:
        out[key.split("/", 1)[1]] = PodView("evicted", node, preempted=key in world.preempted)
    for key in world.preempted:
        name = key.split("/", 1)[1]
        out.setdefault(name, PodView("gone", preempted=True))
    for name, _ in world.rejected:
        out.setdefault(name, PodView("rejected"))
    return out


def waiting_for_an_event(world: World) -> list[str]:
    """Parked pods an attempt now would place or let preempt: they wait for an event that their
    rejectors' hints accept, or for the flush. On a cluster shared with other work, any such
    event from elsewhere (a pod deleted in another namespace) retries them earlier, so an
    outcome that rests on their waiting can only be observed on a quiet cluster."""
    out = []
    for key, _ in world.parked:
        if podgroup.group_key(world.state, world.state.pod_keyed(key), world.release, world.gates):
            continue  # a group's pods wait together; the model has no single-pod answer for them
        pr = predict(world.state, key, world.build, world.now)
        if pr.outcome == "schedule" or (pr.outcome == "preempt" and any(pr.victims.values())):
            out.append(key)
    return out


__all__ = ["World", "PodView", "advance", "attempt", "create_pod", "delete_pod", "run_queue", "start", "view",
           "wake", "waiting_for_an_event"]
