"""Which nodes are preemption candidates: Unschedulable vs UnschedulableAndUnresolvable."""

from reference import filter as flt
from reference.objects import LabelSelector, PodAffinityTerm, Taint, Toleration

from .builders import node, pod, state


def test_insufficient_room_is_unschedulable_so_preemption_may_help():
    s = state(nodes=[node("n", 1)], pods=[pod("a", on="n")])
    st = flt.run_filters(s, pod("p"), s.nodes[0])
    assert st.code == flt.UNSCHEDULABLE and "Insufficient example.com/slot" in st.reasons


def test_request_larger_than_the_whole_node_is_unresolvable():
    s = state(nodes=[node("n", 1)])
    assert flt.run_filters(s, pod("p", slots=2), s.nodes[0]).code == flt.UNRESOLVABLE


def test_node_selector_mismatch_is_unresolvable():
    s = state(nodes=[node("n", 1, labels=(("disk", "hdd"),))])
    p = pod("p", node_selector=(("disk", "ssd"),))
    assert flt.run_filters(s, p, s.nodes[0]).code == flt.UNRESOLVABLE


def test_untolerated_taint_is_unresolvable_and_a_toleration_lifts_it():
    s = state(nodes=[node("n", 1, taints=(Taint("dedicated", "NoSchedule", "x"),))])
    assert flt.run_filters(s, pod("p"), s.nodes[0]).code == flt.UNRESOLVABLE
    tolerant = pod("p", tolerations=(Toleration("dedicated", "Equal", "x", "NoSchedule"),))
    assert flt.run_filters(s, tolerant, s.nodes[0]).ok


def test_too_many_pods_is_unschedulable():
    from reference.objects import Node
    n = Node("n", allocatable=(("pods", 1),))
    s = state(nodes=[n], pods=[pod("a", on="n", slots=0)])
    st = flt.run_filters(s, pod("p", slots=0), n)
    assert st.code == flt.UNSCHEDULABLE and st.reasons == ("Too many pods",)


def test_required_pod_affinity_unmet_is_unresolvable():
    s = state(nodes=[node("n", 2)])
    term = PodAffinityTerm(LabelSelector((("app", "db"),)), "kubernetes.io/hostname")
    assert flt.run_filters(s, pod("p", pod_affinity=(term,)), s.nodes[0]).code == flt.UNRESOLVABLE


def test_anti_affinity_conflict_on_the_node_is_unschedulable():
    s = state(nodes=[node("n", 2)], pods=[pod("a", on="n", labels={"app": "x"})])
    term = PodAffinityTerm(LabelSelector((("app", "x"),)), "kubernetes.io/hostname")
    st = flt.run_filters(s, pod("p", pod_anti_affinity=(term,)), s.nodes[0])
    assert st.code == flt.UNSCHEDULABLE


def test_nominated_pods_of_equal_or_higher_priority_take_room():
    s = state(nodes=[node("n", 1)], pods=[pod("nom", 10, nominated_node_name="n")])
    assert not flt.fits(s, pod("p", 10), s.nodes[0])
    assert flt.fits(s, pod("p", 11), s.nodes[0])
