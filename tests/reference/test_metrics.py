"""reference.metrics: the preemption metrics a cycle adds, derived from the model's own outcomes
(upstream 1.37.2 executor.go observeVictims and prepareCandidateAsync, podgrouppreemption.go
selectVictimsOnDomain's counts)."""

from __future__ import annotations

from reference import metrics, podgroup
from reference.preemption import predict

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, budget, cluster, group, node, pod


def test_a_group_preempting_a_whole_group_counts_one_disruption_and_its_violations():
    whole = group("lowg", 0, "all")
    pg = group("pg", 1000)
    pods = [pod("a", 0, on="n1", group="lowg", labels={"app": "foo"}), pod("b", 0, on="n1", group="lowg"),
            pod("p", 1000, group="pg")]
    state = cluster([node("n1", pods=2)], pods, [budget("pdb", {"app": "foo"}, 0)], [whole, pg])
    ga = podgroup.attempt(state, pg, "1.37", GENERIC_WORKLOAD, T0)
    assert ga.outcome == "preempt" and sorted(ga.victims) == ["default/a", "default/b"]
    seen = metrics.group_cycle(state, pg, ga, "1.37", T0)
    assert seen.workload_preemption_victims == (2,) and seen.preemption_victims == ()
    assert seen.workload_disruptions == ((metrics.POD_GROUP, 1),)
    assert seen.pdb_violations == ((metrics.POD_GROUP, 1),)


def test_async_preemption_of_victims_already_terminating_sends_nothing_and_times_nothing():
    going = pod("v", 0, on="n1", deletion_timestamp=T0)
    state = cluster([node("n1", pods=1)], [going, pod("p", 1000)])
    pr = predict(state, "default/p", "upstream", T0, "1.37")
    assert pr.outcome == "preempt"
    assert metrics.pod_cycle(state, pr, "n1").execution_durations == ()
    assert metrics.pod_cycle(state, pr, "n1", asynchronous=False).execution_durations == (("pod", "success"),)
    assert metrics.pod_cycle(state, pr, "n1").preemption_victims == (1,)


def test_a_pod_that_fits_or_finds_no_node_makes_no_preemption_attempt():
    state = cluster([node("n1", pods=1)], [pod("p", 1000)])
    assert metrics.pod_cycle(state, predict(state, "default/p", "upstream", T0, "1.37")) == metrics.Observations()
    empty = cluster([], [pod("p", 1000)])
    assert metrics.pod_cycle(empty, predict(empty, "default/p", "upstream", T0, "1.37")) == metrics.Observations()
