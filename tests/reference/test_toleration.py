"""semantics.md section 4: the PreemptionToleration policy."""

from datetime import timedelta

import pytest

from reference.objects import PriorityClass
from reference.toleration import (
    SIGS_PREFIX,
    ClassMissing,
    Policy,
    exempted_from_preemption,
    parse_policy,
    preemption_matrix,
)

from tests.builders import T0, pc, pod, state

P = "preemption-toleration.scheduling.x-k8s.io/"


def test_policy_defaults_minimum_is_value_plus_one_and_toleration_zero():
    assert parse_policy(pc("c", 8000)) == Policy(8001, 0)


def test_policy_reads_both_annotations():
    assert parse_policy(pc("c", 8000, mpp=10000, ts=600)) == Policy(10000, 600)


def test_victim_without_class_name_is_never_exempted():
    s = state([pc("low", 1, mpp=100, ts=-1)])
    assert not exempted_from_preemption(pod("v", 1, on="n"), pod("p", 50), s, T0)


def test_victim_whose_class_cannot_be_read_is_an_error():
    with pytest.raises(ClassMissing):
        exempted_from_preemption(pod("v", 1, cls="gone", on="n"), pod("p", 50), state(), T0)


def test_preemptor_with_policy_never_exempts_everyone():
    s = state([pc("low", 1)])
    assert exempted_from_preemption(pod("v", 1, cls="low", on="n"), pod("p", 50, never=True), s, T0)


@pytest.mark.parametrize("bad", ["ten", "1.5", "", " 5", "99999999999"])
def test_annotation_that_does_not_parse_means_no_policy(bad):
    c = PriorityClass("low", 1, annotations=((P + "minimum-preemptable-priority", bad), (P + "toleration-seconds", "-1")))
    ex = exempted_from_preemption(pod("v", 1, cls="low", on="n"), pod("p", 50), state([c]), T0)
    assert not ex and "does not parse" in ex.reason


def test_preemptor_at_or_above_minimum_preemptable_priority_is_not_refused():
    s = state([pc("low", 1, mpp=100, ts=-1)])
    assert not exempted_from_preemption(pod("v", 1, cls="low", on="n"), pod("p", 100), s, T0)
    assert exempted_from_preemption(pod("v", 1, cls="low", on="n"), pod("p", 99), s, T0)


def test_negative_toleration_seconds_exempts_forever():
    s = state([pc("low", 1, mpp=100, ts=-1)])
    v = pod("v", 1, cls="low", on="n", age=10**8)
    assert exempted_from_preemption(v, pod("p", 99), s, T0 + timedelta(days=10000))


def test_victim_without_pod_scheduled_condition_is_exempted():
    s = state([pc("low", 1, mpp=100, ts=5)])
    v = pod("v", 1, cls="low", on="n", scheduled_at=None)
    ex = exempted_from_preemption(v, pod("p", 99), s, T0)
    assert ex and "PodScheduled" in ex.reason


def test_positive_toleration_exempts_until_scheduled_time_plus_seconds():
    s = state([pc("low", 1, mpp=100, ts=60)])
    v = pod("v", 1, cls="low", on="n", age=0)
    assert exempted_from_preemption(v, pod("p", 99), s, T0 + timedelta(seconds=59))
    assert not exempted_from_preemption(v, pod("p", 99), s, T0 + timedelta(seconds=60))


def test_toleration_seconds_zero_means_no_toleration():
    s = state([pc("low", 1, mpp=100, ts=0)])
    assert not exempted_from_preemption(pod("v", 1, cls="low", on="n", age=0), pod("p", 99), s, T0)


def test_policy_is_read_from_the_class_as_it_is_now():
    v = pod("v", 1, cls="low", on="n")
    before = state([pc("low", 1)])
    after = state([pc("low", 1, mpp=100, ts=-1)])
    assert not exempted_from_preemption(v, pod("p", 99), before, T0)
    assert exempted_from_preemption(v, pod("p", 99), after, T0)


def test_victim_priority_is_the_stamped_value_not_the_class_value():
    # The class now says 500, but the pod was admitted at 1: it is a potential
    # victim of a 499 pod, while the default minimum comes from the class (501).
    s = state([pc("low", 500, ts=-1)])
    v = pod("v", 1, cls="low", on="n")
    assert exempted_from_preemption(v, pod("p", 499), s, T0)


def test_annotations_under_the_sigs_prefix_have_no_effect():
    s = state([pc("low", 1, mpp=100, ts=-1, prefix=SIGS_PREFIX)])
    assert not exempted_from_preemption(pod("v", 1, cls="low", on="n"), pod("p", 99), s, T0)
    assert exempted_from_preemption(pod("v", 1, cls="low", on="n"), pod("p", 99), s, T0, prefix=SIGS_PREFIX)


def test_matrix_reads_immediately_after_n_seconds_and_never():
    s = state([pc("critical", 10000), pc("high", 9000), pc("low-np", 8000, mpp=10000, ts=-1),
               pc("low-10m", 8000, mpp=10000, ts=600), pc("low", 8000)])
    m = preemption_matrix(s)
    assert m["critical", "low-np"].verdict == "immediately"
    assert m["high", "low-np"].verdict == "never"
    assert m["high", "low-10m"].verdict == "after 600s"
    assert m["high", "low"].verdict == "immediately"
    assert m["low", "high"].verdict == "no"
