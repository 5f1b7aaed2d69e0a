"""In-place pod resize (reference.resize, the scale-down hint in reference.requeue), and the
resizePod step of the scenario format: one test per rule, from k8s.io/kubernetes v1.35.8
noderesources/fit.go isSchedulableAfterPodScaleDown (v1.37.2 isSchedulableAfterAssignedPodScaleDown)."""

from __future__ import annotations

import pytest

from harness.formats.common import ScenarioError
from harness.formats.pods import load
from harness.kube import SLOT
from reference import requeue, scheduler as sched
from reference.objects import Node
from reference.resize import resize_pod
from reference.world import World

from tests.builders import T0, pod, state
from tests.formats.files import written

NRF = requeue.NODE_RESOURCES_FIT


def cpu_pod(name, milli, **kw):
    p = pod(name, **kw)
    return p.with_(requests=p.requests + (("cpu", milli),))


def scaled(old_milli, new_milli, *, on="n1"):
    old = cpu_pod("big", old_milli, on=on)
    return requeue.pod_scaled_down(old, old.with_(requests=tuple((r, new_milli if r == "cpu" else q)
                                                                  for r, q in old.requests)))


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.37"])
def test_a_running_pod_asking_less_cpu_wakes_a_pod_parked_for_cpu(release):
    assert requeue.woken_by(scaled(800, 400), cpu_pod("waiting", 500), frozenset({NRF}), release)


def test_a_pod_that_asks_no_cpu_is_not_woken_by_cpu_given_back():
    # fit.go: "We only care about the resources requested by the pod we are trying to schedule."
    assert not requeue.woken_by(scaled(800, 400), pod("waiting"), frozenset({NRF}), "1.35")


def test_only_noderesourcesfit_hears_a_scale_down():
    for plugin in (requeue.INTER_POD_AFFINITY, requeue.NODE_AFFINITY, requeue.TAINT_TOLERATION):
        assert not requeue.woken_by(scaled(800, 400), cpu_pod("waiting", 500), frozenset({plugin}), "1.35")


def test_an_unscheduled_pod_asking_less_wakes_nobody():
    # haveEnoughRelevantResourcesDecreased: an update of an unscheduled pod frees no room.
    assert not requeue.woken_by(scaled(800, 400, on=""), cpu_pod("waiting", 500), frozenset({NRF}), "1.35")


def world(*pods) -> World:
    n1 = Node("n1", allocatable=(("pods", 110), (SLOT, 2), ("cpu", 1000)))
    return World(state(nodes=[n1], pods=pods), T0, "upstream")


def test_the_resize_down_lets_the_parked_pod_in_at_once_and_a_resize_up_wakes_nobody():
    w = world(cpu_pod("big", 800, on="n1"))
    w = sched.create_pod(w, cpu_pod("waiting", 500))
    assert not w.state.pod_keyed("default/waiting").node_name
    up = resize_pod(w, "default/big", {"cpu": 900})
    assert not up.state.pod_keyed("default/waiting").node_name
    assert not any("tried again" in line for line in up.log[len(w.log):])
    down = resize_pod(w, "default/big", {"cpu": 400})
    assert down.state.pod_keyed("default/waiting").node_name == "n1"
    assert any("NodeResourcesFit: default/big now asks less cpu" in line for line in down.log)


def test_only_a_running_pod_is_resized():
    with pytest.raises(ValueError, match="only a running pod is resized in place"):
        resize_pod(world(cpu_pod("p", 100)), "default/p", {"cpu": 50})


SCENARIO = """
id: {id}
title: t
spec: s
areas: [queue]
nodes: [{{name: n1, slots: 2, milliCPU: {cpu}}}]
pods:
  - {{name: big, node: n1, qos: {qos}, milliCPU: 800}}
steps:
  - resizePod: {resize}
"""


def scenario(tmp_path, cpu=1000, qos="Burstable", resize="{name: big, milliCPU: 400}"):
    return load(written(tmp_path, SCENARIO, cpu=cpu, qos=qos, resize=resize))


def test_the_resize_step_is_checked_with_its_place(tmp_path):
    s = scenario(tmp_path)
    assert s.needs_kwok == "node's milliCPU"
    assert scenario(tmp_path, cpu=32000).needs_kwok == "resizePod step"
    with pytest.raises(ScenarioError, match=r"steps\[0\].resizePod.name: no pod named 'ghost'"):
        scenario(tmp_path, resize="{name: ghost, milliCPU: 1}")
    with pytest.raises(ScenarioError, match=r"steps\[0\].resizePod.*give milliCPU or memoryRequest"):
        scenario(tmp_path, resize="{name: big}")
    with pytest.raises(ScenarioError, match=r"pods\[0\].*milliCPU: a pod with a request is not BestEffort"):
        scenario(tmp_path, qos="BestEffort")
