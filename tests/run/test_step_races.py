"""Which outcomes a step allows where the cluster's clocks race the model's: a terminating pod
due about the moment of the action, the model's course past a mid-way look's moment, and the
backoff of a pod tried again after a failure. Each from an explorer divergence (seed 11,
upstream build, Kubernetes 1.35) that was the kit's, not the scheduler's."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from harness.formats.pods import Step
from harness.run.pods.expectation import apply_step, due_first, later_states, retried_after_failure
from harness.run.pods.scenario_run import LAG, RETRY_LAG, settle_window
from reference import scheduler as sched
from tests.builders import T0, node, pc, pod, state


def _s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def test_a_pod_due_to_go_at_the_action_may_be_gone_before_the_scheduler_tries_the_step():
    """x11-0005: p3 (deletionTimestamp 03:51:10) still terminating when q3 was created in that
    second; the model had q3 preempt p1 on n1 and then bind on n2 once p3 was gone; the cluster
    tried q3 1.7 s later, after kwok had removed p3, and bound it to n2 with p1 untouched."""
    now = T0 + _s(0.4)
    before = sched.start(state(
        [pc("c2", 242), pc("c3", 100_000_000), pc("c5", 999_999_999), pc("c6", 149_172)],
        [node("n1", 2), node("n2", 3)],
        [pod("p1", 242, cls="c2", on="n1", termination_grace_seconds=20),
         pod("p2", 100_000_000, cls="c3", on="n1"),
         pod("q1", 999_999_999, cls="c5", on="n2"),
         pod("p3", 999_999_999, cls="c5", on="n2", slots=2, deletion_timestamp=T0)]), "upstream", now)
    step = Step.model_validate({"createPod": {"name": "q3", "slots": 1, "class": "c6"}})

    first = sched.view(apply_step(before, step))
    assert first["p1"].phase == "gone" and first["p1"].preempted, "the model's own order: q3 before p3's end"
    raced = [sched.view(w) for w in due_first(before, step, now + _s(0.1))]
    assert any(v["p1"].phase == "running" and not v["p1"].preempted and v["q3"].node == "n2" for v in raced)
    # A pod due well after the action is the model's to order: no other outcome.
    later = replace(before, state=before.state.with_pod(
        before.state.pod_keyed("default/p3").with_(deletion_timestamp=T0 + _s(5))))
    assert due_first(later, step, now + _s(0.1)) == []


def _shrunk_x11_0253(p1_due: float):
    """n1 (2 slots): p1 terminating, p2; n2 (3 slots): q1 (grace 1); q4 needs all of n2."""
    return sched.start(state(
        [pc("c1", 180, never=True), pc("c2", 180), pc("c4", 35_849_330)],
        [node("n1", 2), node("n2", 3)],
        [pod("p1", 180, cls="c1", on="n1", never=True, deletion_timestamp=T0 + _s(p1_due)),
         pod("p2", 180, cls="c2", on="n1", termination_grace_seconds=20),
         pod("q1", 180, cls="c2", on="n2", termination_grace_seconds=1)]), "upstream", T0)


def test_a_mid_way_look_allows_the_models_course_up_to_the_looks_end():
    """x11-0253 (shrunk): `settle: 2s`; the model put p1 still terminating at 2 s (due at 2.5 s)
    with q4 bound. Replayed on a quiet machine, that state held 2.0 s (q4 bound 0.6 s after the
    action, p1 gone at 2.6 s), short of the 2 s hold by a poll; under load q4 was bound after p1
    had gone, so the state the model put at 2 s never showed."""
    before = _shrunk_x11_0253(2.5)
    step = Step.model_validate({"createPod": {"name": "q4", "slots": 3, "grace": 0, "class": "c4"}, "settle": "2s"})
    at_moment = apply_step(before, step)
    assert sched.view(at_moment)["p1"].phase == "terminating"
    look_from, deadline = settle_window(2.0, 2.0, bool(retried_after_failure(before, at_moment)))
    course = later_states([at_moment], T0 + _s(look_from + deadline))
    assert [w.now for w in course] == [T0 + _s(2.5)]
    shown = sched.view(course[0])
    assert "p1" not in shown and shown["q4"].node == "n2" and shown["q1"].phase == "gone"
    # Only up to the look's end.
    assert later_states([at_moment], T0 + _s(2.4)) == []


def test_a_mid_way_look_waits_out_the_backoff_of_a_pod_tried_again_after_a_failure():
    """x11-0253 (the draw): q1, parked since the set-up and tried seven times in 16 s by other
    scenarios' events, last at 03:46:21.57, was woken by p1's end at 03:46:22.5 and, its backoff
    at the 10 s cap, was not due out of backoffQ before 03:46:32 (earlier only if activeQ ran empty,
    which a busy shared scheduler need not do); the `settle: 2s` look ended at 03:46:29 with q1
    pending, where the model had it bound at p1's end."""
    before = sched.start(state([pc("c2", 180), pc("c4", 1000)], [node("n1", 1), node("n2", 1)],
                               [pod("p1", 180, cls="c2", on="n1", deletion_timestamp=T0 + _s(0.6)),
                                pod("q1", 180, cls="c2", queued_at=T0 - _s(16))]), "upstream", T0)
    before = replace(before, parked=(("default/q1", T0 - _s(16)),),
                     rejectors=(("default/q1", frozenset({"NodeResourcesFit"})),))
    step = Step.model_validate({"createPod": {"name": "q4", "slots": 1, "class": "c4"}, "settle": "2s"})
    predicted = apply_step(before, step)
    assert sched.view(predicted)["q1"].node == "n1"
    assert retried_after_failure(before, predicted) == ["default/q1"]
    look_from, deadline = settle_window(2.0, 2.0, True)
    assert look_from + deadline == 2.0 + LAG + RETRY_LAG >= 0.6 + 10 + 1 + LAG
    # A preemptor nominated on its first attempt, its victim still terminating, waits for nobody's backoff.
    nominated = apply_step(_shrunk_x11_0253(2.5), Step.model_validate(
        {"createPod": {"name": "q4", "slots": 3, "grace": 0, "class": "c4"}, "settle": "0.5s"}))
    assert sched.view(nominated)["q4"].nominated == "n2"
    assert retried_after_failure(_shrunk_x11_0253(2.5), nominated) == []


def test_a_victim_gone_before_its_preemptor_bound_wakes_the_preemptor_in_the_model_too():
    """x52-0681: the cluster was read between p3's delete and q1's bind: p3 gone, q1 still parked
    (nominated to n2). The model, started from that reading, had lost the deletion that wakes q1
    and kept it parked until the flush; the removal since the last step's end now wakes it."""
    from harness.run.pods.check import woken_by_removals
    from reference.requeue import NODE_RESOURCES_FIT

    then = sched.start(state(
        [pc("c1", 519_350), pc("c2", 27_370)],
        [node("n2", 4)],
        [pod("p3", 27_370, cls="c2", on="n2", slots=3, deletion_timestamp=T0 + _s(5)),
         pod("q1", 519_350, cls="c1", slots=2, nominated_node_name="n2")]), "upstream", T0)
    then = replace(then, parked=(("default/q1", T0 + _s(0.1)),),
                   rejectors=(("default/q1", frozenset({NODE_RESOURCES_FIT})),))
    observed = replace(then, state=then.state.without_pods(["default/p3"]), now=T0 + _s(5.2))
    assert sched.view(observed)["q1"].phase == "pending"
    assert sched.view(woken_by_removals(observed, then))["q1"].node == "n2"
    assert woken_by_removals(observed, None) is observed
    # Parked after p3 was due to go, q1 was tried with the room free: nothing to wake it again.
    late = replace(observed, parked=(("default/q1", T0 + _s(6)),))
    assert sched.view(woken_by_removals(late, then))["q1"].phase == "pending"
