"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/plugins/defaultpreemption
default_preemption_test.go TestPostFilter, the three rows about a pod whose in-place resize the
kubelet deferred, run with InPlacePodVerticalScalingSchedulerPreemption on, through the model's
PostFilter equivalent (reference.preemption.predict at release "1.37" with that gate). Each test
names its upstream case and is the ``test:`` of that case (release 1.37.2) in
peers/upstream-cases.yaml; the facts (capacities, requests, priorities, the filter statuses handed
in, the expected node, victim count and message) are the upstream rows', written anew.

How the rows map onto the model:

* The resizing pod ``p`` runs on node1 at priority 1000 and its spec asks 200m cpu and 200 bytes
  of memory, with a PodResizePending condition of reason Deferred. The rows' snapshot holds it at
  100m / 100 (the cache lagging the pod): in the model, its ``requests`` (what the cache counts)
  are 100m / 100 and its ``deferred_requests`` (the spec) 200m / 200.
* Upstream hands PostFilter the filter phase's statuses (node1 Unschedulable, any other node
  absent, so UnschedulableAndUnresolvable); the harness gives the model the same
  (upstream_tables.given_statuses). Its dry run on node1 runs the model's own filters.
* The row's test-only "skip-on-deferred" plugin (its PreFilter says Skip for a deferred resize, its
  Filter fails every pod) is a model filter that fails every pod and is marked
  ``skips_deferred_resize``, as the model marks the real plugins whose PreFilter skips such a pod.
"""

from __future__ import annotations

from reference import filter as flt
from reference.cycle import success_message
from reference.preemption import predict

from tests.builders import T0
from tests.peers.upstream_tables import HIGH, LOW, NS, UPSTREAM, cluster, given_statuses, node, pod

RELEASE = "1.37"
GATE = (("kube-scheduler", "InPlacePodVerticalScalingSchedulerPreemption", True),)


def cpu_mem(cpu: int, memory: int) -> tuple[tuple[str, int], ...]:
    return (("cpu", cpu), ("memory", memory))


def resizing(on: str = "node1"):
    """``p``: counted at 100m / 100 on its node, its deferred resize asking 200m / 200."""
    return pod("p", HIGH, on=on).with_(requests=cpu_mem(100, 100), deferred_requests=cpu_mem(200, 200),
                                       allocated=cpu_mem(100, 100))


def small(name: str, on: str):
    return pod(name, LOW, on=on).with_(requests=cpu_mem(100, 100))


def square(name: str):
    return node(name, cpu=200, memory=200)


def always_fails_unless_skipped(state, p, n, resident):
    """The row's test plugin: Unschedulable for any pod whose filters it runs for."""
    return flt.Status(flt.UNSCHEDULABLE, ("fails every pod it is run for",), "skip-on-deferred")


always_fails_unless_skipped.skips_deferred_resize = True


def preempts_on_node1(state) -> None:
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=RELEASE, gates=GATE)
    assert (pr.outcome, pr.nodes) == ("preempt", frozenset({"node1"}))
    assert [k.split("/", 1)[1] for k in pr.victims["node1"]] == ["p1"]
    assert success_message(pr.message, "node1", 1, RELEASE).endswith(
        " preemption: found a potential placement for pod on node node1, preempting 1 victims")


def test_post_filter_deferred_resize_not_counted_twice(monkeypatch):
    """TestPostFilter, "deferred pod resize preemption success (mitigates double counting)": node1
    (200m, 200) holds p at 100m / 100 and p1 (priority 0) at 100m / 100. Counted once, p wants
    100m / 100 more than it holds, which p1's room gives: node1 is nominated, one victim. Counted
    twice (200 more on top of its 100) it would not fit even with p1 gone."""
    given_statuses(monkeypatch, {"node1": flt.UNSCHEDULABLE})
    state = cluster([square("node1")], [resizing(), small("p1", "node1")])
    preempts_on_node1(state)
    # The dry run's own check, without and with p1: short of room, then room enough.
    n1, p = state.node_named("node1"), state.pod_keyed(f"{NS}/p")
    assert not flt.run_filters(state, p, n1).ok
    assert flt.run_filters(state, p, n1, [q for q in state.pods_on("node1") if q.name != "p1"]).ok


def test_post_filter_deferred_resize_skips_plugins_that_skip_it(monkeypatch):
    """TestPostFilter, "deferred pod resize preemption success (bypasses skipped filter plugins)":
    the same cluster with a plugin added whose PreFilter skips a deferred resize and whose Filter
    fails every pod. The dry run leaves it out for p as the attempt did, so p still preempts p1 on
    node1; a pending pod of the same size, which the plugin is run for, would find no candidate."""
    given_statuses(monkeypatch, {"node1": flt.UNSCHEDULABLE})
    monkeypatch.setattr(flt, "FILTERS", flt.FILTERS + (always_fails_unless_skipped,))
    monkeypatch.setattr(flt, "POD_DEPENDENT", flt.POD_DEPENDENT + (always_fails_unless_skipped,))
    monkeypatch.setattr(flt, "only_resources_matter", lambda *a: False)  # no counting shortcut past the plugin
    state = cluster([square("node1")], [resizing(), small("p1", "node1")])
    preempts_on_node1(state)
    pending = state.with_pod(pod("q", HIGH).with_(requests=cpu_mem(100, 100)))
    assert predict(pending, f"{NS}/q", UPSTREAM, T0, release=RELEASE, gates=GATE).outcome == "unschedulable"


def test_post_filter_deferred_resize_victims_only_on_its_node(monkeypatch):
    """TestPostFilter, "deferred pod resize preemption fails because victim search is isolated to
    host node": p on node1 has no lower-priority pod beside it; p2 (priority 0) runs on node2,
    which the filter phase left out (UnschedulableAndUnresolvable). No victim anywhere: the
    nomination stays empty and PostFilter fails with 0/2 nodes available, one with no victims and
    one where preemption cannot help."""
    state = cluster([square("node1"), square("node2")], [resizing(), small("p2", "node2")])
    # The model's own filter phase leaves node2 out as the row does, by NodeName.
    node2 = flt.run_filters(state, state.pod_keyed(f"{NS}/p"), state.node_named("node2"))
    assert (node2.code, node2.plugin) == (flt.UNRESOLVABLE, "NodeName")
    given_statuses(monkeypatch, {"node1": flt.UNSCHEDULABLE})
    pr = predict(state, f"{NS}/p", UPSTREAM, T0, release=RELEASE, gates=GATE)
    assert (pr.outcome, pr.nominated_node, pr.victims) == ("unschedulable", "", {})
    assert pr.message.endswith(" preemption: 0/2 nodes are available: 1 No preemption victims found for incoming "
                               "pod, 1 Preemption is not helpful for scheduling."), pr.message
