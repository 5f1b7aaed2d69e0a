"""A scheduler restart (reference.restart): what survives it and what is tried again."""

from __future__ import annotations

from datetime import timedelta

from reference import scheduler as sched
from reference.restart import restart

from tests.builders import T0, node, pc, pod, state


def world(*pods):
    return sched.start(state(classes=[pc("low", 1), pc("high", 100)], nodes=[node("n1")], pods=list(pods)),
                       "upstream", T0)


def test_a_restart_forgets_the_queue_and_tries_every_pending_pod_at_once():
    w = sched.create_pod(world(pod("resident", 100, cls="high", on="n1")), pod("waiter", 1, cls="low"))
    assert "default/waiter" in w.parked_keys()
    after = restart(w)
    assert after.predictions[-1].pod == "default/waiter" and len(after.predictions) == len(w.predictions) + 1
    assert dict(after.failures) == {"default/waiter": 1}, "its backoff count starts again"


def test_a_restart_keeps_nominations_and_terminating_victims():
    w = sched.create_pod(world(pod("victim", 1, cls="low", on="n1", termination_grace_seconds=30)),
                         pod("preemptor", 100, cls="high"))
    assert w.state.pod_keyed("default/preemptor").nominated_node_name == "n1"
    after = restart(w)
    assert after.state.pod_keyed("default/preemptor").nominated_node_name == "n1"
    assert after.state.pod_keyed("default/victim").terminating
    assert not after.predictions[-1].victims, "no second preemption while its victim terminates"
    done = sched.advance(after, T0 + timedelta(seconds=31), flush=False)
    assert done.state.pod_keyed("default/preemptor").node_name == "n1"


def test_a_preemption_cut_short_leaves_its_undone_victims_marked_and_running_and_they_go_later():
    from reference.restart import partly_written

    w = sched.create_pod(world(pod("victim", 1, cls="low", on="n1", termination_grace_seconds=30)),
                         pod("preemptor", 100, cls="high"))
    cut = partly_written(w, "default/preemptor", frozenset({"default/victim"}), nomination_lost=True)
    assert not cut.state.pod_keyed("default/victim").terminating and "default/victim" in cut.preempted
    assert cut.state.pod_keyed("default/preemptor").nominated_node_name == ""
    after = restart(cut)
    assert after.state.pod_keyed("default/victim").terminating, "the restarted scheduler preempts it again"
    assert after.state.pod_keyed("default/preemptor").nominated_node_name == "n1"


def test_a_failover_lets_the_lease_run_out_with_nobody_scheduling_then_tries_every_pending_pod():
    from reference.restart import failover

    w = sched.create_pod(world(pod("victim", 1, cls="low", on="n1", termination_grace_seconds=2)),
                         pod("preemptor", 100, cls="high"))
    after = failover(w, 4)
    assert after.now == w.now + timedelta(seconds=4)
    assert after.state.pod_keyed("default/victim") is None, "its grace ended while nobody led"
    assert after.state.pod_keyed("default/preemptor").node_name == "n1", "the new leader binds it at once"


def test_a_taken_lease_is_a_failover_whose_leader_stops_on_its_own():
    from reference.restart import failover

    w = sched.create_pod(world(pod("victim", 1, cls="low", on="n1", termination_grace_seconds=2)),
                         pod("preemptor", 100, cls="high"))
    killed, taken = failover(w, 4), failover(w, 4, taken=True)
    assert sched.view(taken) == sched.view(killed) and taken.now == killed.now
    assert "loses its lease to another holder" in " ".join(taken.log)


def test_a_disconnect_hides_a_victims_removal_until_the_watches_resume_then_binds_the_preemptor():
    from reference.restart import disconnect

    w = sched.create_pod(world(pod("victim", 1, cls="low", on="n1", termination_grace_seconds=8)),
                         pod("preemptor", 100, cls="high"))
    assert w.state.pod_keyed("default/preemptor").nominated_node_name == "n1"
    short = disconnect(w, 5)
    assert short.state.pod_keyed("default/victim").terminating, "still within its grace"
    assert short.state.pod_keyed("default/preemptor").node_name == ""
    after = disconnect(w, 12)
    assert after.state.pod_keyed("default/victim") is None
    assert after.state.pod_keyed("default/preemptor").node_name == "n1", "its removal wakes the preemptor"
    assert after.now == w.now + timedelta(seconds=12)


def test_a_disconnect_runs_the_flush_that_came_due_meanwhile():
    from reference.restart import disconnect

    w = sched.create_pod(world(pod("resident", 100, cls="high", on="n1")), pod("waiter", 1, cls="low"))
    assert "default/waiter" in w.parked_keys()
    tried = len(w.predictions)
    after = disconnect(w, w.flush_after.total_seconds() + 1)
    assert len(after.predictions) == tried + 1 and after.predictions[-1].pod == "default/waiter"
