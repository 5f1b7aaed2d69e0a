"""The minimal end-to-end check that a scheduler build preempts at all, on real objects.

One node with room for one pod; a low-priority pod runs there; a
high-priority pod arrives. The low pod must be marked DisruptionTarget by the
scheduler, get a Preempted event, stay Terminating for its grace period and
then be gone; the high pod must be nominated to the node and then bound to it.
"""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from harness.kube import PAUSE_IMAGE, SLOT, Kube, NotYet, condition, disrupted_by_preemption, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.smoke]

GRACE = 3


def _pod(name: str, cls: str, grace: int) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            priority_class_name=cls,
            termination_grace_period_seconds=grace,
            containers=[client.V1Container(name="c", image=PAUSE_IMAGE,
                                           resources=client.V1ResourceRequirements(limits={SLOT: "1"}))],
        ),
    )


@pytest.fixture
def smoke_ns(kube: Kube, run_id: str, build: str):
    ns, node = f"smoke-{build}-{run_id}", f"smoke-{build}-{run_id}-n1"
    classes = {f"smoke-{run_id}-low": 10, f"smoke-{run_id}-high": 1000}
    kube.create_namespace(ns, run_id)
    try:
        for name, value in classes.items():
            kube.scheduling.create_priority_class(
                client.V1PriorityClass(metadata=client.V1ObjectMeta(name=name), value=value))
        kube.create_node(node, slots=1, run_id=run_id)
        yield ns, node, *classes
    finally:
        kube.delete_namespace(ns)
        for name in classes:
            kube.scheduling.delete_priority_class(name)
        kube.core.delete_node(node)


def test_high_priority_pod_preempts_low_priority_pod(kube: Kube, smoke_ns, build: str):
    ns, node, low_cls, high_cls = smoke_ns
    kube.core.create_namespaced_pod(ns, _pod("low", low_cls, GRACE))

    def running(name):
        def check():
            p = kube.core.read_namespaced_pod(name, ns)
            if p.status.phase != "Running":
                raise NotYet(f"{name} is {p.status.phase}")
            return p
        return check

    low = wait_for(running("low"), 30, "the low-priority pod to run")
    assert low.spec.node_name == node

    kube.core.create_namespaced_pod(ns, _pod("high", high_cls, 0))

    def low_disrupted():
        p = kube.pod_or_none(ns, "low")
        if p is None or not disrupted_by_preemption(p):
            raise NotYet("no DisruptionTarget/PreemptionByScheduler condition on low")
        return p

    low = wait_for(low_disrupted, 30, "the scheduler to mark the low pod as a preemption victim")
    assert low.metadata.deletion_timestamp is not None, "a victim must be deleted"
    marked_at = time.monotonic()

    high = wait_for(lambda: _nominated(kube, ns), 15, "the high pod's nominatedNodeName")
    assert high.status.nominated_node_name == node
    assert not high.spec.node_name, "the high pod cannot be bound while the victim still holds the slot"

    events = wait_for(lambda: _preempted_events(kube, ns), 15, "a Preempted event on the low pod")
    assert any(e.involved_object.name == "low" for e in events)
    assert all(node in (e.message or "") for e in events)

    def low_gone():
        if kube.pod_or_none(ns, "low") is not None:
            raise NotYet("low is still Terminating")

    wait_for(low_gone, GRACE + 20, "the low pod to be deleted after its grace period")
    assert time.monotonic() - marked_at >= GRACE - 1.0, "the victim must keep its grace period"

    def bound():
        p = kube.core.read_namespaced_pod("high", ns)
        if not p.spec.node_name:
            raise NotYet("high is not bound yet")
        return p

    high = wait_for(bound, 30, "the high pod to be bound once the victim is gone")
    assert high.spec.node_name == node
    scheduled = condition(high, "PodScheduled")
    assert scheduled is not None and scheduled.status == "True"


def _nominated(kube: Kube, ns: str):
    p = kube.core.read_namespaced_pod("high", ns)
    if not p.status.nominated_node_name:
        raise NotYet("high has no nominatedNodeName")
    return p


def _preempted_events(kube: Kube, ns: str):
    events = kube.preempted_events(ns)
    if not events:
        raise NotYet("no Preempted event yet")
    return events
