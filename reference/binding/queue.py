"""karmada-scheduler's queue: which binding is tried when, and whether a failed one comes back.

Upstream (v1.18.2): pkg/scheduler/internal/queue (activeQ ordered by
types.go:Less) with the PriorityBasedScheduling gate on; the legacy
RateLimitingQueue (plain FIFO) with it off (pkg/scheduler/scheduler.go).
One worker pops one binding at a time.
"""

from __future__ import annotations

from itertools import permutations, product
from typing import Iterable

from .objects import Binding


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
