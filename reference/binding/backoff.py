"""karmada-scheduler's backoff: how long a failed binding waits, and the order waiting ones leave.

Upstream (v1.18.2): pkg/scheduler/internal/queue/scheduling_queue.go
(calculateBackoffDuration, getBackoffTime, lessBackoffCompletedWithPriority,
flushBackoffQCompleted). A binding whose attempt failed with an error other than
Unschedulable waits in backoffQ; once a second the flush moves every binding whose
backoff has ended to activeQ. NewSchedulingQueue() is called with no options, so a
running scheduler always has the defaults; the rows of the unit tables set others.
Durations and times are integer nanoseconds (Go's time.Duration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .queue import QueuedBinding, less

SECOND = 10**9


@dataclass(frozen=True)
class Backoff:
    """The queue's two backoff settings (DefaultBindingInitialBackoffDuration, ...MaxBackoffDuration)."""

    initial: int = 1 * SECOND
    max: int = 10 * SECOND


def duration(attempts: int, backoff: Backoff = Backoff()) -> int:
    """The wait after ``attempts`` tries: none before the first, then initial, doubled per try, capped.

    The cap is checked before each doubling, never on the initial value itself: a
    binding tried once waits ``initial`` even when that exceeds ``max``. The check is
    ``d > max - d`` rather than ``2 * d > max`` because Go's int64 would overflow on the
    doubling (a max of MaxInt64 is one of upstream's rows); Python's ints cannot, but
    the same comparison keeps the same answers. With both settings zero there is no
    wait at any count.
    """
    if attempts == 0:
        return 0
    d = backoff.initial
    for _ in range(1, attempts):
        if d > backoff.max - d:
            return backoff.max
        d += d
    return d


def ends(b: QueuedBinding, backoff: Backoff = Backoff()) -> int:
    """When the binding's backoff is over: counted from its last entry into activeQ, not from its failure."""
    return b.timestamp + duration(b.attempts, backoff)


def backing_off(b: QueuedBinding, now: int, backoff: Backoff = Backoff()) -> bool:
    """Still waiting: a backoff that ends exactly now is over."""
    return ends(b, backoff) > now


def backoff_less(a: QueuedBinding, b: QueuedBinding, backoff: Backoff = Backoff()) -> bool:
    """backoffQ's order: the earlier end first; at the same end, activeQ's order (priority, then entry)."""
    ea, eb = ends(a, backoff), ends(b, backoff)
    if ea != eb:
        return ea < eb
    return less(a, b)


def flush(waiting: Iterable[QueuedBinding], now: int,
          backoff: Backoff = Backoff()) -> tuple[tuple[QueuedBinding, ...], tuple[QueuedBinding, ...]]:
    """One flushBackoffQCompleted: (moved to activeQ, in the order moved; still waiting).

    The flush takes the head while its backoff is over and stops at the first that is
    not. Because the end time orders first, a high-priority binding still waiting never
    holds back a lower one whose wait is over; priority only orders bindings whose
    waits end at the same instant.
    """
    left = list(waiting)
    moved = []
    while left:
        head = left[0]
        for b in left[1:]:
            if backoff_less(b, head, backoff):
                head = b
        if backing_off(head, now, backoff):
            break
        moved.append(head)
        left = [b for b in left if b is not head]
    return tuple(moved), tuple(left)


__all__ = ["Backoff", "SECOND", "backing_off", "backoff_less", "duration", "ends", "flush"]
