"""When a pod group is tried again: after a cycle that bound only some of its pods, and while the
victims of its preemption terminate (reference.cycle.attempt_group, reference.podgroup.attempt).

Read from kubernetes v1.37.2 ``pkg/scheduler/schedule_one_podgroup.go`` (submitPodGroupAlgorithmResult),
``pkg/scheduler/backend/queue/scheduling_queue.go`` (AddAttemptedPodGroupIfNeeded),
``pkg/scheduler/framework/preemption/executor.go`` (prepareCandidateAsync, isRunningPreemption) and
``framework/plugins/defaultpreemption/default_preemption.go`` (PreEnqueue); for 1.36, the same
files at the v1alpha2 API (docs/research/workload-aware-preemption.md).
"""

from dataclasses import replace
from datetime import timedelta

import pytest

from reference import cycle
from reference import scheduler as sched
from reference.objects import PodGroup
from reference.release import GROUP_REST_RETRIED_AT_ONCE, has

from tests.builders import T0, node, pod, state

GATES = tuple(("", g, True) for g in ("GenericWorkload", "GangScheduling", "WorkloadAwarePreemption"))
TRAIN = "default/train"


def _world(release, group, pods, slots):
    s = state(nodes=[node("n1", slots=slots)], pods=pods, groups=[group])
    return sched.start(s, "upstream", T0, release, GATES)


@pytest.mark.parametrize("min_count", [2, 0], ids=["gang", "basic"])
@pytest.mark.parametrize("release", ["1.36", "1.37", "1.38"])
def test_the_pods_a_successful_group_cycle_left_unplaced_are_tried_again_at_once_from_1_37(release, min_count):
    """scheduling_queue.go AddAttemptedPodGroupIfNeeded (1.37, kubernetes#139613): after a cycle that
    succeeds for some of the group's pods, the others go straight back to the active queue with
    their timestamp, so the next cycle preempts for them at once. 1.36 requeues each pod of the
    group on its own (FailureHandler): parked, the rejecting NodeResourcesFit is not woken by the
    binding of its group's other pods, and it preempts only at the flush."""
    group = PodGroup("train", priority=100, min_count=min_count)
    pods = [pod("a", 100, on="n1", group="train"), pod("b", 100, on="n1", group="train"),
            pod("low", 10, on="n1", termination_grace_seconds=30),
            pod("h1", 100, group="train", queued_at=T0), pod("h2", 100, group="train", queued_at=T0)]
    w = sched.run_queue(_world(release, group, pods, slots=4), {"default/h1", "default/h2"})
    h2 = w.state.pod_keyed("default/h2")
    assert w.state.pod_keyed("default/h1").node_name == "n1" and not h2.node_name
    if has(release, GROUP_REST_RETRIED_AT_ONCE):
        assert release != "1.36"
        assert w.state.pod_keyed("default/low").terminating and "default/low" in w.preempted
        assert h2.nominated_node_name == "n1" and h2.queued_at == T0, "its place in the queue kept"
        w = sched.advance(w, flush=False)
        assert w.state.pod_keyed("default/h2").node_name == "n1" and w.now == T0 + timedelta(seconds=30)
        return
    assert "default/h2" in w.parked_keys() and not w.preempted and not h2.nominated_node_name
    w = sched.advance(w, T0 + timedelta(minutes=4, seconds=59))
    assert not w.preempted, "nothing wakes it before the flush"
    w = sched.advance(w, T0 + timedelta(minutes=5))
    assert "default/low" in w.preempted and w.state.pod_keyed("default/h2").nominated_node_name == ""


@pytest.mark.parametrize("release", ["1.36", "1.37"])
def test_a_pod_group_is_tried_again_while_its_victims_terminate(release):
    """executor.go isRunningPreemption (1.36 and 1.37): DefaultPreemption's PreEnqueue holds a
    preempting group back only until the delete of its last victim has been issued, which the
    model's API calls do within the cycle. Tried again while the victim terminates, the group
    preempts nobody new: 1.37 finds the preemption ongoing on its nominated node and keeps its
    nomination (podgrouppreemption.go isOngoingPreemption); 1.36 chooses the same victim, already
    terminating, and sends it no second delete (prepareCandidateAsync)."""
    group = PodGroup("train", priority=100)
    pods = [pod("low", 10, on="n1", termination_grace_seconds=60), pod("h", 100, group="train", queued_at=T0)]
    w = sched.run_queue(_world(release, group, pods, slots=1), {"default/h"})
    low = w.state.pod_keyed("default/low")
    assert low.terminating and "default/low" in w.preempted
    nominated = w.state.pod_keyed("default/h").nominated_node_name
    assert nominated == ("n1" if release == "1.37" else "")  # release.GROUP_NOMINATED_WHERE_PLACED
    again = cycle.attempt(replace(w, now=T0 + timedelta(seconds=10)), "default/h")
    tried = again.predictions[len(w.predictions):]
    assert [p.pod for p in tried] == ["default/h"], "tried, not held back"
    assert not any("waits for the preemption" in line for line in again.log)
    assert again.state.pod_keyed("default/low") == low, "no second delete, no new deletion time"
    assert again.preempted == w.preempted and again.state.pod_keyed("default/h").nominated_node_name == nominated
    assert tried[0].outcome == ("unschedulable" if release == "1.37" else "preempt")


def test_validate_pod_group_checks_priority_then_policy_pod_by_pod():
    """1.37 validatePodGroup: with the policy gate on each pod must have the group's policy; off,
    the first pod's. A priority mismatch is reported before a policy one."""
    from reference.podgroup import invalid

    g = PodGroup("g", "default", priority=100, preemption_policy="Never")
    lower, never = pod("a", 100), pod("b", 100, never=True)
    assert invalid(g, [never], policy_from_group=True) == ""
    assert "as the pod group's preemption policy, got PreemptLowerPriority and Never" in invalid(g, [lower], True)
    assert invalid(g, [lower, lower], policy_from_group=False) == ""
    assert invalid(g, [never, lower], policy_from_group=False).endswith("got PreemptLowerPriority and Never")
    assert "same priority" in invalid(g, [pod("c", 7, never=True), lower], policy_from_group=False)
