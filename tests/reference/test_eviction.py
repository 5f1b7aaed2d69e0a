"""The kubelet's node-pressure eviction ranking (reference.eviction), one test per rule, each naming
the kubelet function it comes from (k8s.io/kubernetes v1.35.8 pkg/kubelet/eviction)."""

from __future__ import annotations

from reference.eviction import PodUsage, critical, eviction_order, message_prefix, next_victims, ranking

MI = 2**20


def test_a_pod_over_its_requests_goes_before_any_pod_within_them_whatever_the_priorities():
    """helpers.go rankDiskPressureFunc / rankMemoryPressure: exceedDiskRequests (exceedMemoryRequests)
    is the first comparator; the seed's pair: a lower-priority pod within its requests stays, a
    higher-priority pod over its requests goes."""
    pods = [PodUsage("low-within", priority=10, request=300 * MI, usage=200 * MI),
            PodUsage("high-over", priority=1000, request=100 * MI, usage=200 * MI)]
    assert next_victims(pods, "ephemeral-storage") == {"high-over"}
    assert next_victims(pods, "memory") == {"high-over"}


def test_among_pods_over_their_requests_the_lower_priority_goes_first():
    """helpers.go priority: the second comparator; lower spec.priority is evicted first."""
    pods = [PodUsage("a", priority=1000, request=0, usage=500 * MI), PodUsage("b", priority=10, request=0, usage=100 * MI)]
    assert next_victims(pods, "ephemeral-storage") == {"b"}


def test_at_equal_priority_the_pod_furthest_over_its_requests_goes_first():
    """helpers.go disk / memory comparators: usage minus request, the larger first. A difference,
    not a ratio: 300Mi used of 100Mi requested (200Mi over) goes before 150Mi used of none
    (150Mi over, an unbounded ratio)."""
    pods = [PodUsage("ratio", priority=5, request=0, usage=150 * MI),
            PodUsage("difference", priority=5, request=100 * MI, usage=300 * MI)]
    assert next_victims(pods, "ephemeral-storage") == {"difference"}


def test_a_pod_within_its_requests_is_still_evicted_when_nothing_else_is_left():
    """Nothing filters pods within their requests out; they are only ranked last (the seed's
    'not evicted' holds only while a pod over its requests remains)."""
    pods = [PodUsage("within", priority=1, request=300 * MI, usage=100 * MI)]
    assert next_victims(pods, "memory") == {"within"}


def test_critical_pods_are_ranked_but_skipped_for_the_next_pod():
    """eviction_manager.go evictPod refuses kubelettypes.IsCriticalPod (static, mirror, or
    priority >= 2000000000); synchronize moves on to the next ranked pod in the same pass."""
    node_critical = PodUsage("system", priority=2_000_001_000, request=0, usage=900 * MI)
    static = PodUsage("static", priority=0, request=0, usage=800 * MI, static=True)
    user = PodUsage("user", priority=1_000_000_000, request=0, usage=10 * MI)
    assert critical(node_critical) and critical(static) and not critical(user)
    assert ranking([node_critical, static, user], "memory")[0] == ["static"]
    assert next_victims([node_critical, static, user], "memory") == {"user"}
    assert next_victims([node_critical, static], "memory") == frozenset()


def test_pids_rank_by_priority_then_process_count_without_a_requests_step():
    """helpers.go rankPIDPressure: priority, then process count; PIDs cannot be requested."""
    pods = [PodUsage("busy-high", priority=100, usage=5000), PodUsage("quiet-low", priority=1, usage=10)]
    assert next_victims(pods, "pids") == {"quiet-low"}


def test_a_pod_without_stats_goes_first():
    """helpers.go every usage comparator: a pod missing from the stats summary is ranked first."""
    pods = [PodUsage("new", priority=1000, request=500 * MI, usage=None), PodUsage("hog", priority=1, usage=900 * MI)]
    assert next_victims(pods, "ephemeral-storage") == {"new"}


def test_exact_ties_are_a_set_and_end_the_predictable_order():
    """multiSorter uses sort.Sort over pods listed from a map: an exact tie's order is chance."""
    pods = [PodUsage("x", priority=5, usage=100 * MI), PodUsage("y", priority=5, usage=100 * MI),
            PodUsage("z", priority=9, usage=100 * MI)]
    assert ranking(pods, "memory") == [["x", "y"], ["z"]]
    assert eviction_order(pods, "memory", 3) == [{"x", "y"}]


def test_one_pod_a_pass_in_ranking_order():
    """eviction_manager.go synchronize: at most one pod per pass ('we kill at most a single pod')."""
    pods = [PodUsage("a", priority=1, usage=300 * MI), PodUsage("b", priority=2, usage=300 * MI),
            PodUsage("c", priority=3, request=500 * MI, usage=100 * MI)]
    assert eviction_order(pods, "ephemeral-storage", 3) == [{"a"}, {"b"}, {"c"}]


def test_the_message_names_the_starved_resource():
    """helpers.go evictionMessage: 'The node was low on resource: <resource>. '"""
    assert message_prefix("ephemeral-storage") == "The node was low on resource: ephemeral-storage."
    assert message_prefix("memory") == "The node was low on resource: memory."


def test_pod_level_requests_replace_the_containers_for_the_ranking():
    """GetResourceRequestQuantity (pkg/api/v1/resource/helpers.go:33-62, 1.34-1.37): a pod with any
    supported pod-level resource is measured by its pod-level requests only."""
    from reference.eviction import request_for_ranking
    assert request_for_ranking({"memory": 250}, {"memory": 300}, "memory") == 300
    assert request_for_ranking({"ephemeral-storage": 100}, {"cpu": 1000}, "ephemeral-storage") == 0
    assert request_for_ranking({"memory": 250}, {}, "memory") == 250
