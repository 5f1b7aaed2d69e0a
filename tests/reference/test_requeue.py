"""When a parked pod is tried again (reference.requeue, reference.scheduler.wake): one test per rule,
each naming the upstream code it comes from (k8s.io/kubernetes v1.34.4-v1.37.2)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from reference import requeue
from reference import scheduler as sched
from reference.objects import LabelSelector, PodAffinityTerm, Taint

from tests.builders import T0, node, pc, pod, state

NRF, IPA = requeue.NODE_RESOURCES_FIT, requeue.INTER_POD_AFFINITY


def anti(**labels) -> PodAffinityTerm:
    return PodAffinityTerm(LabelSelector(tuple(sorted(labels.items()))), "kubernetes.io/hostname")


def parked(world, key: str) -> bool:
    return key in world.parked_keys()


# -- the hints, one event at a time ----------------------------------------------------------


def test_noderesourcesfit_queues_on_a_bound_pod_going_away():
    """noderesources/fit.go isSchedulableAfterPodEvent (1.37 isSchedulableAfterAssignedPodDelete):
    Queue when the deleted pod had spec.nodeName."""
    gone = pod("v", 1, on="n1")
    assert requeue.woken_by(requeue.assigned_pod_gone(gone), pod("p", 5), frozenset({NRF}), "1.35")


def test_noderesourcesfit_queues_when_a_nominated_pending_pod_goes_but_only_for_lower_or_equal_priority():
    """eventhandlers.go deletePodFromSchedulingQueue: a deleted unbound pod with a nomination moves
    parked pods with the pre-check getLEPriorityPreCheck; NodeResourcesFit then says Queue (it held
    room through its nominatedNodeName)."""
    nominated = pod("n", 50, nominated_node_name="n1")
    event = requeue.nominated_pod_deleted(nominated)
    assert requeue.woken_by(event, pod("lower", 10), frozenset({NRF}), "1.35")
    assert requeue.woken_by(event, pod("equal", 50), frozenset({NRF}), "1.35")
    assert not requeue.woken_by(event, pod("higher", 60), frozenset({NRF}), "1.35")


def test_a_pending_pod_without_a_nomination_deleted_wakes_nobody():
    """eventhandlers.go deletePodFromSchedulingQueue: without nominatedNodeName no MoveAll happens."""
    w = sched.start(state([], [node("n1")], [pod("busy", 100, on="n1"), pod("a", 5), pod("b", 5)]), "upstream", T0)
    w = sched.run_queue(w)
    assert parked(w, "default/a") and parked(w, "default/b")
    w = sched.delete_pod(w, "default/b")
    assert parked(w, "default/a"), "nothing was moved: a stays parked"


def test_a_nomination_moved_or_cleared_is_an_event_about_the_old_pod():
    """eventhandlers.go updatePodInSchedulingQueue: hasNominatedNodeNameChanged moves parked pods of
    at most that pod's priority, with the old pod as the deleted one."""
    before = pod("m", 40, nominated_node_name="n1")
    event = requeue.nomination_changed(before, "")
    assert event.at_most == 40 and "cleared" in event.what
    assert requeue.woken_by(event, pod("m", 40), frozenset({NRF}), "1.35"), "the pod itself, parked, included"


@pytest.mark.parametrize("plugin", requeue.NODE_ONLY)
def test_node_only_plugins_register_no_pod_event(plugin):
    """tainttoleration, nodeaffinity, nodeunschedulable EventsToRegister: Node events (and the pod's
    own toleration change) only; a pod they alone rejected is not moved by any pod event."""
    for event in (requeue.assigned_pod_gone(pod("v", 1, on="n1")),
                  requeue.nominated_pod_deleted(pod("n", 99, nominated_node_name="n1")),
                  requeue.pod_bound(pod("b", 1, on="n1"))):
        assert not requeue.woken_by(event, pod("p", 5), frozenset({plugin}), "1.35")


def test_interpodaffinity_queues_when_a_deleted_pod_matched_its_anti_affinity():
    """interpodaffinity/plugin.go isSchedulableAfterPodChange, deletion: Queue when the deleted pod
    matches all (1.37: any) of the parked pod's anti-affinity terms."""
    p = pod("p", 5, pod_anti_affinity=(anti(app="db"),))
    gone = pod("db", 1, on="n1", labels={"app": "db"})
    assert requeue.woken_by(requeue.assigned_pod_gone(gone), p, frozenset({IPA}), "1.35")
    other = pod("web", 1, on="n1", labels={"app": "web"})
    assert not requeue.woken_by(requeue.assigned_pod_gone(other), p, frozenset({IPA}), "1.35")


def test_interpodaffinity_before_136_ignores_the_deleted_pods_own_anti_affinity():
    """1.34/1.35 isSchedulableAfterPodChange looks only at the parked pod's terms (none here: no
    term matches), so the pod whose anti-affinity repelled it going away does not move it; from 1.36
    (kubernetes#135325) the deleted pod's own terms count too."""
    p = pod("p", 5, labels={"app": "x"})
    repeller = pod("r", 1, on="n1", pod_anti_affinity=(anti(app="x"),))
    event = requeue.assigned_pod_gone(repeller)
    assert not requeue.woken_by(event, p, frozenset({IPA}), "1.34")
    assert not requeue.woken_by(event, p, frozenset({IPA}), "1.35")
    assert requeue.woken_by(event, p, frozenset({IPA}), "1.36")
    assert requeue.woken_by(event, p, frozenset({IPA}), "1.37")


def test_interpodaffinity_counts_nominated_pods_from_136():
    """Before 1.36 an event about a pod with an empty spec.nodeName is skipped; from 1.36
    (kubernetes#135392) a nominated pod counts as placed."""
    p = pod("p", 5, pod_anti_affinity=(anti(app="db"),))
    nominated = pod("db", 50, labels={"app": "db"}, nominated_node_name="n1")
    event = requeue.nominated_pod_deleted(nominated)
    assert not requeue.woken_by(event, p, frozenset({IPA}), "1.35")
    assert requeue.woken_by(event, p, frozenset({IPA}), "1.36")


def test_interpodaffinity_matches_any_anti_affinity_term_from_137():
    """1.37 (kubernetes#139161) podMatchesAnyAffinityTerms: one matching term is enough."""
    p = pod("p", 5, pod_anti_affinity=(anti(app="db"), anti(tier="gold")))
    gone = pod("db", 1, on="n1", labels={"app": "db"})
    assert not requeue.woken_by(requeue.assigned_pod_gone(gone), p, frozenset({IPA}), "1.36")
    assert requeue.woken_by(requeue.assigned_pod_gone(gone), p, frozenset({IPA}), "1.37")


def test_interpodaffinity_queues_when_a_bound_pod_matches_its_affinity():
    """isSchedulableAfterPodChange, addition: Queue when the added assigned pod matches all of the
    parked pod's affinity terms."""
    p = pod("p", 5, pod_affinity=(anti(app="db"),))
    assert requeue.woken_by(requeue.pod_bound(pod("db", 1, on="n1", labels={"app": "db"})), p, frozenset({IPA}), "1.35")
    assert not requeue.woken_by(requeue.pod_bound(pod("x", 1, on="n1")), p, frozenset({IPA}), "1.35")


# -- the scheduling loop: what the events do to a world --------------------------------------------


def test_a_taint_rejected_pod_is_not_retried_when_an_assigned_pod_goes():
    """A pod rejected by TaintToleration alone stays parked through pod deletions (until the flush)."""
    s = state([], [node("n1", slots=5, taints=(Taint("dedicated", "NoSchedule", "x"),))],
              [pod("busy", 1, on="n1", termination_grace_seconds=0)])
    w = sched.run_queue(sched.start(replace(s, pods=s.pods + (pod("p", 5),)), "upstream", T0))
    assert parked(w, "default/p") and dict(w.rejectors)["default/p"] == frozenset({"TaintToleration"})
    w = sched.delete_pod(w, "default/busy")
    w = sched.advance(w, T0 + timedelta(seconds=1), flush=False)
    assert parked(w, "default/p")


def test_deleting_a_nominated_pod_gives_its_room_to_a_lower_parked_pod_at_once():
    """The nominated pod's reservation kept the lower pod out; deleting it moves the lower pod back
    (deletePodFromSchedulingQueue with the LE-priority pre-check), and it fits beside the victim
    still terminating. Without the rule it would wait for the victim to be gone."""
    s = state([pc("low", 1), pc("mid", 10), pc("top", 100)], [node("n1", slots=2)],
              [pod("v", 1, cls="low", on="n1", termination_grace_seconds=30)])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("big", cls="top", slots=2))
    assert w.state.pod_keyed("default/big").nominated_node_name == "n1"
    w = sched.create_pod(replace(w, now=T0 + timedelta(seconds=2)), pod("small", cls="mid"))
    assert parked(w, "default/small"), "big's nomination holds n1's free slot"
    w = sched.delete_pod(replace(w, now=T0 + timedelta(seconds=4)), "default/big")
    assert w.state.pod_keyed("default/small").node_name == "n1"
    assert w.state.pod_keyed("default/v").terminating, "while the victim still terminates"


@pytest.mark.parametrize("build,release", [("upstream", "1.34"), ("plugins", "1.35")])
def test_a_cleared_nomination_retries_the_pod_itself_at_once(build, release):
    """A higher preemptor taking the node of a lower nominated pod clears its nomination
    (clearNominatedNodeName); that change moves the lower pod itself back (updatePodInSchedulingQueue),
    and it preempts on the other node at once, not after the first victim's grace period."""
    s = state([pc("low", 1), pc("low5", 5), pc("mid", 50), pc("top", 100)], [node("n1"), node("n2")],
              [pod("v1", 1, cls="low", on="n1", termination_grace_seconds=30),
               pod("v2", 5, cls="low5", on="n2", termination_grace_seconds=30)])
    w = sched.create_pod(sched.start(s, build, T0, release), pod("m", cls="mid"))
    assert w.state.pod_keyed("default/m").nominated_node_name == "n1"
    w = sched.create_pod(replace(w, now=T0 + timedelta(seconds=2)), pod("t", cls="top"))
    assert w.state.pod_keyed("default/t").nominated_node_name == "n1"
    assert w.state.pod_keyed("default/m").nominated_node_name == "n2"
    assert "default/v2" in w.preempted and w.now == T0 + timedelta(seconds=2)


def test_pods_woken_together_pop_backoff_expired_ones_first():
    """SchedulerPopFromBackoffQ (on in 1.34-1.37): a woken pod still in its backoff waits in
    backoffQ, popped only when activeQ is empty; a lower-priority pod past its backoff goes first
    and takes the room, and the higher one then preempts it."""
    s = state([pc("low", 1), pc("high", 10), pc("busy", 100)], [node("n1", slots=1)],
              [pod("busy", 100, cls="busy", on="n1", termination_grace_seconds=0)])
    w = sched.create_pod(sched.start(s, "upstream", T0), pod("low", cls="low"))  # parked at T0: backoff 1 s
    w = sched.create_pod(replace(w, now=T0 + timedelta(seconds=20)), pod("high", cls="high"))  # backoff to T0+21 s
    assert parked(w, "default/low") and parked(w, "default/high")
    assert sched.pop_order(replace(w, now=T0 + timedelta(seconds=20.5)), ("default/high", "default/low")) == \
        ["default/low", "default/high"]
    assert sched.pop_order(replace(w, now=T0 + timedelta(seconds=22)), ("default/high", "default/low")) == \
        ["default/high", "default/low"]
    w = sched.delete_pod(replace(w, now=T0 + timedelta(seconds=20.5)), "default/busy")
    w = sched.advance(w, T0 + timedelta(seconds=20.5), flush=False)
    assert "default/low" in w.preempted and w.state.pod_keyed("default/high").nominated_node_name == "n1"


def test_a_parked_pod_that_would_fit_but_waits_for_an_event_is_named():
    """waiting_for_an_event: what placement.why_alone uses to keep such a scenario off a shared
    cluster, where another scenario's events would retry the pod sooner."""
    s = state([], [node("n1", slots=5, taints=(Taint("dedicated", "NoSchedule", "x"),))], [])
    w = sched.run_queue(sched.start(replace(s, pods=(pod("p", 5, tolerations=()),)), "upstream", T0))
    assert sched.waiting_for_an_event(w) == []
    untainted = replace(w, state=replace(w.state, nodes=(node("n1", slots=5),)))
    assert sched.waiting_for_an_event(untainted) == ["default/p"]
