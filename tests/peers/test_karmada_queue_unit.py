"""Peer cases: karmada v1.18.2 pkg/scheduler/internal/queue, active_queue_test.go (TestPriorityQueue)
and scheduling_queue_test.go (TestBackoffQueue_getBackoffTime, TestBackoffQueue_calculateBackoffDuration,
TestBackoffQueueOrdering), through the binding model's queue (reference.binding.queue: push, pop)
and backoff (reference.binding.backoff). Each test names its upstream function and case, and is the
``test:`` of that case in peers/upstream-cases.yaml; the facts (keys, priorities, timestamps,
attempts, the two backoff settings, the expected answers) are the upstream rows', written anew.

Times are nanoseconds. Upstream's calendar instant (1 October 2025, UTC) is kept as nanoseconds after
the Unix epoch; its fake clock's "now" is any instant, here NOW.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from reference.binding.backoff import SECOND, Backoff, duration, ends, flush
from reference.binding.queue import ActiveQueue, QueuedBinding, pop, push

INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1


def ns(t: datetime) -> int:
    return int(t.timestamp()) * SECOND


# -- TestPriorityQueue --------------------------------------------------------------------------------------

@pytest.mark.parametrize("first, second, head", [
    # Add b1, b2 and Get the binding with highest priority: b1 at 2, b2 at 3
    pytest.param(QueuedBinding("foo1", priority=2), QueuedBinding("foo2", priority=3), "foo2", id="higher-priority"),
    # Add b1, b2 and Get the binding which was enqueued first: neither has a priority
    pytest.param(QueuedBinding("foo1"), QueuedBinding("foo2"), "foo1", id="enqueued-first"),
])
def test_priority_queue(first, second, head):
    """TestPriorityQueue: two pushes, one pop. Each push stamps the time it happens (the second
    comes later), so with equal priorities the earlier push is popped."""
    q, _ = push(ActiveQueue(), first, now=1)
    q, _ = push(q, second, now=2)
    got, q = pop(q)
    assert got.key == head and got.attempts == 1
    assert q.processing == {head} and len(q.heap) == 1


# -- TestBackoffQueue_getBackoffTime ------------------------------------------------------------------------

OCT_1 = ns(datetime(2025, 10, 1, tzinfo=timezone.utc))


@pytest.mark.parametrize("initial, cap, attempts, want", [
    # no backoff: never tried yet, so the backoff ends when the binding was queued
    pytest.param(1 * SECOND, 32 * SECOND, 0, OCT_1, id="no-backoff"),
    # normal backoff within max backoff duration: four tries, 1 s doubled three times
    pytest.param(1 * SECOND, 32 * SECOND, 4, OCT_1 + 8 * SECOND, id="within-max"),
    # zero maxBackoffDuration means no backoff: both settings zero, five tries
    pytest.param(0, 0, 5, OCT_1, id="zero-max"),
])
def test_backoff_time(initial, cap, attempts, want):
    """TestBackoffQueue_getBackoffTime: when the backoff of a binding queued on 1 October 2025 ends."""
    b = QueuedBinding("b", timestamp=OCT_1, attempts=attempts)
    assert ends(b, Backoff(initial, cap)) == want


# -- TestBackoffQueue_calculateBackoffDuration ---------------------------------------------------------------

@pytest.mark.parametrize("initial, cap, attempts, want", [
    # no backoff: no try yet
    pytest.param(1, 32, 0, 0, id="no-backoff"),
    # normal: three tries from 1 ns
    pytest.param(1, 32, 3, 4, id="normal"),
    # hitting max backoff duration: sixteen tries would be 32768 ns, capped at 32
    pytest.param(1, 32, 16, 32, id="hits-max"),
    # overflow_32bit: the cap is the largest int32 and 2^31 would pass it
    pytest.param(1, INT32_MAX, 32, INT32_MAX, id="overflow-32"),
    # overflow_64bit: the cap is the largest int64 and 2^63 would overflow it
    pytest.param(1, INT64_MAX, 64, INT64_MAX, id="overflow-64"),
])
def test_backoff_duration(initial, cap, attempts, want):
    """TestBackoffQueue_calculateBackoffDuration: the wait after a number of tries, in nanoseconds."""
    assert duration(attempts, Backoff(initial, cap)) == want


# -- TestBackoffQueueOrdering ------------------------------------------------------------------------------

NOW = 1_000 * SECOND
WAITING = {
    # priority 10, queued 6 s ago, four tries: 8 s of backoff, not over yet
    "binding1": QueuedBinding("binding1", priority=10, timestamp=NOW - 6 * SECOND, attempts=4),
    # priority 1, queued 2 s ago, one try: 1 s, over 1 s ago
    "binding2": QueuedBinding("binding2", priority=1, timestamp=NOW - 2 * SECOND, attempts=1),
    # priority 2, the same wait as binding2: over at the same instant
    "binding3": QueuedBinding("binding3", priority=2, timestamp=NOW - 2 * SECOND, attempts=1),
    # priority 2, queued 3 s ago, two tries: 2 s, over at the same instant as binding3, queued earlier
    "binding4": QueuedBinding("binding4", priority=2, timestamp=NOW - 3 * SECOND, attempts=2),
}


@pytest.mark.parametrize("waiting, moved", [
    # backoffQueue is empty, and no binding moved to activeQ
    pytest.param([], [], id="empty"),
    # high priority binding with long backoff duration should not block lower priority bindings
    pytest.param(["binding1", "binding2"], ["binding2"], id="long-high-does-not-block"),
    # bindings with the same backoff time should be sorted by priority
    pytest.param(["binding2", "binding3"], ["binding3", "binding2"], id="same-end-by-priority"),
    # bindings with the same backoff time and priority should be sorted by timestamp
    pytest.param(["binding3", "binding4"], ["binding4", "binding3"], id="same-end-and-priority-by-timestamp"),
])
def test_backoff_queue_ordering(waiting, moved):
    """TestBackoffQueueOrdering: one flush of the backoff queue with the default settings (1 s, 10 s):
    the bindings moved to activeQ, in order, and how many stay."""
    out, stay = flush([WAITING[k] for k in waiting], NOW, Backoff())
    assert [b.key for b in out] == moved
    assert len(stay) == len(waiting) - len(moved)
