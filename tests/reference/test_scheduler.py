"""semantics.md section 3 (effects) and 2 (retries), over time: the model's scheduling loop."""

from dataclasses import replace
from datetime import timedelta

from reference import scheduler as sched
from reference.preemption import PLUGINS

from tests.builders import T0, node, pc, pod, state


def test_victims_get_disruption_target_and_terminate_for_their_grace_period():
    s = state([pc("high", 100)], [node("n1")], [pod("v", 1, on="n1", termination_grace_seconds=30)])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("p", cls="high"))
    v = w.state.pod_keyed("default/v")
    assert v.disruption_target_by_preemption and v.deletion_timestamp == T0 + timedelta(seconds=30)
    assert w.state.pod_keyed("default/p").nominated_node_name == "n1"
    assert not w.state.pod_keyed("default/p").node_name, "bound only once the victim is gone"
    w = sched.advance(w, T0 + timedelta(seconds=29))
    assert w.state.pod_keyed("default/v") is not None
    w = sched.advance(w, T0 + timedelta(seconds=30))
    assert w.state.pod_keyed("default/v") is None and w.state.pod_keyed("default/p").node_name == "n1"


def test_the_preemptor_may_land_on_another_node_that_frees_first():
    s = state([pc("high", 100), pc("top", 1000)], [node("n1"), node("n2")],
              [pod("slow", 1, on="n1", termination_grace_seconds=60), pod("blocker", 1000, cls="top", on="n2")])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("p", cls="high"))
    assert w.state.pod_keyed("default/p").nominated_node_name == "n1"
    w = sched.delete_pod(replace_now(w, T0 + timedelta(seconds=5)), "default/blocker")
    w = sched.advance(w, T0 + timedelta(seconds=40))  # blocker's 30 s grace ends first
    assert w.state.pod_keyed("default/p").node_name == "n2"


def test_a_higher_priority_pod_arriving_during_the_grace_period_takes_the_nominated_node():
    s = state([pc("mid", 500), pc("top", 1000)], [node("n1")], [pod("v", 1, on="n1", termination_grace_seconds=20)])
    # 1.34: the later preemption clears first's nomination (from 1.35, with every victim already
    # terminating, first keeps it: reference.release.TERMINATING_VICTIMS_SKIPPED).
    w = sched.create_pod(sched.start(s, "upstream", T0, "1.34"), pod("first", cls="mid"))
    w = sched.create_pod(replace_now(w, T0 + timedelta(seconds=5)), pod("late", cls="top"))
    assert w.state.pod_keyed("default/first").nominated_node_name == ""
    w = sched.advance(w, T0 + timedelta(seconds=25))
    assert w.state.pod_keyed("default/late").node_name == "n1"
    assert not w.state.pod_keyed("default/first").node_name


def test_a_parked_pod_is_retried_by_the_flush_not_by_a_toleration_ending():
    s = state([pc("high", 9000), pc("low", 8000, mpp=10000, ts=10)], [node("n1")],
              [pod("young", 8000, cls="low", on="n1", age=0)])
    w = sched.create_pod(sched.start(s, "plugins", T0), pod("p", cls="high"))
    assert not w.state.pod_keyed("default/p").nominated_node_name
    w = sched.advance(w, T0 + timedelta(seconds=60))
    assert not w.state.pod_keyed("default/young").terminating, "the expiry at 10 s woke nobody"
    w = sched.advance(w, T0 + timedelta(minutes=6))
    assert "default/young" in w.preempted


def test_ties_branch_into_one_world_per_choice():
    s = state([pc("high", 100)], [node("n1"), node("n2")], [pod("a", 1, on="n1", age=5), pod("b", 1, on="n2", age=5)])
    worlds = sched.branches(sched.start(s, "upstream", T0), lambda w: sched.create_pod(w, pod("p", cls="high")))
    assert {w.state.pod_keyed("default/p").nominated_node_name for w in worlds} == {"n1", "n2"}


def test_only_the_upstream_plugin_preempts_asynchronously():
    assert PLUGINS["upstream"].asynchronous and not PLUGINS["plugins"].asynchronous


def replace_now(w, when):
    return replace(w, now=when)


def _two_waiting_for_one_slot():
    """Two equal-priority pods parked behind one full slot, the older one first; then the slot frees."""
    s = state([pc("mid", 100, never=True)], [node("n1")], [pod("blocker", 1000, on="n1")])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("older", 100, cls="mid", never=True))
    w = sched.create_pod(replace_now(w, T0 + timedelta(seconds=3)), pod("newer", 100, cls="mid", never=True))
    w = sched.delete_pod(replace_now(w, T0 + timedelta(seconds=5)), "default/blocker")
    return sched.advance(w, None)


def test_pods_woken_together_are_tried_oldest_parked_first_and_the_model_says_the_order_decided():
    w = _two_waiting_for_one_slot()
    assert w.state.pod_keyed("default/older").node_name == "n1"
    assert not w.state.pod_keyed("default/newer").node_name
    assert len(w.order_decided) == 1 and "default/newer, default/older" in w.order_decided[0]


def test_woken_together_but_not_competing_is_not_an_order_that_decides():
    s = state([pc("mid", 100)], [node("n1", slots=2)], [pod("blocker", 1000, on="n1", slots=2)])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("a", 1000, never=True))
    w = sched.create_pod(replace_now(w, T0 + timedelta(seconds=3)), pod("b", 1000, never=True))
    w = sched.advance(sched.delete_pod(replace_now(w, T0 + timedelta(seconds=5)), "default/blocker"), None)
    assert w.state.pod_keyed("default/a").node_name == w.state.pod_keyed("default/b").node_name == "n1"
    assert w.order_decided == ()


def test_parked_pods_woken_together_pop_by_priority_but_their_backoff_may_decide_on_a_shared_cluster():
    """On a quiet cluster the higher priority pops first. On a shared one, other scenarios'
    events retry parked pods any number of times, and a pod still backing off waits in backoffQ
    behind the others (the explorer's x3-0464 on upstream 1.35: a preemptor of lower priority
    was bound while a higher-priority pod retried nine times by then was still backing off)."""
    s = state([pc("low", 10, never=True), pc("high", 20, never=True)], [node("n1")], [pod("blocker", 1000, on="n1")])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("low", 10, cls="low", never=True))
    w = sched.create_pod(replace_now(w, T0 + timedelta(seconds=3)), pod("high", 20, cls="high", never=True))
    w = sched.advance(sched.delete_pod(replace_now(w, T0 + timedelta(seconds=5)), "default/blocker"), None)
    assert w.state.pod_keyed("default/high").node_name == "n1"
    assert len(w.order_decided) == 1 and "how long each still backed off" in w.order_decided[0]


def test_woken_together_where_any_order_ends_the_same_decides_nothing():
    s = state([pc("low", 10, never=True), pc("high", 20, never=True)], [node("n1", slots=2)],
              [pod("blocker", 1000, on="n1", slots=2)])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("low", 10, cls="low", never=True))
    w = sched.create_pod(replace_now(w, T0 + timedelta(seconds=3)), pod("high", 20, cls="high", never=True))
    w = sched.advance(sched.delete_pod(replace_now(w, T0 + timedelta(seconds=5)), "default/blocker"), None)
    assert {w.state.pod_keyed(k).node_name for k in ("default/low", "default/high")} == {"n1"}
    assert w.order_decided == ()
