"""semantics.md section 2: scheduling queue order and retries."""

from datetime import timedelta

from reference.queue import backoff, queue_order, retry_after_toleration

from tests.builders import T0, pod


def test_higher_priority_first_then_time_entered_queue_not_creation_time():
    older_created_requeued_late = pod("a", 10, slots=0, queued_at=T0 + timedelta(seconds=9))
    newer = pod("b", 10, slots=0, queued_at=T0 + timedelta(seconds=1))
    top = pod("c", 20, slots=0, queued_at=T0 + timedelta(seconds=99))
    assert queue_order([older_created_requeued_late, newer, top]) == [("default/c",), ("default/b",), ("default/a",)]


def test_exact_ties_are_a_set_not_an_order():
    a, b = pod("a", 1, slots=0, queued_at=T0), pod("b", 1, slots=0, queued_at=T0)
    assert queue_order([b, a]) == [("default/a", "default/b")]


def test_never_pod_still_sorts_by_its_priority():
    never_high = pod("np", 1000, never=True, slots=0, queued_at=T0 + timedelta(seconds=5))
    low = pod("low", 1, slots=0, queued_at=T0)
    assert queue_order([low, never_high])[0] == ("default/np",)


def test_backoff_starts_at_one_second_doubles_and_caps_at_ten():
    assert [backoff(n).total_seconds() for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_toleration_expiry_is_not_a_cluster_event_so_the_retry_is_a_window():
    # Refused at T0; the victim's toleration ends 60 s later. Nothing wakes the
    # preemptor then: the 5-minute flush does.
    w = retry_after_toleration(T0, T0 + timedelta(seconds=60))
    assert w.earliest == T0 + timedelta(minutes=5)
    assert T0 + timedelta(seconds=60) < w.earliest
    assert w.latest >= T0 + timedelta(minutes=5, seconds=30)
    assert not w.contains(T0 + timedelta(seconds=61))


def test_retry_window_when_the_toleration_outlasts_several_flushes():
    w = retry_after_toleration(T0, T0 + timedelta(minutes=12))
    # Two retries end by 11 min at the latest, so the third (>= 15 min) is the first possible success.
    assert w.earliest == T0 + timedelta(minutes=15)
    assert w.latest >= T0 + timedelta(minutes=17, seconds=30)
