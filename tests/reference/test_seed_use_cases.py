"""The PreemptionToleration KEP's use cases (seed 000), with time moved by freezegun."""

from datetime import datetime, timezone

from freezegun import freeze_time

from reference.objects import PriorityClass
from reference.preemption import predict
from reference.toleration import preemption_matrix

from tests.builders import node, pc, pod, state

CLASSES = [
    pc("system-critical", 10000),
    pc("high", 9000),
    pc("low-non-preempted", 8000, mpp=10000, ts=-1),
    pc("low-non-preempted-10min", 8000, mpp=10000, ts=600),
    pc("low-non-preempted-30min", 8000, mpp=10000, ts=1800),
    pc("low", 8000),
]


def utcnow():
    return datetime.now(timezone.utc)


def one_victim(victim_class: str, preemptor_class: str, scheduled: datetime):
    value = {c.name: c.value for c in CLASSES}
    v = pod("victim", value[victim_class], cls=victim_class, on="n1", scheduled_at=scheduled, start_time=scheduled)
    p = pod("preemptor", value[preemptor_class], cls=preemptor_class)
    return state(CLASSES, [node("n1")], [v, p])


def test_low_non_preempted_cannot_be_preempted_by_high_but_can_by_system_critical():
    with freeze_time("2026-03-01T00:00:00Z") as clock:
        start = utcnow()
        clock.tick(10**6)  # however long it has run
        s = one_victim("low-non-preempted", "high", start)
        assert predict(s, "default/preemptor", "plugins", utcnow()).outcome == "unschedulable"
        s = one_victim("low-non-preempted", "system-critical", start)
        assert predict(s, "default/preemptor", "plugins", utcnow()).victims == {"n1": ("default/victim",)}


def test_low_is_preempted_by_anything_higher():
    with freeze_time("2026-03-01T00:00:00Z"):
        s = one_victim("low", "high", utcnow())
        assert predict(s, "default/preemptor", "plugins", utcnow()).outcome == "preempt"


def test_ten_minute_class_is_guaranteed_ten_minutes_against_high():
    with freeze_time("2026-03-01T00:00:00Z") as clock:
        start = utcnow()
        s = one_victim("low-non-preempted-10min", "high", start)
        clock.tick(599)
        pr = predict(s, "default/preemptor", "plugins", utcnow())
        assert pr.outcome == "unschedulable" and pr.retry_not_before == start.replace(minute=10)
        clock.tick(1)
        assert predict(s, "default/preemptor", "plugins", utcnow()).outcome == "preempt"


def test_thirty_minute_class_still_protected_after_ten_minutes():
    with freeze_time("2026-03-01T00:00:00Z") as clock:
        start = utcnow()
        clock.tick(600)
        s = one_victim("low-non-preempted-30min", "high", start)
        assert predict(s, "default/preemptor", "plugins", utcnow()).outcome == "unschedulable"
        clock.tick(1200)
        assert predict(s, "default/preemptor", "plugins", utcnow()).outcome == "preempt"


def test_system_critical_preempts_the_timed_classes_immediately():
    with freeze_time("2026-03-01T00:00:00Z"):
        for cls in ("low-non-preempted-10min", "low-non-preempted-30min"):
            s = one_victim(cls, "system-critical", utcnow())
            assert predict(s, "default/preemptor", "plugins", utcnow()).outcome == "preempt"


def test_matrix_of_the_kep_classes():
    m = preemption_matrix(state(CLASSES))
    assert m["high", "low-non-preempted"].verdict == "never"
    assert m["high", "low-non-preempted-10min"].verdict == "after 600s"
    assert m["high", "low-non-preempted-30min"].verdict == "after 1800s"
    assert m["high", "low"].verdict == "immediately"
    assert m["system-critical", "low-non-preempted"].verdict == "immediately"


def test_matrix_of_the_kep_classes_upstream_knows_no_toleration():
    m = preemption_matrix(state(CLASSES), build="upstream")
    for victim in ("low-non-preempted", "low-non-preempted-10min", "low-non-preempted-30min", "low"):
        assert m["high", victim].verdict == "immediately"
    assert m["low", "high"].verdict == "no" and m["low", "low-non-preempted"].verdict == "no"


def test_matrix_names_what_the_plugin_ignores_and_cannot_parse():
    from reference.toleration import SIGS_PREFIX

    classes = [pc("high", 9000), pc("low", 8000),
               PriorityClass("low-sigs", 8000, annotations=((SIGS_PREFIX + "toleration-seconds", "-1"),)),
               PriorityClass("low-garbled", 8000, annotations=(
                   ("preemption-toleration.scheduling.x-k8s.io/toleration-seconds", "ten"),))]
    m = preemption_matrix(state(classes))
    assert m["high", "low-sigs"].verdict == "immediately" and "ignored" in m["high", "low-sigs"].reason
    assert m["high", "low-garbled"].verdict == "immediately" and "does not parse" in m["high", "low-garbled"].reason
