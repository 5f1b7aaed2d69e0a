"""The model's world at one moment, and the bookkeeping every scheduling step shares.

A ``World`` is the cluster's objects plus what kube-scheduler keeps beside them: which pods are
parked in the unschedulable pool and since when, which plugins rejected them, how often each
failed (its backoff), which were moved back to the queue and not tried yet, and where a tie let
the scheduler choose. The steps here change only that bookkeeping; what an attempt decides is
``reference.cycle``, and how attempts chain over time is ``reference.scheduler``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from . import executor as preemption_executor
from .objects import ClusterState, Pod
from .preemption import Prediction
from .queue import UNSCHEDULABLE_MAX_STAY, backoff
from .release import DEFAULT_RELEASE, DEFERRED_RESIZE_PREEMPTION, Gates, has
from .requeue import HINTS, ClusterEvent, woken_by


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
    # The scheduler's flush interval: a pod parked this long is retried by the next flush, which
    # runs every 30 s, so up to FLUSH_PERIOD later (``flush_late``: this world takes the latest).
    flush_after: timedelta = UNSCHEDULABLE_MAX_STAY
    flush_late: bool = False
    # The preemption executor, when this world keeps an async preemption's calls in flight until
    # ``cycle.complete_preemption``; None: the calls complete within the preempting cycle.
    executor: preemption_executor.Executor | None = None
    # The scheduler profile runs its preemption (PostFilter) plugin; False: the profile turns it
    # off (plugins.postFilter.disabled), so a pod that fits nowhere only fails (a lone pod's cycle).
    preemption: bool = True

    def parked_keys(self) -> set[str]:
        return {k for k, _ in self.parked}

    def allowed_for(self, key: str) -> frozenset[str] | None:
        return dict(self.allowed_nodes).get(key)

    def note(self, text: str) -> World:
        return replace(self, log=self.log + (f"[{self.now.isoformat(timespec='seconds')}] {text}",))


def set_pod(world: World, pod: Pod) -> World:
    return replace(world, state=world.state.with_pod(pod))


def hold(world: World, keys: list[str], rejectors: frozenset[str]) -> World:
    """Parked without an attempt (a PreEnqueue plugin said not yet): no failure counted."""
    parked = tuple(p for p in world.parked if p[0] not in keys) + tuple((k, world.now) for k in keys)
    return replace(world, parked=parked,
                   rejectors=tuple((k, r) for k, r in world.rejectors if k not in keys) + tuple((k, rejectors) for k in keys))


def park(world: World, key: str, rejectors: frozenset[str] = frozenset()) -> World:
    """Back to the unschedulable pool with the plugins that rejected it; its place in the queue,
    and the start of its backoff, are now."""
    parked = tuple(p for p in world.parked if p[0] != key) + ((key, world.now),)
    pod = world.state.pod_keyed(key)
    world = set_pod(world, pod.with_(queued_at=world.now)) if pod is not None else world
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
        if why and held_back(world, key):
            why = ""
        if why:
            woken.append((key, why))
    if not woken:
        return world
    keys = {k for k, _ in woken}
    world = replace(world, parked=tuple(p for p in world.parked if p[0] not in keys),
                    queued=world.queued + tuple(k for k, _ in woken if k not in world.queued))
    return world.note(f"{event.what}: " + "; ".join(f"{k} tried again ({why})" for k, why in woken))


def held_back(world: World, key: str) -> str:
    """Why DefaultPreemption's PreEnqueue keeps a pod out of the queue ("" when it does not): its
    own preemption's calls, or its group's, are still in flight (only where the world keeps them)."""
    if world.executor is None:
        return ""
    return preemption_executor.pre_enqueue(world.executor, world.state, key, world.gates)


def activate(world: World, keys) -> World:
    """Parked pods moved to the active queue at once (the queue's Activate), unless PreEnqueue
    holds them back: then they stay in the unschedulable pool."""
    moved = [k for k in keys if k in world.parked_keys() and not held_back(world, k)]
    if not moved:
        return world
    world = replace(world, parked=tuple(p for p in world.parked if p[0] not in moved),
                    queued=world.queued + tuple(k for k in moved if k not in world.queued))
    return world.note(f"{', '.join(moved)} activated")


def to_schedule(world: World, pod: Pod) -> bool:
    """Whether the scheduler tries ``pod`` when it comes up in the queue: a pending pod, or a running
    one whose in-place resize the kubelet deferred, which from 1.37 with the gate on is queued as
    a preemptor bound to its node (eventhandlers.go addPod and updatePod, isPodResizeDeferred)."""
    if not pod.node_name:
        return True
    return pod.resize_deferred and not pod.terminating and has(world.release, DEFERRED_RESIZE_PREEMPTION, world.gates)


def backing_off(world: World, key: str) -> bool:
    """Whether a pod woken now is still in its backoff (it then waits in backoffQ behind the
    pods whose backoff is over: the scheduler pops backoffQ only when activeQ is empty)."""
    pod = world.state.pod_keyed(key)
    count = dict(world.failures).get(key, 0)
    if pod is None or not count or pod.queued_at is None:
        return False
    return world.now < pod.queued_at + backoff(count)


def remove(world: World, key: str) -> World:
    world = replace(world, state=world.state.without_pods([key]), parked=tuple(p for p in world.parked if p[0] != key),
                    queued=tuple(k for k in world.queued if k != key))
    return world.note(f"{key} is gone")


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


__all__ = ["World", "PodView", "activate", "backing_off", "held_back", "hold", "park", "rejectors_of", "remove", "set_pod",
           "to_schedule", "view", "wake"]
