"""PodTopologySpread (reference.filter.pod_topology_spread, reference.requeue.pod_topology_spread):
the rules of podtopologyspread/filtering.go, common.go and plugin.go that the peer cases
(tests/peers/test_topology_spread_preemption_*.py) do not single out."""

from __future__ import annotations

from datetime import timedelta

from reference import filter as flt, requeue
from reference.objects import ClusterState, LabelSelector, Node, Pod, Requirement, SpreadConstraint

from tests.builders import T0

APP = (("app", "x"),)
BY_ZONE = SpreadConstraint(1, "zone", LabelSelector(APP))


def zone_node(name: str, zone: str | None) -> Node:
    return Node(name, labels=(("zone", zone),) if zone else ())


def state(*pods: Pod) -> ClusterState:
    return ClusterState(nodes=(zone_node("a", "z1"), zone_node("b", "z2"), zone_node("c", None)), pods=pods)


def app(name: str, on: str, **kw) -> Pod:
    return Pod(name, labels=APP, node_name=on, **kw)


INCOMING = Pod("p", labels=APP, topology_spread=(BY_ZONE,))


def check(s: ClusterState, node: str) -> flt.Status:
    return flt.pod_topology_spread(s, INCOMING, s.node_named(node), flt.residents_on(s, node))


def test_a_node_without_the_key_is_unresolvable_and_skew_is_unschedulable():
    s = state(app("x1", "a"))
    assert check(s, "c").code == flt.UNRESOLVABLE
    assert check(s, "a").code == flt.UNSCHEDULABLE  # 1 + 1 - 0 > 1
    assert check(s, "b").ok


def test_terminating_pods_and_other_namespaces_do_not_count():
    assert check(state(app("x1", "a", deletion_timestamp=T0 + timedelta(seconds=30))), "a").ok
    assert check(state(app("x1", "a").with_(namespace="other")), "a").ok


def test_min_domains_above_the_domains_makes_the_fewest_zero():
    wide = SpreadConstraint(2, "zone", LabelSelector(APP), min_domains=3)
    s = state(app("x1", "a"), app("x2", "b"))
    pod = INCOMING.with_(topology_spread=(wide,))
    assert flt.pod_topology_spread(s, pod, s.node_named("a"), flt.residents_on(s, "a")).ok  # 1 + 1 - 0
    s = state(app("x1", "a"), app("x2", "a"), app("x3", "b"))
    assert not flt.pod_topology_spread(s, pod, s.node_named("a"), flt.residents_on(s, "a")).ok  # 2 + 1 - 0


def test_honor_leaves_nodes_the_pod_may_not_use_out_of_the_count():
    pod = INCOMING.with_(node_affinity=((Requirement("zone", "In", ("z1",)),),))
    s = state(app("x1", "a"), app("x2", "a"))
    # Only zone z1 counts: its own two pods are the fewest, so the skew is 1.
    assert flt.pod_topology_spread(s, pod, s.node_named("a"), flt.residents_on(s, "a")).ok


def test_its_hint_hears_matching_pods_and_nodes_with_its_keys():
    parked = INCOMING
    assert requeue.woken_by(requeue.assigned_pod_gone(app("x1", "a")), parked, frozenset({"PodTopologySpread"}), "1.35")
    assert not requeue.woken_by(requeue.assigned_pod_gone(Pod("y", node_name="a")), parked,
                                frozenset({"PodTopologySpread"}), "1.35")
    assert requeue.woken_by(requeue.node_added(zone_node("d", "z3")), parked, frozenset({"PodTopologySpread"}), "1.37")
    assert not requeue.woken_by(requeue.node_added(zone_node("d", None)), parked, frozenset({"PodTopologySpread"}), "1.37")
    # A pod with no DoNotSchedule constraint was never rejected by it.
    assert not requeue.woken_by(requeue.node_added(zone_node("d", "z3")), Pod("q"), frozenset({"PodTopologySpread"}), "1.37")
