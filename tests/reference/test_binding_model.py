"""The Karmada binding-priority model, one rule per test (docs/research/karmada-binding-priority.md)."""

import pytest

from reference.binding.objects import ABSENT, SCHEDULED, UNSCHEDULABLE, WAITING, App, Binding, KarmadaClass, Member
from reference.binding.plan import CreateClass, Delete, DeleteClass, Expect, Plan, Propagate, Scale, SetScheduler, Step, Wait
from reference.binding.predict import UNSET, Undetermined, predict
from reference.binding.priority import Built, ClassMissing, apply_policy, resolve_priority
from reference.binding.queue import needs_scheduling, retried_after_failure, start_orders
from reference.binding.scheduling import DoesNotFit, Placed, attempt, free_replicas, webster

HIGH = KarmadaClass("high", 1000)
M1 = Member("m1", 4000)


def app(name, replicas=1, cpu=1000, cls=None):
    return App(name, replicas, cpu, cls)


def binding(name, priority=None, replicas=1, cpu=1000, clusters=(), unschedulable=False):
    return Binding(name, priority, replicas, cpu, tuple(clusters), unschedulable)


def run(*actions, members=(M1,), classes=(HIGH,), gate=True, order=None):
    """The expectation after the last action."""
    steps = [Step(a) for a in actions[:-1]] + [Step(actions[-1], Expect(order))]
    return predict(Plan(tuple(members), tuple(classes), tuple(steps), gate))[-1]


# --- the detector: priority resolution ------------------------------------------------


def test_the_class_value_is_copied_and_nothing_else():
    r = resolve_priority(app("a", cls="high"), {"high": HIGH})
    assert r.priority == 1000 and "high" in r.reason


def test_no_schedule_priority_leaves_the_field_absent_whatever_classes_exist():
    # globalDefault is never consulted: the model has no notion of it to consult.
    r = resolve_priority(app("a"), {"high": HIGH})
    assert r.priority is None and "globalDefault" in r.reason


def test_the_scheduler_reads_an_absent_priority_as_zero():
    assert binding("a").queue_priority == 0
    assert binding("a", priority=-5).queue_priority == -5


def test_a_missing_class_builds_no_binding():
    built = apply_policy(app("a", cls="gone"), {}, None)
    assert isinstance(built, ClassMissing) and not built and "no binding" in built.reason


def test_a_missing_class_leaves_an_existing_binding_untouched():
    old = binding("a", priority=100, replicas=1, clusters=[("m1", 1)])
    built = apply_policy(app("a", replicas=3, cls="gone"), {}, old)
    assert isinstance(built, ClassMissing) and "left as it was" in built.reason


def test_a_reconcile_rewrites_priority_and_replicas_but_not_the_schedulers_result():
    old = binding("a", priority=100, replicas=1, clusters=[("m1", 1)])
    built = apply_policy(app("a", replicas=2, cls="high"), {"high": HIGH}, old)
    assert isinstance(built, Built)
    assert built.binding == binding("a", priority=1000, replicas=2, clusters=[("m1", 1)])


# --- karmada-scheduler's queue -----------------------------------------------------------


def apps_in(orders) -> set[tuple[str, ...]]:
    return {tuple(b.app for b in o) for o in orders}


def test_higher_priority_first_equal_priorities_in_any_order():
    bs = [binding("b", 5), binding("a", 5), binding("c", 9), binding("d", None), binding("e", -1)]
    assert apps_in(start_orders(bs, gate=True)) == {("c", "b", "a", "d", "e"), ("c", "a", "b", "d", "e")}


def test_no_priority_is_read_as_zero_in_the_queue():
    assert apps_in(start_orders([binding("n", None), binding("p", 1), binding("m", -1)], gate=True)) == {("p", "n", "m")}


def test_gate_off_is_the_informers_list_order_which_is_not_fixed():
    bs = [binding("b", 5), binding("c", 9), binding("a", 1)]
    assert len(apps_in(start_orders(bs, gate=False))) == 6


def test_a_placed_unchanged_binding_is_not_tried_again():
    assert not needs_scheduling(binding("a", replicas=2, clusters=[("m1", 2)]))
    assert needs_scheduling(binding("a", replicas=3, clusters=[("m1", 2)]))  # scaled
    assert needs_scheduling(binding("a", replicas=2, unschedulable=True))


def test_a_starting_scheduler_tries_only_what_needs_scheduling_in_queue_order():
    placed = binding("z", 9999, clusters=[("m1", 1)])
    orders = start_orders([binding("b", 1), placed, binding("a", 1), binding("c", 2)], gate=True)
    assert apps_in(orders) == {("c", "a", "b"), ("c", "b", "a")}


def test_only_the_legacy_queue_retries_a_binding_that_did_not_fit():
    assert retried_after_failure(gate=False) and not retried_after_failure(gate=True)


# --- one scheduling attempt ---------------------------------------------------------------


def test_room_is_floor_of_free_cpu_summed_per_member_after_every_placed_binding():
    placed = [binding("x", cpu=1500, replicas=2, clusters=[("m1", 2)]), binding("y", cpu=700, clusters=[("m2", 1)])]
    free = free_replicas([Member("m1", 4000), Member("m2", 1000)], placed, 1000)
    assert free == {"m1": 1, "m2": 0}  # 1000 left on m1; 300 on m2 fits no replica


def test_aggregated_takes_the_member_with_most_room_then_the_first_name():
    members = [Member("m1", 2000), Member("m2", 3000), Member("m3", 3000)]
    assert attempt(binding("a", replicas=2), members, []).assignments == {(("m2", 2),)}


def test_aggregated_uses_the_fewest_members_and_splits_by_webster_over_their_room():
    members = [Member("m1", 2000), Member("m2", 3000), Member("m3", 1000)]
    placed = attempt(binding("a", replicas=4), members, [])
    # m2 then m1 hold 4; 4 seats by room 3:2 -> 2:2 under Webster's method, m3 unused.
    assert placed.assignments == {(("m1", 2), ("m2", 2))}


def test_a_webster_tie_may_go_either_way():
    assert webster(3, {"m1": 2, "m2": 2}, True) == {"m1": 2, "m2": 1}
    assert webster(3, {"m1": 2, "m2": 2}, False) == {"m1": 1, "m2": 2}
    placed = attempt(binding("a", replicas=3), [Member("m1", 2000), Member("m2", 2000)], [])
    assert placed.assignments == {(("m1", 2), ("m2", 1)), (("m1", 1), ("m2", 2))}


def test_not_enough_room_summed_over_members_is_unschedulable():
    members = [Member("m1", 1500), Member("m2", 1500)]  # 1 + 1 replicas of 1000m
    out = attempt(binding("a", replicas=3), members, [])
    assert isinstance(out, DoesNotFit) and "room for 2 of 3" in out.reason
    assert isinstance(attempt(binding("a", replicas=2), members, []), Placed)


def test_scaling_up_fills_the_bindings_own_members_first():
    b = binding("a", replicas=2, clusters=[("m1", 1)])
    members = [Member("m1", 2000), Member("m2", 9000)]
    assert attempt(b, members, [b]).assignments == {(("m1", 2),)}


def test_a_failed_scale_up_keeps_the_old_clusters():
    b = binding("a", replicas=5, clusters=[("m1", 1)])
    assert isinstance(attempt(b, [Member("m1", 2000)], [b]), DoesNotFit)


def test_scaling_down_shrinks_in_proportion_over_the_old_members():
    b = binding("a", replicas=2, clusters=[("m1", 3), ("m2", 1)])
    assert attempt(b, [Member("m1", 9000), Member("m2", 9000)], [b]).assignments == {(("m1", 2),)}


# --- chained steps ------------------------------------------------------------------------


def test_priority_from_class_and_scheduled_at_once():
    e = run(Propagate(app("a", 2, cls="high")))
    b = e.bindings["a"]
    assert (b.state, b.priority, b.clusters) == (SCHEDULED, 1000, {(("m1", 2),)})
    assert "PriorityClass 'high'" in b.reason


def test_missing_class_then_created_binding_appears_with_its_value():
    assert run(Propagate(app("a", cls="late"))).bindings["a"].state == ABSENT
    assert run(Propagate(app("a", cls="late"))).bindings["a"].priority is UNSET
    b = run(Propagate(app("a", cls="late")), CreateClass(KarmadaClass("late", 7))).bindings["a"]
    assert (b.state, b.priority) == (SCHEDULED, 7) and "retry" in b.reason


def test_a_recreated_class_does_not_reach_an_existing_binding_until_a_scale():
    steps = [Propagate(app("a", cls="high")), DeleteClass("high"), CreateClass(KarmadaClass("high", 5)), Wait(10)]
    assert run(*steps).bindings["a"].priority == 1000
    b = run(*steps, Scale("a", 2)).bindings["a"]
    assert (b.priority, b.clusters) == (5, {(("m1", 2),)})


def test_a_scale_while_the_class_is_gone_changes_nothing_until_the_class_returns():
    steps = [Propagate(app("a", cls="high")), DeleteClass("high"), Scale("a", 2)]
    b = run(*steps).bindings["a"]
    assert (b.priority, b.clusters) == (1000, {(("m1", 1),)})
    # The detector keeps retrying the failed reconcile: a new class is picked up with the new replicas.
    b = run(*steps, CreateClass(KarmadaClass("high", 3))).bindings["a"]
    assert (b.priority, b.clusters) == (3, {(("m1", 2),)})


def test_a_class_created_reaches_only_apps_still_retrying():
    steps = [Propagate(app("a", cls="high")), Propagate(app("b", cls="other")), DeleteClass("high"),
             CreateClass(KarmadaClass("high", 1))]
    e = run(*steps)
    assert e.bindings["a"].priority == 1000 and e.bindings["b"].state == ABSENT


def test_stopped_scheduler_leaves_bindings_waiting_and_start_takes_them_by_priority():
    classes = (KarmadaClass("lo", 1), KarmadaClass("hi", 9))
    steps = [SetScheduler(False), Propagate(app("a", cls="lo")), Propagate(app("b")), Propagate(app("c", cls="hi"))]
    assert {n: b.state for n, b in run(*steps, classes=classes).bindings.items()} == dict.fromkeys("abc", WAITING)
    e = run(*steps, SetScheduler(True), classes=classes, order=("a", "b", "c"))
    assert e.orders == {("c", "a", "b")}  # 9, 1, then the classless one read as 0


def test_gate_off_start_takes_bindings_in_any_order():
    classes = (KarmadaClass("lo", 1), KarmadaClass("hi", 9))
    steps = [SetScheduler(False), Propagate(app("c", cls="hi")), Propagate(app("a", cls="lo")), Propagate(app("b")),
             SetScheduler(True)]
    assert len(run(*steps, classes=classes, gate=False, order=("a", "b", "c")).orders) == 6


def test_a_running_scheduler_takes_bindings_as_they_come_whatever_their_priority():
    classes = (KarmadaClass("lo", 1), KarmadaClass("hi", 9))
    e = run(Propagate(app("a", cls="lo")), Propagate(app("b", cls="hi")), classes=classes, order=("b", "a"))
    assert e.orders == {("a", "b")}


def test_room_for_one_goes_to_the_highest_priority_and_the_rest_stay_unschedulable():
    classes = (KarmadaClass("lo", 1), KarmadaClass("hi", 9))
    steps = [SetScheduler(False), Propagate(app("a", 2, cls="lo")), Propagate(app("b", 2, cls="hi")),
             SetScheduler(True)]
    e = run(*steps, members=(Member("m1", 2000),), classes=classes)
    assert (e.bindings["b"].state, e.bindings["a"].state) == (SCHEDULED, UNSCHEDULABLE)
    with pytest.raises(Undetermined):  # gate off: whichever the list gives first; the model will not guess
        run(*steps, members=(Member("m1", 2000),), classes=classes, gate=False)


def test_no_preemption_the_lower_binding_keeps_its_clusters():
    classes = (KarmadaClass("lo", 1), KarmadaClass("hi", 9))
    e = run(Propagate(app("a", 2, cls="lo")), Propagate(app("b", 2, cls="hi")), Wait(60),
            members=(Member("m1", 2000),), classes=classes)
    assert e.bindings["a"].clusters == {(("m1", 2),)}
    assert e.bindings["b"].state == UNSCHEDULABLE and "never preempted" in e.bindings["b"].reason


def test_freed_room_does_not_requeue_with_the_gate_on_but_the_legacy_queue_retries():
    steps = [Propagate(app("a", 2)), Propagate(app("b", 2)), Delete("a")]
    members = (Member("m1", 2000),)
    on = run(*steps, members=members)
    assert on.bindings["a"].state == ABSENT and on.bindings["b"].state == UNSCHEDULABLE
    off = run(*steps, members=members, gate=False)
    assert off.bindings["b"].state == SCHEDULED


def test_a_deleted_app_frees_its_room_for_later_bindings():
    members = (Member("m1", 2000),)
    e = run(Propagate(app("a", 2)), Delete("a"), Propagate(app("b", 2)), members=members)
    assert e.bindings["b"].clusters == {(("m1", 2),)} and e.bindings["a"].state == ABSENT


def test_bindings_appearing_in_one_step_come_in_any_order():
    steps = [Propagate(app("a", cls="late")), Propagate(app("b", cls="late")), CreateClass(KarmadaClass("late", 1))]
    assert run(*steps, order=("a", "b")).orders == {("a", "b"), ("b", "a")}


def test_an_outcome_that_hangs_on_such_an_order_is_refused():
    steps = [Propagate(app("a", 2, cls="late")), Propagate(app("b", 2, cls="late")),
             CreateClass(KarmadaClass("late", 1))]
    with pytest.raises(Undetermined, match="scheduled or unschedulable"):
        run(*steps, members=(Member("m1", 2000),))


def test_every_app_propagated_so_far_is_predicted_and_only_those():
    e = run(Propagate(app("a")), Delete("a"), Propagate(app("b")))
    assert set(e.bindings) == {"a", "b"}


def test_orders_leave_out_apps_not_scheduled():
    e = run(Propagate(app("a", 2)), Propagate(app("b", 2)), members=(Member("m1", 2000),), order=("b", "a"))
    assert e.orders == {("a",)}
