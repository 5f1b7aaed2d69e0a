"""Which nodes are preemption candidates: Unschedulable vs UnschedulableAndUnresolvable."""

from reference import filter as flt
from reference.objects import LabelSelector, PodAffinityTerm, Taint, Toleration

from tests.builders import node, pod, state


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


def test_a_nominated_pods_anti_affinity_is_not_held_against_a_pod_inter_pod_affinity_skips():
    """InterPodAffinity's PreFilter says Skip for a pod with no terms when no assigned pod's
    anti-affinity selects it; the framework then leaves the plugin out of AddPod and Filter, so
    a nominated pod's anti-affinity never keeps it off the node (filtering.go, framework.go)."""
    away = PodAffinityTerm(LabelSelector((("app", "web"),)), "kubernetes.io/hostname")
    nominee = pod("nominee", 100, labels={"app": "db"}, pod_anti_affinity=(away,), nominated_node_name="n1")
    web = pod("web", 5, labels={"app": "web"})
    s = state(nodes=[node("n1", slots=2)], pods=[nominee, web])
    assert flt.skips_inter_pod_affinity(s, web)
    assert flt.fits(s, web, s.node_named("n1"))
    # Once an assigned pod's anti-affinity selects it, PreFilter does not skip, and the nominated
    # pod's term counts again.
    guard = pod("guard", 1, on="n2", pod_anti_affinity=(away,))
    s2 = state(nodes=[node("n1", slots=2), node("n2")], pods=[nominee, web, guard])
    assert not flt.skips_inter_pod_affinity(s2, web)
    assert not flt.fits(s2, web, s2.node_named("n1"))
