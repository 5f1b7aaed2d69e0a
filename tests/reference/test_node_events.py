"""Node events (reference.nodes, the node hints in reference.requeue): one test per rule, each
naming the upstream code it comes from (k8s.io/kubernetes v1.34.4, v1.35.8, v1.37.2)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from reference import nodes, requeue
from reference import scheduler as sched
from reference.objects import LabelSelector, PodAffinityTerm, Taint, Toleration

from tests.builders import T0, node, pc, pod, state

NRF, IPA = requeue.NODE_RESOURCES_FIT, requeue.INTER_POD_AFFINITY
NU, TT, NA = requeue.NODE_UNSCHEDULABLE, requeue.TAINT_TOLERATION, requeue.NODE_AFFINITY
TAINT = Taint("dedicated", "NoSchedule", "x")


def woken(event, parked, plugin: str, release: str = "1.35") -> bool:
    return bool(requeue.woken_by(event, parked, frozenset({plugin}), release))


def updated(action: str, old, new):
    return requeue.node_updated(action, old, new)


# -- what one update of a node is, for the queue (framework/events.go NodeSchedulingPropertiesChange)


def test_a_cordon_and_an_uncordon_are_taint_events_and_each_change_its_own():
    base = node("n1")
    assert nodes.node_changes(base, replace(base, unschedulable=True)) == (requeue.UPDATE_NODE_TAINT,)
    assert nodes.node_changes(base, node("n1", 2)) == (requeue.UPDATE_NODE_ALLOCATABLE,)
    assert nodes.node_changes(base, replace(base, labels=(("disk", "ssd"),))) == (requeue.UPDATE_NODE_LABEL,)
    assert nodes.node_changes(base, replace(base, taints=(TAINT,))) == (requeue.UPDATE_NODE_TAINT,)
    assert nodes.node_changes(base, base) == ()


# -- NodeResourcesFit (noderesources/fit.go isSchedulableAfterNodeChange) ------------------------


def test_fit_queues_a_pod_that_would_fit_an_added_node_were_it_empty():
    assert woken(requeue.node_added(node("n2", 1)), pod("p", 5), NRF)
    assert not woken(requeue.node_added(node("n2", 1)), pod("p", 5, slots=2), NRF)


def test_fit_queues_on_an_update_only_when_a_requested_resource_grew():
    old = node("n1", 1)
    assert woken(updated(requeue.UPDATE_NODE_ALLOCATABLE, old, node("n1", 2)), pod("p", 5), NRF)
    # It fits an empty n1 either way, but nothing it asks for grew: QueueSkip.
    assert not woken(updated(requeue.UPDATE_NODE_ALLOCATABLE, node("n1", 2), node("n1", 1)), pod("p", 5), NRF)
    assert not woken(updated(requeue.UPDATE_NODE_LABEL, old, replace(old, labels=(("a", "b"),))), pod("p", 5), NRF)


# -- the pre-1.37 UpdateNodeTaint registration (scheduler.go buildQueueingHintMap, kubernetes#109437)


@pytest.mark.parametrize("plugin", [NRF, NA, IPA])
def test_before_1_37_any_taint_change_queues_a_pod_fit_affinity_or_pod_affinity_rejected(plugin):
    event = updated(requeue.UPDATE_NODE_TAINT, node("n1"), replace(node("n1"), taints=(TAINT,)))
    assert woken(event, pod("p", 5), plugin, "1.35")
    assert woken(event, pod("p", 5), plugin, "1.36")
    assert not woken(event, pod("p", 5), plugin, "1.37")


# -- TaintToleration, NodeAffinity, NodeUnschedulable -------------------------------------------


def test_taint_toleration_queues_when_the_pod_tolerates_the_node_now_and_did_not_before():
    tainted, clean = replace(node("n1"), taints=(TAINT,)), node("n1")
    assert woken(updated(requeue.UPDATE_NODE_TAINT, tainted, clean), pod("p", 5), TT, "1.37")
    assert not woken(updated(requeue.UPDATE_NODE_TAINT, clean, tainted), pod("p", 5), TT, "1.37")
    # An added node counts as not tolerated before.
    assert woken(requeue.node_added(clean), pod("p", 5), TT)
    assert not woken(requeue.node_added(tainted), pod("p", 5), TT)
    tolerant = pod("p", 5, tolerations=(Toleration("dedicated", "Exists"),))
    assert not woken(updated(requeue.UPDATE_NODE_TAINT, tainted, clean), tolerant, TT, "1.37")
    # PreferNoSchedule turns nobody away: taking it off changes nothing.
    soft = replace(node("n1"), taints=(Taint("soft", "PreferNoSchedule"),))
    assert not woken(updated(requeue.UPDATE_NODE_TAINT, soft, clean), pod("p", 5), TT, "1.37")


def test_node_affinity_queues_when_the_node_matches_now_and_did_not_before():
    picky = pod("p", 5, node_selector=(("disk", "ssd"),))
    bare, ssd = node("n1"), replace(node("n1"), labels=(("disk", "ssd"),))
    assert woken(updated(requeue.UPDATE_NODE_LABEL, bare, ssd), picky, NA)
    assert not woken(updated(requeue.UPDATE_NODE_LABEL, ssd, replace(ssd, labels=(("disk", "ssd"), ("x", "y")))),
                     picky, NA)
    assert woken(requeue.node_added(ssd), picky, NA) and not woken(requeue.node_added(bare), picky, NA)


def test_node_unschedulable_queues_on_an_uncordon_or_a_schedulable_node_added_only():
    cordoned, free = replace(node("n1"), unschedulable=True), node("n1")
    assert woken(updated(requeue.UPDATE_NODE_TAINT, cordoned, free), pod("p", 5), NU, "1.37")
    assert not woken(updated(requeue.UPDATE_NODE_TAINT, free, cordoned), pod("p", 5), NU, "1.37")
    assert woken(requeue.node_added(free), pod("p", 5), NU)
    assert not woken(requeue.node_added(cordoned), pod("p", 5), NU)


# -- InterPodAffinity (interpodaffinity/plugin.go isSchedulableAfterNodeChange) ---------------------


def zone_term(**labels) -> PodAffinityTerm:
    return PodAffinityTerm(LabelSelector(tuple(sorted(labels.items()))), "topology.kubernetes.io/zone")


def test_inter_pod_affinity_node_hint_looks_at_the_pods_own_terms_only():
    a, b = replace(node("n1"), labels=(("topology.kubernetes.io/zone", "a"),)), replace(
        node("n1"), labels=(("topology.kubernetes.io/zone", "b"),))
    event = updated(requeue.UPDATE_NODE_LABEL, a, b)
    assert not woken(event, pod("p", 5), IPA), "no terms of its own: QueueSkip"
    assert woken(event, pod("p", 5, pod_anti_affinity=(zone_term(app="x"),)), IPA)
    assert woken(event, pod("p", 5, pod_affinity=(zone_term(app="x"),)), IPA)
    # Anti-affinity: any node added; affinity: only one with the term's topology key.
    assert woken(requeue.node_added(node("n2")), pod("p", 5, pod_anti_affinity=(zone_term(app="x"),)), IPA)
    assert not woken(requeue.node_added(node("n2")), pod("p", 5, pod_affinity=(zone_term(app="x"),)), IPA)


def test_no_modelled_plugin_registers_a_node_deletion():
    """Only PodTopologySpread registers Node Delete, which the kit's scenarios do not use."""
    event = requeue.node_deleted(node("n2"))
    for plugin in requeue.HINTS:
        assert not woken(event, pod("p", 5), plugin)


# -- the world: node steps over time (reference.nodes) ------------------------------------------


def world(*pods, nodes_=(node("n1"),), release="1.35"):
    return sched.start(state(classes=[pc("low", 1), pc("high", 100)], nodes=list(nodes_), pods=list(pods)),
                       "upstream", T0, release)


def test_an_added_node_takes_the_pod_no_node_had_room_for():
    w = sched.create_pod(world(pod("resident", 100, cls="high", on="n1")), pod("newcomer", 1, cls="low"))
    assert "default/newcomer" in w.parked_keys()
    w = nodes.add_node(w, node("n2"))
    assert w.state.pod_keyed("default/newcomer").node_name == "n2"


def test_a_shrunk_node_keeps_its_pods_and_a_preemptor_must_free_the_overcommit():
    w = world(pod("a", 1, cls="low", on="n1", age=30), pod("b", 1, cls="low", on="n1", age=20), nodes_=(node("n1", 2),))
    w = nodes.update_node(w, node("n1", 1))
    assert {p.name for p in w.state.pods_on("n1")} == {"a", "b"}
    w = sched.create_pod(w, pod("big", 100, cls="high"))
    # Two pods on room for one: freeing one slot for big takes both.
    assert set(w.predictions[-1].victims["n1"]) == {"default/a", "default/b"}


def test_a_node_with_pods_cannot_be_deleted():
    w = world(pod("a", 1, on="n1"), nodes_=(node("n1"), node("n2")))
    with pytest.raises(nodes.NodeNotEmpty):
        nodes.delete_node(w, "n1")
    assert nodes.delete_node(w, "n2").state.node_named("n2") is None


def test_a_deleted_nodes_pods_stay_until_deleted_and_count_nowhere():
    """cache.go RemoveNode keeps a node that still has pods as an entry without a node, which the
    snapshot leaves out: its pods hold no room anywhere and are nobody's victims until deleted."""
    w = world(pod("a", 1, cls="low", on="n1"), pod("b", 1, cls="low", on="n2"), nodes_=(node("n1"), node("n2")))
    w = nodes.delete_node(w, "n1", pods_stay=True)
    assert w.state.node_named("n1") is None and w.state.pod_keyed("default/a").node_name == "n1"
    w = sched.create_pod(w, pod("big", 100, cls="high"))
    assert w.predictions[-1].victims == {"n2": ("default/b",)}


def test_a_pod_nominated_to_a_deleted_node_may_preempt_elsewhere_while_its_victim_terminates():
    """The filters' statuses count a node absent from the snapshot UnschedulableAndUnresolvable
    (NodeToStatus.Get's absentNodesStatus), so PodEligibleToPreemptOthers lets the pod preempt again
    (default_preemption.go 1.34:338, 1.35:327, 1.37:461) whatever still terminates where it was nominated."""
    victim = pod("v", 1, cls="low", on="n1", deletion_timestamp=T0 + timedelta(seconds=30),
                 disruption_target_by_preemption=True)
    w = world(victim, pod("b", 1, cls="low", on="n2"), pod("p", 100, cls="high", nominated_node_name="n1"),
              nodes_=(node("n1"), node("n2")))
    w = nodes.delete_node(w, "n1", pods_stay=True)
    w = sched.run_queue(w, {"default/p"})
    first = w.predictions[0]
    assert first.outcome == "preempt" and first.victims == {"n2": ("default/b",)}


def test_with_no_node_left_a_pod_loses_its_nomination_without_a_preemption():
    """schedule_one.go: an empty snapshot ends the cycle with ErrNoNodesAvailable and clearNominatedNode."""
    w = world(pod("p", 100, cls="high", nominated_node_name="n1"))
    w = sched.run_queue(nodes.delete_node(w, "n1"), {"default/p"})
    assert w.state.pod_keyed("default/p").nominated_node_name == ""
    assert w.predictions[-1].message == "no nodes available to schedule pods"
