"""Peer cases: scheduler-plugins v0.35.4-devel pkg/preemptiontoleration unit tables, through the
model's toleration rule (reference.toleration). Each test names its upstream case in
peers/upstream-cases.yaml (``test:``); the facts (classes, priorities, times, expected verdict)
are the upstream rows', written anew."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reference.objects import PriorityClass
from reference.toleration import DEFAULT_PREFIX, ClassMissing, PolicyError, exempted_from_preemption, parse_policy

from tests.builders import T0, pod, state

MPP, TS = DEFAULT_PREFIX + "minimum-preemptable-priority", DEFAULT_PREFIX + "toleration-seconds"
CLASS = "victim-class"


def klass(value: int, **annotations: str) -> PriorityClass:
    return PriorityClass(CLASS, value, annotations=tuple(sorted(annotations.items())))


def victim(priority: int, scheduled_ago: float | None = None):
    scheduled = None if scheduled_ago is None else T0 - timedelta(seconds=scheduled_ago)
    return pod("v", priority, cls=CLASS, on="n1", scheduled_at=scheduled, start_time=scheduled)


def exempt(pc: PriorityClass | None, v, preemptor_priority: int, never: bool = False) -> bool:
    s = state(classes=[pc] if pc else [])
    return bool(exempted_from_preemption(v, pod("p", preemptor_priority, never=never), s, T0))


# -- preemption_toleration_policy_test.go TestParsePreemptionTolerationPolicyToleration ------------


def test_policy_defaults_to_the_class_value_plus_one_and_no_toleration():
    assert parse_policy(klass(100)) == parse_policy(klass(100)).__class__(101, 0)


def test_policy_reads_both_annotations():
    p = parse_policy(klass(100, **{MPP: "200", TS: "60"}))
    assert (p.minimum_preemptable_priority, p.toleration_seconds) == (200, 60)


@pytest.mark.parametrize("annotations", [{MPP: "a"}, {MPP: "200", TS: "a"}], ids=["minimum", "seconds"])
def test_an_unparsable_annotation_is_an_error(annotations):
    with pytest.raises(PolicyError):
        parse_policy(klass(100, **annotations))


def test_negative_toleration_seconds_parse():
    assert parse_policy(klass(100, **{MPP: "200", TS: "-1"})).toleration_seconds == -1


# -- preemption_toleration_test.go TestExemptedFromPreemption* ---------------------------------------


def test_a_missing_class_is_an_error():
    with pytest.raises(ClassMissing, match=f'"{CLASS}" not found'):
        exempt(None, victim(3), 2)


@pytest.mark.parametrize("annotations", [{MPP: "a"}, {MPP: "10", TS: "a"}], ids=["minimum", "seconds"])
def test_an_unparsable_policy_exempts_nobody(annotations):
    assert not exempt(klass(3, **annotations), victim(3), 2)


def test_a_never_preemptor_is_refused_by_every_victim():
    assert exempt(klass(1), victim(1), 2, never=True)


def test_without_a_policy_a_lower_victim_is_not_exempt():
    assert not exempt(klass(1), victim(1), 2)


def test_without_a_policy_a_victim_not_lower_is_exempt():
    # The default minimum (its value + 1) is above the preemptor; no PodScheduled=True condition:
    # its toleration never starts.
    assert exempt(klass(3), victim(3), 2)


@pytest.mark.parametrize("preemptor", [201, 200], ids=["above", "equal"])
def test_a_preemptor_at_or_above_the_minimum_is_not_tolerated(preemptor):
    assert not exempt(klass(100, **{MPP: "200"}), victim(100, scheduled_ago=0), preemptor)


@pytest.mark.parametrize("seconds, ago, want", [(0, 0, False), (-1, 10**9, True), (100, 101, False), (100, 10, True)],
                         ids=["zero", "negative-forever", "expired", "within"])
def test_below_the_minimum_the_window_decides(seconds, ago, want):
    assert exempt(klass(100, **{MPP: "200", TS: str(seconds)}), victim(100, scheduled_ago=ago), 199) is want
