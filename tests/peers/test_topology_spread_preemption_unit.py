"""Peer cases: kubernetes pkg/scheduler/framework/plugins/defaultpreemption default_preemption_test.go,
the rows whose preemptor carries topology spread constraints: TestDryRunPreemption "preemption to
resolve pod topology spread filter failure" and TestPreempt "preemption for topology spread
constraints" (the same facts in v1.34.4, v1.35.8 and v1.37.2), and v1.37.2's two TestSelectVictimsOnNode
"Cross-node PodGroup: topology spread blocks reprieve via PreFilterExtension" rows, through the
model's dry run and preemption (reference.preemption) with its PodTopologySpread filter
(reference.filter.pod_topology_spread). Each test names its upstream case and is the ``test:`` of
that case in peers/upstream-cases.yaml (one parameter per release where the row is in several);
the facts (nodes and their zones, labels, priorities, constraints, expected victims and node) are
the upstream rows', written anew.

How the rows map onto the model: upstream's profile has PodTopologySpread as its only filter
(no NodeResourcesFit; the pods ask for nothing), so the model's filters are that one plugin for the
call (``upstream_tables.given_filters``). Nodes are the tables' very large nodes, labelled
``hostname`` and ``zone`` from names like "node-a/zone1" (``big_node``). Every constraint selects
pods that have the label ``foo`` (Exists) with maxSkew 1, DoNotSchedule, the defaults otherwise.
Builders, units and harness are upstream_tables.py's.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from reference import filter as flt
from reference.objects import LabelSelector, Requirement, SpreadConstraint
from reference.preemption import predict

from tests.builders import T0
from tests.peers.default_preemption_rows import NO_VICTIMS
from tests.peers.upstream_tables import (
    GENERIC_WORKLOAD,
    HIGH,
    LOW,
    MID,
    NS,
    UPSTREAM,
    VERY_HIGH,
    big_node,
    cluster,
    dry_run,
    given_filters,
    given_statuses,
    group,
    names,
    pod,
    verdict,
)

RELEASES = [pytest.param("1.34", id="1.34"), pytest.param("1.35", id="1.35"), pytest.param("1.37", id="1.37")]
FOO = {"foo": ""}
HAS_FOO = LabelSelector(match_expressions=(Requirement("foo", "Exists"),))
ZONES = ["node-a/zone1", "node-b/zone1", "node-x/zone2"]


def spread(*keys: str) -> tuple[SpreadConstraint, ...]:
    """maxSkew 1, DoNotSchedule, over pods with ``foo``, for each topology key."""
    return tuple(SpreadConstraint(1, key, HAS_FOO) for key in keys)


def preemptor(*keys: str):
    return pod("p", HIGH, labels=FOO, topology_spread=spread(*keys))


@pytest.mark.parametrize("release", RELEASES)
def test_dry_run_preemption_evens_the_spread(monkeypatch, release):
    """TestDryRunPreemption, "preemption to resolve pod topology spread filter failure": zone1 holds
    node-a (pod-a1 at priority 100, pod-a2 at 0) and node-b (pod-b1 at 0), zone2 node-x (two pods
    at 1000); the preemptor (1000) spreads by zone and by hostname. Without its lower-priority pods
    node-a evens out, and pod-a1 comes back while the zones stay within one; pod-a2 does not. On
    node-b pod-b1 is the victim. node-x has none to give."""
    given_filters(monkeypatch, flt.pod_topology_spread)
    pods = [preemptor("zone", "hostname"),
            pod("pod-a1", MID, on="node-a", labels=FOO), pod("pod-a2", LOW, on="node-a", labels=FOO),
            pod("pod-b1", LOW, on="node-b", labels=FOO),
            pod("pod-x1", HIGH, on="node-x", labels=FOO), pod("pod-x2", HIGH, on="node-x", labels=FOO)]
    assert dry_run(cluster([big_node(n) for n in ZONES], pods), "p") == {
        "node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}


@pytest.mark.parametrize("release", RELEASES)
def test_preempt_for_topology_spread(monkeypatch, release):
    """TestPreempt, "preemption for topology spread constraints": as above but node-a's two pods are
    at 1000 too, so only node-b can give room: the preemptor is nominated there, preempting p-b1;
    tried again with p-b1 terminating and itself nominated, it preempts nobody more."""
    given_filters(monkeypatch, flt.pod_topology_spread)
    nodes = [big_node(n) for n in ZONES]
    state = cluster(nodes, [
        preemptor("zone", "hostname"),
        pod("p-a1", HIGH, on="node-a", labels=FOO), pod("p-a2", HIGH, on="node-a", labels=FOO),
        pod("p-b1", LOW, on="node-b", labels=FOO),
        pod("p-x1", HIGH, on="node-x", labels=FOO), pod("p-x2", HIGH, on="node-x", labels=FOO)])
    given_statuses(monkeypatch, {n.name: flt.UNSCHEDULABLE for n in nodes})
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=release)
    assert (pr.outcome, pr.nodes) == ("preempt", frozenset({"node-b"}))
    assert names(pr.victims["node-b"]) == ["p-b1"]
    after = state.with_pod(state.pod_keyed(f"{NS}/p-b1").with_(deletion_timestamp=T0, disruption_target_by_preemption=True))
    after = after.with_pod(after.pod_keyed(f"{NS}/p").with_(nominated_node_name="node-b"))
    given_statuses(monkeypatch, {})
    again = predict(after, f"{NS}/p", UPSTREAM, T0 + timedelta(seconds=1), release=release)
    assert again.outcome != "preempt" and not again.victims


def cross_node(main: str):
    """pg1 (priority 0, disrupted as a whole) runs pod-a on node-a and pod-b on node-b (zone1);
    pod-c (10000) runs on node-c (zone2); all carry ``foo``. The preemptor (1000, ``foo``) spreads
    by zone."""
    pods = [pod("p", HIGH, labels=FOO, topology_spread=spread("zone")),
            pod("pod-a", LOW, on="node-a", labels=FOO, group="pg1"),
            pod("pod-b", LOW, on="node-b", labels=FOO, group="pg1"),
            pod("pod-c", VERY_HIGH, on="node-c", labels=FOO)]
    state = cluster([big_node(n) for n in ("node-a/zone1", "node-b/zone1", "node-c/zone2")], pods,
                    groups=[group("pg1", LOW, "all")])
    return verdict(state, "p", main, "1.37", GENERIC_WORKLOAD)


def test_select_victims_cross_node_group_spread_on_node_a(monkeypatch):
    """TestSelectVictimsOnNode, "Cross-node PodGroup: topology spread blocks reprieve via
    PreFilterExtension on node-a": with pg1 gone from both zone1 nodes (its pod on node-b too)
    the preemptor fits node-a; given back, pg1 puts zone1 two above zone2: pg1 is the victim,
    both its pods, with no PDB violated."""
    given_filters(monkeypatch, flt.pod_topology_spread)
    v = cross_node("node-a")
    assert v.candidate, v.reason
    assert (names(v.victims), v.pdb_violations) == (["pod-a", "pod-b"], 0)


def test_select_victims_cross_node_group_spread_on_node_c(monkeypatch):
    """TestSelectVictimsOnNode, "... on node-c": node-c has no pod below the preemptor (pg1 has
    none there): no victims, which upstream answers UnschedulableAndUnresolvable."""
    given_filters(monkeypatch, flt.pod_topology_spread)
    v = cross_node("node-c")
    assert (v.candidate, v.reason, v.victims) == (False, NO_VICTIMS, ())
