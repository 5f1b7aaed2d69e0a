"""karmada-scheduler's queue: which binding is tried when, and whether a failed one comes back.

Upstream (v1.18.2): pkg/scheduler/internal/queue (activeQ ordered by
types.go:Less) with the PriorityBasedScheduling gate on; the legacy
RateLimitingQueue (plain FIFO) with it off (pkg/scheduler/scheduler.go).
One worker pops one binding at a time.
"""

from __future__ import annotations

from typing import Iterable

from .objects import Binding


def needs_scheduling(b: Binding) -> bool:
    """Whether popping this binding leads to an attempt (doScheduleBinding), not a no-op.

    A binding never placed has no applied placement; a placed one is rescheduled
    when its replicas no longer match what was assigned. A placed, unchanged
    binding is popped and left alone.
    """
    return b.assigned != b.replicas


def list_key(b: Binding) -> str:
    # The informer's initial list comes in key order: by binding name within one namespace.
    return b.name


def queue_key(b: Binding, gate: bool) -> tuple:
    """The pop order of bindings pushed one after the other in list order.

    Gate on: higher priority first, then earlier entry into activeQ; every push
    stamps the time, so among equal priorities the list order holds. Gate off:
    FIFO, priority ignored.
    """
    return (-b.queue_priority, list_key(b)) if gate else (list_key(b),)


def start_order(bindings: Iterable[Binding], gate: bool) -> list[Binding]:
    """The bindings a starting scheduler tries, in the order it tries them.

    Every existing binding is pushed by the informer's add events before the
    worker pops the first one, so the whole set is ordered at once.
    """
    return sorted((b for b in bindings if needs_scheduling(b)), key=lambda b: queue_key(b, gate))


def retried_after_failure(gate: bool) -> bool:
    """Whether a binding that did not fit is tried again without any event.

    Gate on: it waits in unschedulableBindings until its own spec changes, a
    cluster's labels or spec change, or the 5-minute leftover flush (beyond any
    scenario): freed room alone brings it back no sooner. Gate off: the legacy
    queue re-adds it with a rate-limited backoff (5 ms doubling), so it keeps
    being tried and takes room that appears at its next retry.
    """
    return not gate
