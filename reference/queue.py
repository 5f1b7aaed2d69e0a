"""The scheduling queue: in which order pending pods are tried, and when a parked pod comes back.

Upstream: pkg/scheduler/internal/queue (PrioritySort's Less, the
unschedulable pool, backoff and the periodic flush).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby

from .objects import Pod

BACKOFF_INITIAL = timedelta(seconds=1)
BACKOFF_MAX = timedelta(seconds=10)
# The release default of the flush interval: how long a pod nothing wakes stays parked before the
# flush retries it (--pod-max-in-unschedulable-pods-duration, cmd/kube-scheduler/app/options
# deprecated.go, 5 min in 1.34-1.37; a cluster may set another, World.flush_after has its own).
UNSCHEDULABLE_MAX_STAY = timedelta(minutes=5)
# How often the flush runs: fixed (scheduling_queue.go Run, flushUnschedulablePodsLeftover every 30 s).
FLUSH_PERIOD = timedelta(seconds=30)


def queue_key(pod: Pod) -> tuple:
    # Higher priority first; then the time the pod (re-)entered the queue,
    # not its creation time.
    return (-pod.priority, pod.queued_at or datetime.min)


def queue_order(pending: tuple[Pod, ...] | list[Pod]) -> list[tuple[str, ...]]:
    """Pending pods in the order they are tried, as groups: pods in a group may come in any order."""
    ordered = sorted(pending, key=queue_key)
    return [tuple(sorted(p.key for p in grp)) for _, grp in groupby(ordered, key=queue_key)]


def backoff(attempts: int) -> timedelta:
    """Backoff after ``attempts`` failed attempts: 1 s doubling, capped at 10 s."""
    return min(BACKOFF_INITIAL * (2 ** max(attempts - 1, 0)), BACKOFF_MAX)


@dataclass(frozen=True)
class Window:
    earliest: datetime
    latest: datetime

    def contains(self, t: datetime) -> bool:
        return self.earliest <= t <= self.latest


def retry_after_toleration(parked_at: datetime, expires_at: datetime, slack: timedelta = timedelta(seconds=15),
                           flush: timedelta = UNSCHEDULABLE_MAX_STAY) -> Window:
    """When a preemptor refused only because a victim still tolerated it tries again, absent any other event.

    The end of a toleration window is not a cluster event, so nothing wakes the
    parked pod then. It comes back once it has spent ``flush`` (the interval) in
    the unschedulable pool, at the next flush (every FLUSH_PERIOD); its backoff
    has long expired by then. So each retry follows the previous one by a
    delay in [flush, flush + 30 s]. An attempt before ``expires_at`` fails and
    parks the pod anew; the first attempt at or after expiry succeeds. Over all
    such chains that attempt falls in the returned window. ``slack`` covers the
    scheduling cycle and the observer's latency.
    """
    shortest, longest = flush, flush + FLUSH_PERIOD
    # The k-th retry can fall anywhere in [k*shortest, k*longest] after parking.
    k = 1
    while parked_at + k * longest < expires_at:
        k += 1
    earliest = max(expires_at, parked_at + k * shortest)
    # Latest: the previous attempt falls just before expiry, the next as late as possible.
    latest = max(expires_at, parked_at) + longest
    return Window(earliest, latest + slack)
