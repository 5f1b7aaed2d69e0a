"""Peer cases: kubernetes test/e2e_node/eviction_test.go PriorityMemoryEvictionOrdering,
PriorityMemoryEvictionOrderingPodLevelResources, PriorityLocalStorageEvictionOrdering and PriorityPidEvictionOrdering ("should eventually evict all of
the correct pods") at v1.34.4, v1.35.8
and v1.37.2, through the model's kubelet ranking (reference.eviction).

The e2e tests starve a real node; the catalogue does the same on kind, at the kit's default
release (scenarios peer-e2e-node-memory-eviction-ordering, peer-e2e-node-disk-eviction-ordering and
peer-e2e-node-pid-eviction-ordering).
The cases of every release are also checked here, on the ranking alone: the ranking code is the
same at all three (reference/eviction.py says where it was read). Upstream's pods keep consuming until their
expected order has been seen, so usages here are any amounts of the right kind: only whether a pod
is over its request, its priority and, for PIDs, its process count decide.
"""

from __future__ import annotations

import pytest

from reference.eviction import PodUsage, eviction_order, ranking, request_for_ranking

MI = 1 << 20
# The class both tests create: highPriority in eviction_test.go.
HIGH = 999_999_999
RELEASES = ("1.34", "1.35", "1.37")


@pytest.mark.parametrize("release", RELEASES)
def test_priority_memory_eviction_ordering(release):
    # A hog with no class and no requests, the same hog in the high class, and a Guaranteed pod
    # holding less than its 300Mi request and limit.
    pods = [
        PodUsage("memory-hog-pod", 0, request=0, usage=600 * MI),
        PodUsage("high-priority-memory-hog-pod", HIGH, request=0, usage=600 * MI),
        PodUsage("guaranteed-pod", 0, request=300 * MI, usage=200 * MI),
    ]
    # The low hog first, then the high hog: while pressure lasts, one a pass.
    assert eviction_order(pods, "memory", 2) == [frozenset({"memory-hog-pod"}),
                                                  frozenset({"high-priority-memory-hog-pod"})]
    # The Guaranteed pod is ranked after both although its priority is the lowest: once the hogs
    # are gone the pressure is over, and it is never evicted.
    assert ranking(pods, "memory")[-1] == ["guaranteed-pod"]


@pytest.mark.parametrize("release", RELEASES)
def test_priority_pid_eviction_ordering(release):
    # Two fork bombs of 5000 processes, one with no class and one in the high class, and an
    # innocent pod in the high class that sleeps in a shell loop.
    pods = [
        PodUsage("fork-bomb-container-with-low-priority", 0, usage=5000),
        PodUsage("innocent-pod", HIGH, usage=2),
        PodUsage("fork-bomb-container-with-high-priority", HIGH, usage=5000),
    ]
    assert eviction_order(pods, "pids", 2) == [frozenset({"fork-bomb-container-with-low-priority"}),
                                               frozenset({"fork-bomb-container-with-high-priority"})]
    # Priority first: the innocent pod, with almost no processes, still ranks after the low bomb,
    # and after the high bomb only by its process count.
    assert ranking(pods, "pids") == [["fork-bomb-container-with-low-priority"],
                                     ["fork-bomb-container-with-high-priority"], ["innocent-pod"]]


@pytest.mark.parametrize("release", RELEASES)
def test_priority_local_storage_eviction_ordering(release):
    # Two writers with no storage request, one with no class and one in the high class, and a pod of
    # priority 0 writing 297MB, just under its 300Mi request.
    pods = [
        PodUsage("best-effort-disk", 0, request=0, usage=10_000 * MI),
        PodUsage("high-priority-disk", HIGH, request=0, usage=10_000 * MI),
        PodUsage("guaranteed-disk", 0, request=300 * MI, usage=297_000_000),
    ]
    assert eviction_order(pods, "ephemeral-storage", 2) == [frozenset({"best-effort-disk"}),
                                                             frozenset({"high-priority-disk"})]
    assert ranking(pods, "ephemeral-storage")[-1] == ["guaranteed-disk"]


@pytest.mark.parametrize("release", RELEASES)
def test_priority_memory_eviction_ordering_pod_level_resources(release):
    # As the memory case, but the Guaranteed pod sets 300Mi (request and limit) at pod level and its
    # one container 250Mi; the container allocates 80% of its own limit. The ranking measures the
    # pod against its pod-level request (request_for_ranking), the container's set aside.
    request = request_for_ranking({"memory": 250 * MI}, {"memory": 300 * MI}, "memory")
    assert request == 300 * MI
    pods = [
        PodUsage("memory-hog-pod", 0, request=0, usage=600 * MI),
        PodUsage("high-priority-memory-hog-pod", HIGH, request=0, usage=600 * MI),
        PodUsage("guaranteed-pod", 0, request=request, usage=250 * MI * 8 // 10),
    ]
    assert eviction_order(pods, "memory", 2) == [frozenset({"memory-hog-pod"}),
                                                  frozenset({"high-priority-memory-hog-pod"})]
    assert ranking(pods, "memory")[-1] == ["guaranteed-pod"]
