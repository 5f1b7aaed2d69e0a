"""A lone preemptor's victims when pods belong to pod groups (release.LONE_PREEMPTOR_GROUP_VICTIMS).

From 1.37 with GenericWorkload on, DefaultPreemption's dry run gathers victims with
getCrossNodesVictims (framework/preemption/preemption.go GetVictimsOnNode; types.go): a pod that
names a pod group counts at its group's priority (util.go GetPodPriority), and the running pods of
a group in disruption mode all are one victim on every node they run on, preempted whole
(defaultpreemption SelectVictimsOnNode returns all its pods; executor.go deletes them). 1.36, or
the gate off: each pod on the node is a victim of its own, at its own priority.
"""

from datetime import timedelta

import pytest

from reference.objects import LabelSelector, PodAffinityTerm, PodGroup
from reference.preemption import predict
from reference.release import LONE_PREEMPTOR_GROUP_VICTIMS, has

from tests.builders import T0, node, pdb, pod, state

GATE = (("", "GenericWorkload", True),)
POOL_A = (("pool", "a"),)


def batch(disruption="all", priority=10) -> PodGroup:
    return PodGroup("batch", priority=priority, disruption=disruption)


def whole_group_on_two_nodes(*extra, preemptor=None, **kw):
    """n1 and n2 full, each with a pod of the all-mode group 'batch'; the preemptor may use n1 only."""
    nodes = [node("n1", labels=POOL_A), node("n2", labels=(("pool", "b"),))]
    pods = [pod("v0", 10, on="n1", group="batch", **kw), pod("v1", 10, on="n2", group="batch", **kw), *extra,
            preemptor or pod("p", 100, node_selector=POOL_A)]
    return nodes, pods


def test_the_switch_needs_1_37_and_the_gate_on_in_the_scheduler():
    assert has("1.37", LONE_PREEMPTOR_GROUP_VICTIMS, GATE) and has("1.38", LONE_PREEMPTOR_GROUP_VICTIMS, GATE)
    assert not has("1.37", LONE_PREEMPTOR_GROUP_VICTIMS), "GenericWorkload is off by default in 1.37"
    assert not has("1.36", LONE_PREEMPTOR_GROUP_VICTIMS, GATE), "1.36 has no such code, whatever the gate"
    assert not has("1.37", LONE_PREEMPTOR_GROUP_VICTIMS, (("kube-apiserver", "GenericWorkload", True),))
    assert has("1.37", LONE_PREEMPTOR_GROUP_VICTIMS, (("kube-scheduler", "GenericWorkload", True),))


def test_a_lone_preemptor_takes_a_whole_group_disrupted_as_a_whole_on_every_node():
    nodes, pods = whole_group_on_two_nodes()
    s = state(nodes=nodes, pods=pods, groups=[batch()])
    pr = predict(s, "default/p", "upstream", T0, "1.37", GATE)
    assert pr.outcome == "preempt" and pr.nodes == {"n1"}
    assert pr.victims == {"n1": ("default/v0", "default/v1")}
    # 1.36, and 1.37 with the gate off: only the pod in the way.
    for release, gates in (("1.36", GATE), ("1.37", ())):
        assert predict(s, "default/p", "upstream", T0, release, gates).victims == {"n1": ("default/v0",)}


def test_a_lone_preemptor_weighs_a_group_member_at_the_groups_priority():
    # Its own priority is below the preemptor's, its group's above it.
    s = state(nodes=[node("n1")], pods=[pod("member", 1, on="n1", group="batch"), pod("p", 100)],
              groups=[batch("single", priority=1000)])
    pr = predict(s, "default/p", "upstream", T0, "1.37", GATE)
    assert pr.outcome == "unschedulable" and not pr.possible_victims
    assert predict(s, "default/p", "upstream", T0, "1.36", GATE).victims == {"n1": ("default/member",)}


def test_a_group_members_pods_elsewhere_go_out_of_a_filter_that_looks_past_the_node():
    # The preemptor repels app=batch across the zone: only the whole group's going makes room.
    term = PodAffinityTerm(LabelSelector((("app", "batch"),)), "topology.kubernetes.io/zone")
    zone = (("topology.kubernetes.io/zone", "z"),)
    nodes = [node("n1", 2, labels=zone + POOL_A), node("n2", labels=zone)]
    pods = [pod("v0", 10, on="n1", group="batch", labels={"app": "batch"}),
            pod("v1", 10, on="n2", group="batch", labels={"app": "batch"}),
            pod("p", 100, node_selector=POOL_A, pod_anti_affinity=(term,))]
    s = state(nodes=nodes, pods=pods, groups=[batch()])
    assert predict(s, "default/p", "upstream", T0, "1.37", GATE).victims == {"n1": ("default/v0", "default/v1")}
    old = predict(s, "default/p", "upstream", T0, "1.36", GATE)
    assert old.outcome == "unschedulable" and "does not fit" in old.per_node[0].reason


def test_node_choice_counts_a_group_victims_pods_on_other_nodes():
    # n1's victim is the group (two pods, one on n3), n2's a lone pod of the same priority:
    # the smaller sum of victim priorities picks n2. Pod by pod the two nodes tie.
    nodes = [node("n1", labels=POOL_A), node("n2", labels=POOL_A), node("n3")]
    pods = [pod("v0", 10, on="n1", group="batch"), pod("v1", 10, on="n3", group="batch"), pod("w", 10, on="n2"),
            pod("p", 100, node_selector=POOL_A)]
    s = state(nodes=nodes, pods=pods, groups=[batch()])
    pr = predict(s, "default/p", "upstream", T0, "1.37", GATE)
    assert pr.nodes == {"n2"} and pr.reasons == ("node chosen by smallest sum of victim priorities",)
    assert predict(s, "default/p", "upstream", T0, "1.36", GATE).nodes == {"n1", "n2"}


@pytest.mark.parametrize("disruption", ["single", "all"])
def test_a_groups_pod_is_spared_before_an_older_lone_pod_of_equal_priority(disruption):
    # MoreImportantVictim: priority, then a group before a pod, then size, then the earlier start.
    s = state(nodes=[node("n1", 2)], pods=[pod("lone", 10, on="n1", age=7200), pod("g", 10, on="n1", group="batch"),
                                           pod("p", 100)], groups=[batch(disruption)])
    assert predict(s, "default/p", "upstream", T0, "1.37", GATE).victims == {"n1": ("default/lone",)}
    assert predict(s, "default/p", "upstream", T0, "1.36", GATE).victims == {"n1": ("default/g",)}


def test_a_group_victims_pdb_violations_count_each_of_its_pods():
    nodes, pods = whole_group_on_two_nodes(labels={"app": "x"})
    s = state(nodes=nodes, pods=pods, groups=[batch()], pdbs=[pdb("b", {"app": "x"}, 0)])
    assert predict(s, "default/p", "upstream", T0, "1.37", GATE).per_node[0].pdb_violations == 2
    assert predict(s, "default/p", "upstream", T0, "1.36", GATE).per_node[0].pdb_violations == 1


def test_a_terminating_pod_on_the_nominated_node_counts_at_its_groups_priority():
    # Terminating by preemption, its own priority below the preemptor's but its group's above:
    # from 1.37 (isPreemptionAllowed on NewPodVictim) it does not hold the preemptor back.
    leaving = pod("t", 1, on="n1", group="batch", deletion_timestamp=T0 + timedelta(seconds=30),
                  disruption_target_by_preemption=True)
    s = state(nodes=[node("n1")], pods=[leaving, pod("p", 100, nominated_node_name="n1")],
              groups=[batch("single", priority=1000)])
    assert "terminating pod" in predict(s, "default/p", "upstream", T0, "1.36", GATE).reasons[0]
    assert predict(s, "default/p", "upstream", T0, "1.37", GATE).reasons == ("no node can make room by preemption",)
