"""A deferred in-place resize (reference.resize.defer_resize) around the peer cases of
tests/peers/test_deferred_resize_preemption_*_137.py: what the gate and the release change, and
the model's own steps (a restart) that upstream's cases do not reach."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference import requeue, scheduler as sched
from reference.objects import ClusterState, Node, Pod
from reference.preemption import predict
from reference.restart import restart
from reference.resize import defer_resize, resize_pod
from reference.world import World

from tests.builders import T0

GATE = (("kube-scheduler", "InPlacePodVerticalScalingSchedulerPreemption", True),)


def world(release: str = "1.37", gates=GATE) -> World:
    nodes = (Node("n1", allocatable=(("pods", 32), ("cpu", 300))), Node("n2", allocatable=(("pods", 32), ("cpu", 300))))
    pods = (Pod("low", priority=1, requests=(("cpu", 200),), node_name="n1"),
            Pod("big", priority=10, requests=(("cpu", 100),), node_name="n1"))
    return World(ClusterState(nodes=nodes, pods=pods), T0, "upstream", release=release, gates=gates)


@pytest.mark.parametrize("release, gates", [("1.37", ()), ("1.36", GATE), ("1.35", ())])
def test_without_the_gate_a_deferred_resize_is_only_counted(release, gates):
    """The cache counts the spec's size whatever the gate; nobody queues or preempts for it."""
    w = defer_resize(world(release, gates), "default/big", {"cpu": 300})
    assert w.state.pod_keyed("default/big").request_map == {"cpu": 300}
    assert not w.preempted and "default/big" not in w.parked_keys()
    with pytest.raises(ValueError, match="deferred resize is scheduled only"):
        predict(w.state, "default/big", "upstream", T0, release, gates)


def test_with_the_gate_it_preempts_on_its_node_only():
    w = defer_resize(world(), "default/big", {"cpu": 300})
    assert w.preempted == {"default/low"} and w.state.pod_keyed("default/big").nominated_node_name == ""


def test_a_scale_up_on_its_node_wakes_a_parked_deferred_resize_and_elsewhere_not():
    w = world()
    state = w.state.with_pod(Pod("low", priority=20, requests=(("cpu", 200),), node_name="n1"))
    w = replace(w, state=state.with_pod(Pod("other", priority=20, requests=(("cpu", 100),), node_name="n2")))
    w = defer_resize(w, "default/big", {"cpu": 150})  # no lower-priority pod to take: parked
    assert "default/big" in w.parked_keys() and not w.preempted
    tries = dict(w.failures)["default/big"]
    assert dict(resize_pod(w, "default/other", {"cpu": 200}).failures)["default/big"] == tries
    assert dict(resize_pod(w, "default/low", {"cpu": 250}).failures)["default/big"] == tries + 1
    # A pending pod is never woken by a scale-up.
    parked = Pod("p", requests=(("cpu", 100),))
    old = w.state.pod_keyed("default/low")
    event = requeue.pod_scaled_up(old, old.with_(requests=(("cpu", 250),)))
    assert not requeue.woken_by(event, parked, frozenset(requeue.HINTS), "1.37")


def test_a_restart_queues_a_deferred_resize_again():
    w = defer_resize(world(), "default/big", {"cpu": 300})
    w = sched.advance(w, flush=False)
    again = restart(w)
    assert "default/big" in again.parked_keys()
    rebuilt = next(line for line in again.log if "its queue is rebuilt" in line)
    assert "default/big" in rebuilt
