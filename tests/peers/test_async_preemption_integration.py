"""Peer cases: kubernetes test/integration/scheduler/preemption/preemption_test.go TestAsyncPreemption
(v1.34.4, v1.35.8, v1.37.2), the rows whose preemption API calls are held in flight, through the
model's scheduling cycle (reference.cycle.attempt) with a world that keeps an async preemption's
calls in flight (``World.executor``) until the test completes them (cycle.complete_preemption).
Each test names its upstream case and is the ``test:`` of that case, at each release it is
parametrized by, in peers/upstream-cases.yaml; the facts are the upstream rows', written anew.

Upstream's steps, as the model takes them: "create" puts a pod in the cluster (a victim bound to
the node, a pending pod in the active queue); "schedule" checks the pod is first in the queue and
runs one cycle of it; "gated" activates a parked pod and finds it still parked, DefaultPreemption's
PreEnqueue holding it back; "running" asks the executor whether the pod's preemption still runs;
"complete" lets the pod's held calls go through. Victims have no termination grace period: once
deleted they are gone from the API server at once (a later call for one is answered NotFound), and
from the scheduler's cache when it hears of it (``delivered``), which wakes the parked pods their
removal may help. The node has 4 cpus and room for 32 pods; victims have priority 1. Upstream's
queue has no backoff in this test.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference import cycle
from reference.executor import WAITING_POD, Executor, is_running, listed_in
from reference.objects import Pod
from reference.requeue import assigned_pod_gone
from reference.scheduler import pop_order
from reference.world import World, activate, held_back, remove, wake

from tests.builders import T0
from tests.peers.upstream_tables import cluster, node

NS = "default"


def key(name: str) -> str:
    return f"{NS}/{name}"


def cpu(name: str, cores: int, prio: int, on: str = "") -> Pod:
    return Pod(name, NS, priority=prio, requests=(("cpu", cores * 1000),), node_name=on,
               termination_grace_seconds=0, start_time=T0 if on else None)


def start(release: str, victims: int, cores: int) -> World:
    pods = [cpu(f"victim-{i}", cores, 1, on="node") for i in range(victims)]
    state = cluster([node("node", cpu=4000)], pods)
    return World(state, T0, "upstream", release=release, executor=Executor(release))


def create(world: World, pod: Pod) -> World:
    world = replace(world, state=world.state.with_pod(pod.with_(queued_at=world.now)))
    return replace(world, queued=world.queued + (pod.key,))


def schedule(world: World, name: str, bound: bool) -> World:
    """The pod first in the active queue runs one cycle: bound, or left pending (parked)."""
    assert world.queued and pop_order(world, world.queued)[0] == key(name), f"{name} is not first in the queue"
    world = cycle.attempt(replace(world, queued=tuple(k for k in world.queued if k != key(name))), key(name))
    return tried(world, name, bound)


def tried(world: World, name: str, bound: bool) -> World:
    pod = world.state.pod_keyed(key(name))
    assert bool(pod.node_name) is bound, world.log[-1]
    if not bound:
        assert key(name) in world.parked_keys()
    return world


def gated(world: World, name: str) -> None:
    assert key(name) in world.parked_keys()
    assert held_back(world, key(name)) == WAITING_POD
    assert key(name) in activate(world, [key(name)]).parked_keys(), "activated, it stays in the unschedulable pool"


def running(world: World, name: str) -> bool:
    return is_running(world.executor, key(name), listed_in(world.state))


def complete(world: World, name: str) -> World:
    """The pod's held calls go through (upstream's goroutine runs them once the test lets it)."""
    world = cycle.complete_preemption(world, key(name))
    assert not running(world, name)
    return world


def delivered(world: World) -> World:
    """The scheduler hears of the victims the calls deleted: they leave its cache, which wakes the
    parked pods their removal may help. Upstream's informer delivers these events after the test
    has let every held call go, so they come here, after the completions, not between them."""
    for pod in [p for p in world.state.pods if p.terminating]:
        world = wake(remove(world, pod.key), assigned_pod_gone(pod))
    return world


def victims_left(world: World) -> list[str]:
    return sorted(p.name for p in world.state.pods if p.name.startswith("victim-"))


ALL = ("1.34", "1.35", "1.37")


@pytest.mark.parametrize("release", ALL)
def test_async_preemption_basic(release):
    """"basic: async preemption happens expectedly": two 2-cpu victims fill the node; the preemptor
    (4 cpus, priority 100) preempts both, and while their calls are held it is gated and its
    preemption runs; once they complete it is scheduled."""
    world = create(start(release, 2, 2), cpu("preemptor", 4, 100))
    world = schedule(world, "preemptor", bound=False)
    gated(world, "preemptor")
    assert running(world, "preemptor") and victims_left(world) == ["victim-0", "victim-1"]
    world = delivered(complete(world, "preemptor"))
    assert victims_left(world) == []
    schedule(world, "preemptor", bound=True)


@pytest.mark.parametrize("release", ["1.35", "1.37"])
def test_async_preemption_one_victim_gated_until_its_call(release):
    """"basic async preemption with 1 victim, preemptor gated until preemption API call finishes":
    one 1-cpu victim; the preemptor (4 cpus, priority 100) preempts it, stays gated while that one
    call is held (its last victim written down, not yet deleted), and is scheduled once it goes
    through."""
    world = create(start(release, 1, 1), cpu("preemptor", 4, 100))
    world = schedule(world, "preemptor", bound=False)
    gated(world, "preemptor")
    assert running(world, "preemptor")
    world = delivered(complete(world, "preemptor"))
    schedule(world, "preemptor", bound=True)


@pytest.mark.parametrize("release", ALL)
def test_async_preemption_lower_priority_does_not_take_the_place(release):
    """"Lower priority Pod doesn't take over the place for higher priority Pod that is running the
    preemption": while the high preemptor's (4 cpus, priority 100) calls for the two 2-cpu victims
    are held, a mid pod (4 cpus, priority 50) is tried and stays pending (the node is promised to
    the high pod); once the calls complete the high pod comes first and is scheduled, and the mid
    pod, tried again, stays pending."""
    world = create(start(release, 2, 2), cpu("preemptor-high-priority", 4, 100))
    world = schedule(world, "preemptor-high-priority", bound=False)
    gated(world, "preemptor-high-priority")
    assert running(world, "preemptor-high-priority")
    world = create(world, cpu("pod-mid-priority", 4, 50))
    world = schedule(world, "pod-mid-priority", bound=False)
    assert not world.state.pod_keyed(key("pod-mid-priority")).nominated_node_name
    world = delivered(complete(world, "preemptor-high-priority"))
    world = schedule(world, "preemptor-high-priority", bound=True)
    schedule(world, "pod-mid-priority", bound=False)


@pytest.mark.parametrize("release", ALL)
def test_async_preemption_higher_priority_takes_the_place(release):
    """"Higher priority Pod takes over the place for lower priority Pod that is running the
    preemption": four 1-cpu victims; the high preemptor (4 cpus, priority 100) preempts all four and
    its calls are held; a super-high pod (4 cpus, priority 200) then preempts the same four, taking
    the high pod's nomination away, and is gated while its own calls are held. Its calls complete
    first, then the high pod's (which find the victims gone); the super-high pod is scheduled and
    the high pod, tried again, stays pending."""
    world = create(start(release, 4, 1), cpu("preemptor-high-priority", 4, 100))
    world = schedule(world, "preemptor-high-priority", bound=False)
    gated(world, "preemptor-high-priority")
    assert running(world, "preemptor-high-priority")
    world = create(world, cpu("preemptor-super-high-priority", 4, 200))
    world = schedule(world, "preemptor-super-high-priority", bound=False)
    assert running(world, "preemptor-super-high-priority")
    gated(world, "preemptor-super-high-priority")
    assert world.state.pod_keyed(key("preemptor-super-high-priority")).nominated_node_name == "node"
    assert not world.state.pod_keyed(key("preemptor-high-priority")).nominated_node_name
    world = complete(world, "preemptor-super-high-priority")
    world = delivered(complete(world, "preemptor-high-priority"))
    assert victims_left(world) == []
    world = schedule(world, "preemptor-super-high-priority", bound=True)
    schedule(world, "preemptor-high-priority", bound=False)


@pytest.mark.parametrize("release", ALL)
def test_async_preemption_lower_priority_shares_a_big_node(release):
    """"Lower priority Pod can select the same place where the higher priority Pod is preempting if
    the node is big enough": four 1-cpu victims; the high preemptor (2 cpus, priority 100) preempts
    two of them, its calls held; a mid pod (2 cpus, priority 50), with the node promised to the
    high pod, preempts too on the same node and is gated while its calls are held. The mid pod's
    calls complete, then the high pod's; the high pod comes first and is scheduled, then the mid
    pod is."""
    world = create(start(release, 4, 1), cpu("preemptor-high-priority", 2, 100))
    world = schedule(world, "preemptor-high-priority", bound=False)
    gated(world, "preemptor-high-priority")
    assert running(world, "preemptor-high-priority")
    world = create(world, cpu("preemptor-mid-priority", 2, 50))
    world = schedule(world, "preemptor-mid-priority", bound=False)
    gated(world, "preemptor-mid-priority")
    assert running(world, "preemptor-mid-priority")
    assert world.state.pod_keyed(key("preemptor-mid-priority")).nominated_node_name == "node"
    world = complete(world, "preemptor-mid-priority")
    world = delivered(complete(world, "preemptor-high-priority"))
    world = schedule(world, "preemptor-high-priority", bound=True)
    schedule(world, "preemptor-mid-priority", bound=True)
