"""semantics.md section 3: preemption, for both scheduler builds."""

from datetime import timedelta

import pytest

from reference.objects import LabelSelector, PodAffinityTerm, Taint
from reference.preemption import predict

from tests.builders import T0, node, pc, pdb, pod, state

BOTH = pytest.mark.parametrize("build", ["upstream", "plugins"])


def one_node_full(preemptor, *victims, slots=1):
    return state(nodes=[node("n1", slots)], pods=[*victims, preemptor])


@BOTH
def test_preemption_only_runs_when_no_node_fits(build):
    s = state(nodes=[node("n1"), node("n2")], pods=[pod("low", 1, on="n1"), pod("p", 100)])
    pr = predict(s, "default/p", build, T0)
    assert pr.outcome == "schedule" and pr.nodes == {"n2"} and not pr.victims


@BOTH
def test_a_never_pod_never_preempts(build):
    s = one_node_full(pod("p", 100, never=True), pod("low", 1, on="n1"))
    pr = predict(s, "default/p", build, T0)
    assert pr.outcome == "unschedulable" and "preemptionPolicy=Never" in pr.reasons[0]


@BOTH
def test_equal_priority_is_never_preempted(build):
    pr = predict(one_node_full(pod("p", 5), pod("same", 5, on="n1")), "default/p", build, T0)
    assert pr.outcome == "unschedulable"
    assert pr.per_node[0].reason in ("No preemption victims found for incoming pod",
                                     "No victims found on node n1 for preemptor pod p")


def test_nominated_pod_waits_for_a_victim_terminating_by_preemption_upstream():
    victim = pod("v", 1, on="n1", deletion_timestamp=T0 + timedelta(seconds=30), disruption_target_by_preemption=True)
    s = one_node_full(pod("p", 100, nominated_node_name="n1"), victim)
    assert "terminating pod" in predict(s, "default/p", "upstream", T0).reasons[0]


def test_upstream_counts_only_pods_terminating_by_preemption_the_plugin_counts_any():
    deleted_by_user = pod("v", 1, on="n1", deletion_timestamp=T0 + timedelta(seconds=30))
    s = state(nodes=[node("n1", 2)], pods=[deleted_by_user, pod("other", 1, on="n1"),
                                           pod("p", 100, nominated_node_name="n1")])
    assert predict(s, "default/p", "upstream", T0).outcome == "preempt"
    pr = predict(s, "default/p", "plugins", T0)
    assert pr.outcome == "unschedulable" and "terminating pod" in pr.reasons[0]


@BOTH
def test_unresolvable_nodes_are_never_candidates(build):
    s = state(
        nodes=[node("tainted", taints=(Taint("k", "NoSchedule"),)), node("other", labels=(("disk", "ssd"),))],
        pods=[pod("a", 1, on="tainted"), pod("b", 1, on="other"), pod("p", 100, node_selector=(("disk", "ssd"),))],
    )
    pr = predict(s, "default/p", build, T0)
    assert pr.nodes == {"other"} and pr.victims == {"other": ("default/b",)}
    tainted = next(v for v in pr.per_node if v.node == "tainted")
    assert not tainted.candidate and "UnschedulableAndUnresolvable" in tainted.reason


@BOTH
def test_node_is_out_when_preemptor_does_not_fit_even_without_lower_pods(build):
    s = state(nodes=[node("n1", 2)], pods=[pod("high", 200, on="n1"), pod("low", 1, on="n1"), pod("p", 100, slots=2)])
    pr = predict(s, "default/p", build, T0)
    assert pr.outcome == "unschedulable" and "does not fit" in pr.per_node[0].reason


@BOTH
def test_reprieve_spares_the_most_important_pods_that_can_stay(build):
    s = state(nodes=[node("n1", 3)], pods=[
        pod("lowest", 1, on="n1"), pod("mid", 5, on="n1"), pod("top", 9, on="n1"), pod("p", 100, slots=1)])
    pr = predict(s, "default/p", build, T0)
    assert pr.victims == {"n1": ("default/lowest",)}
    assert dict(pr.per_node[0].spared).keys() == {"default/top", "default/mid"}


@BOTH
def test_reprieve_tries_pdb_violating_pods_first(build):
    s = state(nodes=[node("n1", 2)], pods=[
        pod("guarded", 1, on="n1", age=10, labels={"app": "g"}),
        pod("plain", 5, on="n1", age=100), pod("p", 100)], pdbs=[pdb("b", {"app": "g"}, 0)])
    pr = predict(s, "default/p", build, T0)
    # Without the PDB the lower-priority 'guarded' would go; the budget spares it.
    assert pr.victims == {"n1": ("default/plain",)}


@BOTH
def test_pdb_selector_namespace_labels_and_disrupted_pods(build):
    def victims_with(budget, labels={"app": "g"}, ns="default"):
        v = pod("v", 1, on="n1", labels=labels, namespace=ns)
        other = pod("o", 2, on="n2")
        s = state(nodes=[node("n1"), node("n2")], pods=[v, other, pod("p", 100)], pdbs=[budget])
        return predict(s, "default/p", build, T0).nodes

    assert victims_with(pdb("b", {"app": "g"}, 0)) == {"n2"}  # protected: the other node wins
    assert victims_with(pdb("b", {"app": "g"}, 1)) == {"n1"}  # budget left
    assert victims_with(pdb("b", {"app": "g"}, 0, ns="elsewhere")) == {"n1"}  # other namespace
    assert victims_with(pdb("b", {}, 0)) == {"n1"}  # an empty selector protects nothing
    assert victims_with(pdb("b", {"app": "g"}, 0), labels={}) == {"n1"}  # no labels, never protected
    assert victims_with(pdb("b", {"app": "g"}, 0, disrupted=["v"])) == {"n1"}  # already counted


@BOTH
def test_pdb_is_best_effort_a_violating_node_is_chosen_when_nothing_else(build):
    s = one_node_full(pod("p", 100), pod("v", 1, on="n1", labels={"app": "g"}))
    s = state(s.priority_classes, s.nodes, s.pods, [pdb("b", {"app": "g"}, 0)])
    pr = predict(s, "default/p", build, T0)
    assert pr.victims == {"n1": ("default/v",)} and pr.per_node[0].pdb_violations == 1


def two_nodes(v1, v2):
    return state(nodes=[node("n1", 2), node("n2", 2)], pods=[*v1, *v2, pod("p", 100, slots=2)])


@BOTH
def test_node_choice_lowest_highest_victim_priority(build):
    s = two_nodes([pod("a", 10, on="n1"), pod("b", 1, on="n1")], [pod("c", 5, on="n2"), pod("d", 5, on="n2")])
    assert predict(s, "default/p", build, T0).nodes == {"n2"}


@BOTH
def test_node_choice_smallest_sum_of_priorities(build):
    s = two_nodes([pod("a", 5, on="n1"), pod("b", 5, on="n1")], [pod("c", 5, on="n2"), pod("d", 1, on="n2")])
    assert predict(s, "default/p", build, T0).nodes == {"n2"}


@BOTH
def test_node_choice_fewest_victims(build):
    # Each victim adds 2^31 to its node's sum, so with the lowest possible
    # priority on n2 both sums tie and the count decides.
    s = two_nodes([pod("a", 5, on="n1", slots=2)], [pod("c", 5, on="n2"), pod("d", -2**31, on="n2")])
    assert predict(s, "default/p", build, T0).nodes == {"n1"}


@BOTH
def test_node_choice_latest_start_of_highest_priority_victims(build):
    s = two_nodes([pod("a", 5, on="n1", slots=2, age=100)], [pod("c", 5, on="n2", slots=2, age=10)])
    assert predict(s, "default/p", build, T0).nodes == {"n2"}


@BOTH
def test_node_choice_full_tie_is_the_set_of_tied_nodes(build):
    s = two_nodes([pod("a", 5, on="n1", slots=2, age=10)], [pod("c", 5, on="n2", slots=2, age=10)])
    pr = predict(s, "default/p", build, T0)
    assert pr.nodes == {"n1", "n2"} and pr.possible_victims == {"default/a", "default/c"}
    assert pr.certain_victims == frozenset()


def test_an_error_on_one_node_puts_only_that_node_out():
    s = state(classes=[pc("low", 1)], nodes=[node("n1"), node("n2")],
              pods=[pod("orphan", 1, cls="deleted-class", on="n1"), pod("fine", 1, cls="low", on="n2"),
                    pod("p", 100)])
    pr = predict(s, "default/p", "plugins", T0)
    assert pr.nodes == {"n2"}
    assert "not found" in next(v for v in pr.per_node if v.node == "n1").reason
    assert predict(s, "default/p", "upstream", T0).nodes == {"n1", "n2"}  # upstream never reads classes


@BOTH
def test_lower_priority_pods_nominated_to_the_chosen_node_lose_their_nomination(build):
    s = state(nodes=[node("n1", 1)], pods=[pod("v", 1, on="n1"), pod("waiting", 50, nominated_node_name="n1"),
                                           pod("p", 100)])
    pr = predict(s, "default/p", build, T0)
    assert pr.nominations_cleared == {"n1": ("default/waiting",)}


@BOTH
def test_no_candidate_at_all_clears_the_nomination(build):
    s = one_node_full(pod("p", 100, nominated_node_name="n1"), pod("v", 200, on="n1"))
    pr = predict(s, "default/p", build, T0)
    assert pr.outcome == "unschedulable" and pr.nominated_node == ""


@BOTH
def test_no_preemption_for_affinity_to_lower_priority_pods(build):
    term = PodAffinityTerm(LabelSelector((("app", "db"),)), "kubernetes.io/hostname")
    s = state(nodes=[node("n1", 1)], pods=[pod("db", 1, on="n1", labels={"app": "db"}),
                                           pod("p", 100, pod_affinity=(term,))])
    # The pod fits only where db runs, and db is the pod it would have to evict.
    pr = predict(s, "default/p", build, T0)
    assert pr.outcome == "unschedulable"


@BOTH
def test_no_cross_node_preemption_for_zone_anti_affinity(build):
    term = PodAffinityTerm(LabelSelector((("app", "x"),)), "topology.kubernetes.io/zone")
    zone = (("topology.kubernetes.io/zone", "a"),)
    # p may only go to n1 (n2 is tainted); q, in the same zone on n2, blocks it.
    s = state(nodes=[node("n1", 1, labels=zone), node("n2", 1, labels=zone, taints=(Taint("k", "NoSchedule"),))],
              pods=[pod("q", 1, on="n2", labels={"app": "x"}), pod("filler", 1, on="n1"),
                    pod("p", 100, pod_anti_affinity=(term,))])
    pr = predict(s, "default/p", build, T0)
    assert pr.outcome == "unschedulable" and not pr.possible_victims
    n1 = next(v for v in pr.per_node if v.node == "n1")
    assert not n1.candidate


@BOTH
def test_failure_message_shape(build):
    pr = predict(one_node_full(pod("p", 5), pod("v", 9, on="n1")), "default/p", build, T0)
    assert pr.message.startswith("0/1 nodes are available: 1 Insufficient example.com/slot. preemption: 0/1 nodes are available: ")


def test_plugin_spares_tolerating_victims_where_upstream_preempts():
    s = state(classes=[pc("low", 1, mpp=1000, ts=-1)], nodes=[node("n1")],
              pods=[pod("v", 1, cls="low", on="n1"), pod("p", 100)])
    assert predict(s, "default/p", "upstream", T0).victims == {"n1": ("default/v",)}
    pr = predict(s, "default/p", "plugins", T0)
    assert pr.outcome == "unschedulable" and pr.per_node[0].exempted


def test_an_exempted_pod_does_not_count_as_removable_in_the_dry_run():
    s = state(classes=[pc("low", 1, mpp=1000, ts=-1), pc("plain", 1)], nodes=[node("n1", 2)],
              pods=[pod("keep", 1, cls="low", on="n1"), pod("go", 1, cls="plain", on="n1"), pod("p", 100, slots=2)])
    pr = predict(s, "default/p", "plugins", T0)
    assert pr.outcome == "unschedulable" and "does not fit" in pr.per_node[0].reason


def test_a_window_ending_toleration_gives_a_retry_time():
    s = state(classes=[pc("low", 1, mpp=1000, ts=60)], nodes=[node("n1")],
              pods=[pod("v", 1, cls="low", on="n1", age=10), pod("p", 100)])
    pr = predict(s, "default/p", "plugins", T0)
    assert pr.retry_not_before == T0 + timedelta(seconds=50)


def test_with_more_than_100_candidates_the_prediction_is_the_set_a_sample_could_pick():
    # 150 candidates: the dry run may stop after 100. A node can win only in a
    # sample of 100 where the other 99 are no better: true for the best 51.
    nodes = [node(f"n{i:03}") for i in range(150)]
    pods = [pod(f"v{i:03}", i + 1, on=f"n{i:03}") for i in range(150)] + [pod("p", 1000)]
    pr = predict(state(nodes=nodes, pods=pods), "default/p", "upstream", T0)
    assert pr.nodes == {f"n{i:03}" for i in range(51)}
    assert "random offset" in pr.reasons[0]


def test_up_to_100_candidates_every_node_is_evaluated():
    nodes = [node(f"n{i:03}") for i in range(100)]
    pods = [pod(f"v{i:03}", i + 1, on=f"n{i:03}") for i in range(100)] + [pod("p", 1000)]
    assert predict(state(nodes=nodes, pods=pods), "default/p", "upstream", T0).nodes == {"n000"}
