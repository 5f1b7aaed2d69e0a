"""karmada-scheduler's queue: which binding is tried when, and whether a failed one comes back.

Upstream (v1.18.2): pkg/scheduler/internal/queue (activeQ ordered by
types.go:Less) with the PriorityBasedScheduling gate on; the legacy
RateLimitingQueue (plain FIFO) with it off (pkg/scheduler/scheduler.go).
One worker pops one binding at a time.

The active queue itself (``ActiveQueue``: push, pop, done over ``QueuedBinding``) is
active_queue.go; how long a failed binding waits, and in what order waiting ones come
back, is ``backoff``. Times are integer nanoseconds, as Go's time.Duration is: the
backoff rows count single nanoseconds, which a float or a timedelta would lose.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import permutations, product
from typing import Iterable

from .objects import Binding


@dataclass(frozen=True)
class QueuedBinding:
    """A binding as karmada-scheduler's queue holds it (types.go QueuedBindingInfo)."""

    key: str
    priority: int = 0  # an absent schedulePriority is read as 0
    timestamp: int = 0  # ns: when it last entered activeQ (or was re-added by done)
    attempts: int = 0  # pops so far: what the backoff grows with
    first_queued: int | None = None  # ns: the first push, never moved afterwards


def less(a: QueuedBinding, b: QueuedBinding) -> bool:
    """Whether activeQ pops ``a`` before ``b``: higher priority, then the earlier entry.

    Equal priority and equal timestamp is not an order at all: the heap may pop either.
    """
    return a.priority > b.priority or (a.priority == b.priority and a.timestamp < b.timestamp)


@dataclass(frozen=True)
class ActiveQueue:
    """activeQ: the heap, and the keys queued (dirty) or being tried (processing).

    A key is at most once in the heap; a push while it is being tried only marks it
    dirty, and ``done`` puts it back. That is what keeps one binding from being tried
    twice at once by the single worker and a concurrent event.
    """

    heap: tuple[QueuedBinding, ...] = ()
    dirty: frozenset[str] = frozenset()
    processing: frozenset[str] = frozenset()

    def has(self, key: str) -> bool:
        return key in self.dirty


def push(q: ActiveQueue, b: QueuedBinding, now: int) -> tuple[ActiveQueue, QueuedBinding]:
    """activequeue.Push: the binding as it now stands, stamped with ``now``.

    A key already queued is left as it is, priority included: a new priority reaches
    the heap only through a later push after a pop. Every other push restamps the
    binding, so the tie-break among equal priorities is the latest entry, not creation.
    """
    if q.has(b.key):
        return q, b
    b = replace(b, timestamp=now, first_queued=now if b.first_queued is None else b.first_queued)
    dirty = q.dirty | {b.key}
    if b.key in q.processing:
        return replace(q, dirty=dirty), b
    return replace(q, heap=q.heap + (b,), dirty=dirty), b


def pop(q: ActiveQueue) -> tuple[QueuedBinding | None, ActiveQueue]:
    """activequeue.Pop: the head by ``less``, counted as one more attempt; None when empty.

    Among bindings ``less`` cannot tell apart the model takes the first pushed; upstream's
    heap may take either (see ``start_orders`` for where that shows).
    """
    if not q.heap:
        return None, q
    head = q.heap[0]
    for b in q.heap[1:]:
        if less(b, head):
            head = b
    rest = tuple(b for b in q.heap if b is not head)
    head = replace(head, attempts=head.attempts + 1)
    return head, ActiveQueue(rest, q.dirty - {head.key}, q.processing | {head.key})


def done(q: ActiveQueue, b: QueuedBinding, now: int) -> ActiveQueue:
    """activequeue.Done: a binding pushed again while it was tried goes back, restamped.

    What goes back is the binding handed to done (the one popped), not the one pushed
    meanwhile: a priority that changed during the attempt waits for the next push.
    """
    processing = q.processing - {b.key}
    if b.key in q.dirty:
        return ActiveQueue(q.heap + (replace(b, timestamp=now),), q.dirty, processing)
    return replace(q, processing=processing)


def needs_scheduling(b: Binding) -> bool:
    """Whether popping this binding leads to an attempt (doScheduleBinding), not a no-op.

    A binding never placed has no applied placement; a placed one is rescheduled
    when its replicas no longer match what was assigned. A placed, unchanged
    binding is popped and left alone.
    """
    return b.assigned != b.replicas


def start_orders(bindings: Iterable[Binding], gate: bool) -> list[list[Binding]]:
    """Every order in which a starting scheduler may try the bindings that exist.

    Every existing binding is pushed by the informer's add events before the
    worker pops the first one, so with the gate on the whole set is ordered at
    once: higher priority first. The informer's initial list has no fixed order
    (client-go fills the store from a map), and each push stamps the time, so
    equal priorities come out in any order; with the gate off (a FIFO of that
    list) so does everything. Seen on v1.18.2: three equal-priority bindings
    named a, b, c were first scheduled b, c, a.
    """
    todo = [b for b in bindings if needs_scheduling(b)]
    if not gate:
        return [list(p) for p in permutations(todo)]
    levels = sorted({b.queue_priority for b in todo}, reverse=True)
    groups = [[b for b in todo if b.queue_priority == p] for p in levels]
    return [[b for part in parts for b in part] for parts in product(*(list(permutations(g)) for g in groups))]


def retried_after_failure(gate: bool) -> bool:
    """Whether a binding that did not fit is tried again without any event.

    Gate on: it waits in unschedulableBindings until its own spec changes, a
    cluster's labels or spec change, or the 5-minute leftover flush (beyond any
    scenario): freed room alone brings it back no sooner. Gate off: the legacy
    queue re-adds it with a rate-limited backoff (5 ms doubling), so it keeps
    being tried and takes room that appears at its next retry.
    """
    return not gate
