"""Peer cases: kubernetes v1.37.2 test/integration/scheduler/preemption/deferred_resize_preemption_test.go
(TestDeferredResizePodPreemption, TestDeferredResizeQueueingHints, TestDeferredResizeNodePreemptionPolicy,
TestDeferredResizeQueueingHandlers), through the model's scheduling loop (reference.scheduler,
reference.resize, reference.nodes, reference.cycle) at release "1.37" with
InPlacePodVerticalScalingSchedulerPreemption on, as upstream runs them. Each test names its upstream
case and is the ``test:`` of that case (release 1.37.2) in peers/upstream-cases.yaml; the facts
(capacities, requests, priorities, policies, the triggers and what each must or must not do) are
the upstream rows', written anew.

How the rows map onto the model:

* Upstream creates the resizing pod bound to its node, then writes its status: running,
  PodScheduled, and PodResizePending with reason Deferred, the kubelet having allocated less than
  the spec asks. Here the pod runs at what was allocated and ``reference.resize.defer_resize``
  gives it the spec's requests and the Deferred condition: the status update the scheduler's
  updatePod handler sees. Where upstream creates the pod with the spec's requests already (the
  cache counts those from the start), the model starts the pod at them and defers the resize
  with the allocation upstream writes.
* Upstream's "attempts" of the pod in the queue are the model's failed attempts (``World.failures``:
  each attempt of a deferred resize ends in a failure, the pod being kept in the queue); "in the
  queue" is parked or waiting to be tried. A pod "getting evicted" is one the model marked a
  victim (Terminating); PodScheduled stays True and the pod stays on its node.
* Upstream waits up to 10 s for what must happen and 300-500 ms for what must not: the model
  takes no time and lets no periodic flush run.
* Upstream's integration tests run no kubelet, so nobody actuates a deferred resize: neither does
  the model unless told (``resize_no_longer_deferred``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference import requeue, scheduler as sched
from reference.nodes import update_node
from reference.objects import PREEMPT_NEVER, ClusterState, Node, Pod
from reference.resize import defer_resize, resize_no_longer_deferred, resize_pod
from reference.world import World, wake

from tests.builders import T0

RELEASE = "1.37"
GATE = (("kube-scheduler", "InPlacePodVerticalScalingSchedulerPreemption", True),)
NS = "default"
LOW, HIGH = 100, 300  # the integration package's lowPriority and highPriority


def node(name: str, cpu: int, memory: int | None = None, disabled: tuple[str, ...] = ()) -> Node:
    alloc = (("pods", 32), ("cpu", cpu)) + ((("memory", memory),) if memory is not None else ())
    return Node(name, allocatable=alloc, resize_preemption_disabled=disabled)


def running(name: str, prio: int, on: str, cpu: int, memory: int | None = None, **kw) -> Pod:
    requests = (("cpu", cpu),) + ((("memory", memory),) if memory is not None else ())
    return Pod(name, NS, priority=prio, requests=requests, node_name=on, scheduled_at=T0, start_time=T0, **kw)


def start(nodes, pods, gates=GATE) -> World:
    return World(ClusterState(nodes=tuple(nodes), pods=tuple(pods)), T0, "upstream", release=RELEASE, gates=gates)


def key(name: str) -> str:
    return f"{NS}/{name}"


def in_queue(world: World, name: str) -> bool:
    return key(name) in world.parked_keys() or key(name) in world.queued


def attempts(world: World, name: str) -> int:
    return dict(world.failures).get(key(name), 0)


def preempted(world: World) -> list[str]:
    return sorted(k.split("/", 1)[1] for k in world.preempted)


# -- TestDeferredResizePodPreemption ----------------------------------------------------------------------

POD_PREEMPTION = [
    pytest.param([("victim-1", 200, 100)], {}, {}, ["victim-1"], id="single-low-victim"),
    pytest.param([("victim-1", 100, 50), ("victim-2", 100, 50)], {}, {}, ["victim-1", "victim-2"],
                 id="two-low-victims"),
    pytest.param([("victim-1", 200, 100)], {"preemption_policy": PREEMPT_NEVER}, {}, [], id="preemptor-never"),
    pytest.param([], {}, {}, [], id="fits-parked"),
    pytest.param([("victim-1", 200, 100)], {}, {"disabled": ("test-operator",)}, [], id="node-policy-disables"),
]


@pytest.mark.parametrize("victims, preemptor, node_policy, evicted", POD_PREEMPTION)
def test_deferred_resize_pod_preemption(victims, preemptor, node_policy, evicted):
    """TestDeferredResizePodPreemption: a node of 300m cpu and 300 bytes runs the row's low pods
    (priority 100) and the resizing pod (priority 300, allocated 100m / 100), whose deferred resize
    asks 300m / 100. It preempts exactly the row's victims: one 200m pod; two 100m pods; nobody when
    its policy is Never, when its resize fits the empty node, or when the node disables resize
    preemption. Whatever happened, it is not nominated, it keeps running on its node (PodScheduled
    stays True) and it stays in the scheduling queue, also once its victims are gone."""
    pods = [running(name, LOW, "preempt-node", cpu, mem) for name, cpu, mem in victims]
    pods.append(running("preemptor-pod", HIGH, "preempt-node", 100, 100, **preemptor))
    world = start([node("preempt-node", 300, 300, **node_policy)], pods)
    world = defer_resize(world, key("preemptor-pod"), {"cpu": 300, "memory": 100})
    assert preempted(world) == evicted
    assert all(world.state.pod_keyed(key(v)).terminating for v in evicted)
    assert not any(p.terminating for p in world.state.pods if p.name not in evicted)
    for w in (world, sched.advance(world, flush=False)):
        me = w.state.pod_keyed(key("preemptor-pod"))
        assert (me.node_name, me.nominated_node_name, me.terminating) == ("preempt-node", "", False)
        assert in_queue(w, "preemptor-pod")


# -- TestDeferredResizeQueueingHints and TestDeferredResizeNodePreemptionPolicy ---------------------------


def hint_setup(node1_disabled: bool = False) -> World:
    """The tests' common setup: hint-node1 (200m) runs other-pod (priority 300, 200m) and the deferred
    pod (priority 100, spec 100m, allocated 50m): the cache counts it at 100m, so hint-node1 is
    overcommitted; hint-node2 (500m) runs irrelevant-pod (priority 300, 200m). The deferred pod's
    attempt finds no room and no lower-priority pod to preempt: it is parked."""
    disabled = ("test-policy",) if node1_disabled else ()
    world = start([node("hint-node1", 200, disabled=disabled), node("hint-node2", 500)],
                  [running("other-pod", HIGH, "hint-node1", 200), running("irrelevant-pod", HIGH, "hint-node2", 200),
                   running("deferred-pod", LOW, "hint-node1", 100)])
    world = defer_resize(world, key("deferred-pod"), {"cpu": 100}, allocated={"cpu": 50})
    assert key("deferred-pod") in world.parked_keys() and attempts(world, "deferred-pod") == 1
    assert world.preempted == frozenset()
    return world


def relabel_other(world: World) -> World:
    """A label added to other-pod: an AssignedPod UpdatePodLabel event, which NodeName and
    NodeResourcesFit (the deferred pod's rejectors) do not register."""
    other = world.state.pod_keyed(key("other-pod"))
    new = other.with_(labels=(("updated-by-test", "true"),))
    event = requeue.ClusterEvent("UpdatePodLabel", new, f"{new.key} relabelled")
    return sched.run_queue(wake(replace(world, state=world.state.with_pod(new)), event), set())


def gone_now(world: World, name: str) -> World:
    """Deleted with no grace period, and so gone at once."""
    pod = world.state.pod_keyed(key(name))
    world = replace(world, state=world.state.with_pod(pod.with_(termination_grace_seconds=0)))
    return sched.advance(sched.delete_pod(world, key(name)), flush=False)


def enlarge_node1(world: World) -> World:
    n = world.state.node_named("hint-node1")
    return update_node(world, replace(n, allocatable=(("pods", 32), ("cpu", 1000))))


def set_policy(world: World, name: str, disabled: tuple[str, ...]) -> World:
    return update_node(world, replace(world.state.node_named(name), resize_preemption_disabled=disabled))


QUEUEING_HINTS = [
    pytest.param(lambda w: resize_pod(w, key("irrelevant-pod"), {"cpu": 100}), False, id="other-node-scale-down"),
    pytest.param(lambda w: resize_pod(w, key("other-pod"), {"cpu": 100}), True, id="same-node-scale-down"),
    pytest.param(lambda w: gone_now(w, "irrelevant-pod"), False, id="other-node-deletion"),
    pytest.param(lambda w: gone_now(w, "other-pod"), True, id="same-node-deletion"),
    pytest.param(relabel_other, False, id="label-change"),
    pytest.param(enlarge_node1, True, id="own-node-grows"),
    pytest.param(lambda w: defer_resize(w, key("deferred-pod"), {"cpu": 80}), True, id="own-spec-scale-down"),
]


@pytest.mark.parametrize("trigger, retried", QUEUEING_HINTS)
def test_deferred_resize_queueing_hints(trigger, retried):
    """TestDeferredResizeQueueingHints: the parked deferred pod is tried again after exactly the
    events that could give it room on its own node: another pod there asking less or gone, its node
    growing, its own spec asking less; not a pod on the other node asking less or gone, nor a label
    change. It stays in the queue either way."""
    world = hint_setup()
    after = trigger(world)
    assert (attempts(after, "deferred-pod") > attempts(world, "deferred-pod")) == retried
    assert in_queue(after, "deferred-pod")


NODE_POLICY = [
    pytest.param(False, "hint-node1", ("test-policy",), False, id="disabling-own-node"),
    pytest.param(True, "hint-node1", (), True, id="enabling-own-node"),
    pytest.param(False, "hint-node2", ("test-policy",), False, id="other-node"),
]


@pytest.mark.parametrize("disabled_at_start, changed, disabled, retried", NODE_POLICY)
def test_deferred_resize_node_preemption_policy(disabled_at_start, changed, disabled, retried):
    """TestDeferredResizeNodePreemptionPolicy: a node's disableResizePreemption changed. Disabling it
    on the pod's node, or changing it on the other node, leaves the parked pod alone; enabling it
    on the pod's node (the pod was parked by DeferredPodScheduling) tries it again. It stays in the
    queue."""
    world = hint_setup(node1_disabled=disabled_at_start)
    if disabled_at_start:
        assert dict(world.rejectors)[key("deferred-pod")] >= {requeue.DEFERRED_POD_SCHEDULING}
    after = set_policy(world, changed, disabled)
    assert (attempts(after, "deferred-pod") > attempts(world, "deferred-pod")) == retried
    assert in_queue(after, "deferred-pod")


# -- TestDeferredResizeQueueingHandlers --------------------------------------------------------------------

NODE1 = node("node1", 200)


def deferred_pod(name: str = "deferred-pod") -> Pod:
    """Spec 100m, allocated 50m, its resize deferred (counted at 100m)."""
    return running(name, LOW, "node1", 100).with_(deferred_requests=(("cpu", 100),), allocated=(("cpu", 50),))


def test_deferred_resize_queued_at_scheduler_start():
    """TestDeferredResizeQueueingHandlers, "AddPod handler enqueues existing deferred pod on scheduler
    startup": a pod already deferred when the scheduler starts is queued by its informer's AddPod
    (with the gate off it would not be)."""
    world = sched.run_queue(start([NODE1], [deferred_pod()]))
    assert in_queue(world, "deferred-pod")
    assert not in_queue(sched.run_queue(start([NODE1], [deferred_pod()], gates=())), "deferred-pod")


def test_deferred_resize_queued_when_the_pod_turns_deferred():
    """TestDeferredResizeQueueingHandlers, "UpdatePod handler enqueues pod when it transitions to
    deferred resize": a running pod is not in the queue; once its status says its resize is
    deferred, it is."""
    world = sched.run_queue(start([NODE1], [running("deferred-pod", LOW, "node1", 100)]))
    assert not in_queue(world, "deferred-pod")
    world = defer_resize(world, key("deferred-pod"), {"cpu": 100}, allocated={"cpu": 50})
    assert in_queue(world, "deferred-pod")


def test_deferred_resize_leaves_the_queue_when_no_longer_deferred():
    """TestDeferredResizeQueueingHandlers, "UpdatePod handler removes pod from queue when deferred
    condition is cleared"."""
    world = sched.run_queue(start([NODE1], [deferred_pod()]))
    assert in_queue(world, "deferred-pod")
    world = resize_no_longer_deferred(world, key("deferred-pod"))
    assert not in_queue(world, "deferred-pod")
    assert world.state.pod_keyed(key("deferred-pod")).node_name == "node1"


def test_deferred_resize_deleted_leaves_cache_and_queue():
    """TestDeferredResizeQueueingHandlers, "DeletePod handler removes pod from both cache and
    scheduling queue when deleted": deleted with no grace period, the deferred pod is neither
    counted on its node nor in the queue."""
    world = sched.run_queue(start([NODE1], [deferred_pod()]))
    assert in_queue(world, "deferred-pod") and world.state.pods_on("node1")
    world = gone_now(world, "deferred-pod")
    assert not in_queue(world, "deferred-pod") and not world.state.pods_on("node1")
