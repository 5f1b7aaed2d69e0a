"""Peer cases: kubernetes v1.37.2 pkg/scheduler/framework/preemption/podgrouppreemption_test.go
(TestPodGroupEvaluator_SelectVictimsOnDomain and TestPodGroupEvaluator_Preempt), through the
model's pod-group preemption (reference.podgroup.preempt, which weighs victims with
reference.victim, and reference.podgroup.attempt around it) at release "1.37". Each
test names its upstream function and case, and is the ``test:`` of that case (release 1.37.2) in
peers/upstream-cases.yaml; the facts (nodes, capacities, pods, priorities, start times, pod
groups, budgets, expected victims, group disruptions and PDB violations) are the upstream rows',
written anew.

How the rows' test scaffolding maps onto the model:

* Upstream's profile has one test filter that fits pods by a "size" (a pod label, 1 when unset)
  against a per-node capacity. Here a size is a request of that many millicores and bytes (the
  shared builders' sizes) and a capacity is the node's allocatable cpu and memory, so
  NodeResourcesFit decides as that filter does.
* Upstream hands the evaluator a scheduling function that places the group's pods in turn,
  round robin over the nodes (each pod starting at the node after the one the last pod took), and
  succeeds when at least minCount (1 unless the row's gang says otherwise) are placed. The model
  places the group itself (reference.podgroup.place); where several nodes fit, the round robin's
  choice is given to it as ``choices`` (``round_robin``), as a scenario fixes a tie.
* The preemptor pods name the preemptor's pod group (upstream gives the evaluator the group and
  its pods directly); they are pending. The evaluator's own policy check is not part of the call
  upstream tests (selectVictimsOnDomain), so the rows' preemption policies are facts the check
  does not read.
* The counts upstream checks beside the victims are taken from the model's units: a pod group
  disruption is a victim unit of a pod that names a pod group (reference.victim.Unit.grouped),
  and PDB violations are the violating pods of the units that stay victims, counted as the
  model's pdb_verdicts counts them over every eligible unit, most important first.
"""

from __future__ import annotations

import pytest

import reference.podgroup as podgroup
from reference.podgroup import NO_VICTIMS, Placement, attempt, preempt
from reference.victim import Unit, pdb_verdicts, victim_units

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, at, budget, cluster, group, names, node, pod

RELEASE = "1.37"
LOW, MID, HIGH = 0, 100, 1000  # upstream's priorities in the preemption package's tests
WHOLE = "all"
FOO = {"app": "foo"}
PG = "preemptor-pg"


def vpod(name: str, prio: int, on: str, *, size: int = 1, **kw):
    """A running pod of the row, of its size."""
    return pod(name, prio, on=on, size=size, **kw)


def members(*specs, prio: int = HIGH):
    """The preemptor's pods, in the order upstream lists them: names, or (name, extra fields)."""
    out = []
    for spec in specs:
        name, kw = (spec, {}) if isinstance(spec, str) else spec
        out.append(pod(name, prio, group=PG, size=1, **kw))
    return out


def capacity_nodes(caps: list[tuple[str, int]]):
    return [node(n, cpu=c, memory=c) for n, c in caps]


def round_robin(state, caps: list[tuple[str, int]], pods) -> dict[str, str]:
    """Upstream's scheduling function of these rows, on ``state`` (every potential victim gone):
    each pod on the first node, from the one after the last pod's, with room for its size."""
    used = {n: sum(dict(p.requests).get("cpu", 0) for p in state.pods_on(n)) for n, _ in caps}
    out, i = {}, 0
    for p in pods:
        size = dict(p.requests).get("cpu", 0)
        for step in range(len(caps)):
            j = (i + step) % len(caps)
            n, cap = caps[j]
            if used[n] + size <= cap:
                out[p.key] = n
                used[n] += size
                i = (j + 1) % len(caps)
                break
    return out


def select_victims_on_domain(caps, pods, groups, preemptor_group, preemptor_pods, pdbs=(), sched_caps=None):
    """The model's pod-group preemption over every node: (victim names, pod-group disruptions, PDB
    violations), or the reason it found none. ``sched_caps``: the capacities upstream's scheduling
    function reads, where the row gives it others than its filter reads."""
    state = cluster(capacity_nodes(caps), [*pods, *preemptor_pods], pdbs, [*groups, preemptor_group])
    eligible = victim_units(state, preemptor_group.priority, RELEASE, T0)
    gone = state.without_pods({k for u in eligible for k in u.keys})
    choices = round_robin(gone, sched_caps or caps, preemptor_pods)
    victims, room, why = preempt(state, preemptor_group, list(preemptor_pods), RELEASE, T0, choices)
    if room is None:
        return why
    chosen = set(victims)
    units = [u for u in eligible if set(u.keys) <= chosen]
    violations = sum(n for u, n in pdb_verdicts(sorted(eligible, key=Unit.importance), state.pdbs, state.pods,
                                                lambda u: [state.pod_keyed(k) for k in u.keys])
                     if u in units)
    return names(victims), sum(1 for u in units if u.grouped), violations


def gang(prio: int, min_count: int = 0, disruption: str = "single", policy: str | None = None):
    """The preemptor's pod group: a gang of ``min_count``, or (0) the basic policy, which upstream's
    scheduling function treats as minCount 1."""
    g = group(PG, prio, disruption).with_(min_count=min_count)
    return g if policy is None else g.with_(preemption_policy=policy)


def caps(*sizes: int, prefix: str = "node") -> list[tuple[str, int]]:
    return [(f"{prefix}{i}", c) for i, c in enumerate(sizes, 1)]


def sec(n: int):
    """Upstream's metav1.Unix(n, 0)."""
    return at(n * 1_000_000)


DT = dict(deletion_timestamp=T0, disruption_target_by_preemption=True)  # terminating by preemption
NEVER = "Never"

SELECT_VICTIMS_ON_DOMAIN = [
    pytest.param(
        # Priority: mix of no groups and pod groups
        caps(2), [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node1", group="pg1")], [group("pg1", LOW)],
        gang(HIGH), members("p"), [], (["p1"], 0, 0), id="mix-lone-and-group-pods"),
    pytest.param(
        # Priority: StartTime of pods from same group with disruption mode single
        caps(2), [vpod("p1", LOW, "node1", group="pg1", start=sec(1)), vpod("p2", LOW, "node1", group="pg1", start=sec(0))],
        [group("pg1", LOW)], gang(HIGH), members("p"), [], (["p1"], 1, 0), id="single-mode-later-start-goes"),
    pytest.param(
        # Pod group with disruption mode group not reprieved
        caps(1, 1), [vpod("p1", LOW, "node1", group="pg1"), vpod("p2", LOW, "node2", group="pg1")],
        [group("pg1", LOW, WHOLE)], gang(HIGH), members("p"), [], (["p1", "p2"], 1, 0), id="whole-group-not-reprieved"),
    pytest.param(
        # Complex Mixed: Shared, different, and no groups
        caps(2, 1, 2, 2, 2),
        [vpod("p1", LOW, "node1", group="pg1", start=sec(2)), vpod("p2", LOW, "node2", group="pg1", start=sec(1)),
         vpod("p3", LOW, "node3", group="pg2", start=sec(0)), vpod("p4", MID, "node4"),
         vpod("p5", HIGH, "node5", group="pg3", start=sec(0))],
        [group("pg1", LOW), group("pg2", LOW), group("pg3", HIGH)], gang(HIGH), members("p-1", "p-2", "p-3"), [],
        (["p2"], 1, 0), id="complex-mixed"),
    pytest.param(
        # PDB: Mixed groups (pg1 names no existing pod group)
        caps(2), [vpod("victim-pdb", LOW, "node1", labels=FOO, group="pg1"), vpod("victim-no-pdb", LOW, "node1", group="pg1")],
        [], gang(HIGH), members("p"), [budget("pdb", FOO, 0)], (["victim-no-pdb"], 1, 0), id="pdb-mixed-groups"),
    pytest.param(
        # PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption
        caps(1, 1, 1), [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2", group="pg1"), vpod("p3", LOW, "node3", group="pg2")],
        [], gang(HIGH), members("p-1"), [], (["p1"], 0, 0), id="preempt-lower-priority-policy"),
    pytest.param(
        # PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, ignoring member pod
        # preemption policy
        caps(1, 1, 1), [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2", group="pg1"), vpod("p3", LOW, "node3", group="pg2")],
        [], gang(HIGH, policy="PreemptLowerPriority"), members(("p-1", dict(preemption_policy=NEVER))), [],
        (["p1"], 0, 0), id="preempt-lower-priority-policy-member-never"),
    pytest.param(
        # Preemptor group is eligible if terminating pods are on non-nominated nodes
        caps(1, 1), [vpod("victim", LOW, "node2", **DT), vpod("other-victim", LOW, "node1")], [],
        gang(HIGH), members("p1", ("p2", dict(nominated_node_name="node1"))), [],
        (["other-victim", "victim"], 0, 0), id="terminating-on-non-nominated-node"),
    pytest.param(
        # Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher priority
        caps(2, 1), [vpod("victim", LOW, "node1", group="victim-pg", **DT), vpod("other-victim", LOW, "node1")],
        [group("victim-pg", HIGH, WHOLE)], gang(MID), members("p1", ("p2", dict(nominated_node_name="node1")), prio=MID),
        [], (["other-victim"], 0, 0), id="terminating-pod-of-higher-group"),
    pytest.param(
        # Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher priority
        # with nil DisruptionMode (the row's group is in single mode)
        caps(2, 1), [vpod("victim", LOW, "node1", group="victim-pg", **DT), vpod("other-victim", LOW, "node1")],
        [group("victim-pg", HIGH)], gang(MID), members("p1", ("p2", dict(nominated_node_name="node1")), prio=MID),
        [], (["other-victim"], 0, 0), id="terminating-pod-of-higher-group-single"),
    pytest.param(
        # Preempt single lower priority pod
        caps(1), [vpod("p1", LOW, "node1")], [], gang(HIGH), members("p"), [], (["p1"], 0, 0), id="single-lower-pod"),
    pytest.param(
        # Priority: Prefer lower priority victim
        caps(2), [vpod("p1", LOW, "node1"), vpod("p2", MID, "node1"), vpod("p3", HIGH, "node1")], [],
        gang(HIGH), members("p"), [], (["p1", "p2"], 0, 0), id="prefer-lower-priority"),
    pytest.param(
        # Efficiency: Preempt minimum number of victims (no start times: each counts as started when it is
        # weighed, so the first listed is the earliest)
        caps(3), [vpod(f"p{i}", LOW, "node1") for i in (1, 2, 3, 4)], [], gang(HIGH), members("p"), [],
        (["p3", "p4"], 0, 0), id="minimum-victims"),
    pytest.param(
        # PDB: Prefer non-violating victim
        caps(2), [vpod("victim-pdb", LOW, "node1", labels=FOO), vpod("victim-no-pdb", LOW, "node1")], [],
        gang(HIGH), members("p"), [budget("pdb", FOO, 0)], (["victim-no-pdb"], 0, 0), id="pdb-prefer-non-violating"),
    pytest.param(
        # PDB: Prefer removing non-violating victim over lower priority violating victim
        caps(2), [vpod("victim-pdb", LOW, "node1", labels=FOO), vpod("victim-no-pdb", MID, "node1")], [],
        gang(HIGH), members("p"), [budget("pdb", FOO, 0)], (["victim-no-pdb"], 0, 0),
        id="pdb-non-violating-over-lower-violating"),
    pytest.param(
        # PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims
        caps(1, 1, 1), [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2", group="pg1"), vpod("p3", LOW, "node3", group="pg2")],
        [group("pg1", LOW), group("pg2", LOW)], gang(HIGH), members("p-1"), [], (["p1"], 0, 0),
        id="preempt-lower-priority-policy-group-victims"),
    pytest.param(
        # PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims,
        # ignoring member pod preemption policy
        caps(1, 1, 1), [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2", group="pg1"), vpod("p3", LOW, "node3", group="pg2")],
        [group("pg1", LOW), group("pg2", LOW)], gang(HIGH), members(("p-1", dict(preemption_policy=NEVER))), [],
        (["p1"], 0, 0), id="preempt-lower-priority-policy-group-victims-member-never"),
    pytest.param(
        # PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible
        caps(2), [vpod("p1", LOW, "node1", labels=FOO), vpod("p2", MID, "node1", labels=FOO)], [],
        gang(HIGH), members("p"), [budget("pdb", FOO, 0)], (["p1"], 0, 1), id="pdb-all-violating-lower-goes"),
    pytest.param(
        # PodGroup: Prefer single pod over podGroup for preemption candidate
        caps(3), [vpod("p1", LOW, "node1"), vpod("g1-1", LOW, "node1", group="pg1"), vpod("g1-2", LOW, "node1", group="pg1")],
        [group("pg1", LOW, WHOLE)], gang(HIGH), members("p"), [], (["p1"], 0, 0), id="prefer-lone-pod-over-group"),
    pytest.param(
        # PodGroup: Preempt group as a whole on single node
        caps(3), [vpod("g1-1", LOW, "node1", group="pg1"), vpod("g1-2", LOW, "node1", group="pg1"), vpod("p1", MID, "node1")],
        [group("pg1", LOW, WHOLE)], gang(HIGH), members("p"), [], (["g1-1", "g1-2"], 1, 0), id="whole-group-on-one-node"),
    pytest.param(
        # PDB: Unit violation if any member violates
        caps(3), [vpod("g1-1", LOW, "node1", labels=FOO, group="pg1"), vpod("g1-2", LOW, "node1", group="pg1"),
                  vpod("p1", LOW, "node1")],
        [group("pg1", LOW, WHOLE)], gang(HIGH), members("p"), [budget("pdb", FOO, 0)], (["p1"], 0, 0),
        id="pdb-unit-violates-if-any-pod-does"),
    pytest.param(
        # Failure: Cannot preempt the victim with higher priority
        caps(100), [vpod("p1", HIGH, "node1")], [], gang(MID), members("p", prio=MID), [], NO_VICTIMS,
        id="failure-higher-priority"),
    pytest.param(
        # Failure: Cannot preempt the victim with equal priority
        caps(100), [vpod("p1", MID, "node1")], [], gang(MID), members("p", prio=MID), [], NO_VICTIMS,
        id="failure-equal-priority"),
    pytest.param(
        # Failure: Cannot preempt if node is empty
        caps(100), [], [], gang(MID), members("p", prio=MID), [], NO_VICTIMS, id="failure-empty-node"),
    pytest.param(
        # Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group
        caps(1, 1), [vpod("p1", HIGH, "node1", group="pg1"), vpod("p2", HIGH, "node2", group="pg1")],
        [group("pg1", MID, WHOLE)], gang(HIGH), members("p"), [], (["p1", "p2"], 1, 0), id="group-below-its-pods"),
    pytest.param(
        # Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group
        caps(1, 1), [vpod("p1", LOW, "node1", group="pg1"), vpod("p2", LOW, "node2", group="pg1")],
        [group("pg1", MID, WHOLE)], gang(MID), members("p", prio=MID), [], NO_VICTIMS, id="group-above-its-pods"),
]

_HIGHER_HELD = [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2"), vpod("p3", HIGH, "node3"), vpod("p4", HIGH, "node4")]
_VICTIM_GROUP = [vpod("v1", MID, "node1", group="victim-pg"), vpod("v2", MID, "node2", group="victim-pg"),
                 vpod("v3", LOW, "node3")]
_TWO_GROUPS = [vpod("v1", MID, "node1", group="victim-pg"), vpod("v2", MID, "node2", group="victim-pg"),
               vpod("v3", HIGH, "node3", group="victim-pg2"), vpod("v4", HIGH, "node4", group="victim-pg2")]
_TWO_GROUPS_G = [group("victim-pg", MID, WHOLE).with_(min_count=2), group("victim-pg2", HIGH, WHOLE).with_(min_count=2)]
ABC = ("p-a", "p-b", "p-c")

for _policy, _min in (("Gang", 1), ("Basic", 0)):
    SELECT_VICTIMS_ON_DOMAIN += [
        pytest.param(
            # <policy> scheduling: schedule as many pods as possible without preempting higher priority pods
            caps(1, 1, 1, 1), _HIGHER_HELD, [], gang(HIGH, _min), members(*ABC), [], (["p1", "p2"], 0, 0),
            id=f"{_policy.lower()}-as-many-as-possible"),
        pytest.param(
            # <policy> scheduling: do not reprieve victim pod group of lower priority
            caps(1, 1, 1), _VICTIM_GROUP, [group("victim-pg", MID, WHOLE).with_(min_count=1)], gang(HIGH, _min),
            members(*ABC), [], (["v1", "v2", "v3"], 1, 0), id=f"{_policy.lower()}-lower-group-not-reprieved"),
        pytest.param(
            # <policy> scheduling: preempt a pod group victim but do not schedule full pod group
            caps(1, 1, 1, 1), _TWO_GROUPS, _TWO_GROUPS_G, gang(HIGH, _min, WHOLE), members(*ABC), [],
            (["v1", "v2"], 1, 0), id=f"{_policy.lower()}-group-victim-preemptor-partly-placed"),
    ]


@pytest.mark.parametrize("caps_, pods, groups, preemptor, preemptor_pods, pdbs, want", SELECT_VICTIMS_ON_DOMAIN)
def test_select_victims_on_domain(caps_, pods, groups, preemptor, preemptor_pods, pdbs, want):
    """TestPodGroupEvaluator_SelectVictimsOnDomain: the victims (names), the pod-group disruptions among
    them and the PDB violations; or, where no pod is below the preemptor, no victim at all (upstream:
    UnschedulableAndUnresolvable)."""
    assert select_victims_on_domain(caps_, pods, groups, preemptor, preemptor_pods, pdbs) == want


def test_select_victims_on_domain_whole_group_across_nodes():
    """TestPodGroupEvaluator_SelectVictimsOnDomain, "PodGroup: Preempt group as a whole": the row's filter
    reads node1's capacity as 1 and finds none for node2 (0), while its scheduling function reads
    node1 as 1 and node2 as 2; the preemptor goes to node1 either way, and pg1 (whole) goes entirely."""
    got = select_victims_on_domain(
        [("node1", 1), ("node2", 0)], [vpod("p1", LOW, "node1", group="pg1"), vpod("p2", LOW, "node2", group="pg1")],
        [group("pg1", LOW, WHOLE)], gang(HIGH), members("p"), sched_caps=[("node1", 1), ("node2", 2)])
    assert got == (["p1", "p2"], 1, 0)


# -- TestPodGroupEvaluator_Preempt ---------------------------------------------------------------------------

PREEMPT = [
    pytest.param(
        # Preemptor group returns success with current nominating infos if member has nominated node with
        # terminating pods
        [vpod("victim", LOW, "node1", **DT)], [], gang(HIGH), None, id="ongoing-member-nominated-node"),
    pytest.param(
        # Preemptor group returns success with current nominating infos if nominated node has terminating pod
        # belonging to a pod group of lower priority
        [vpod("victim", HIGH, "node1", group="victim-pg", **DT)], [group("victim-pg", LOW, WHOLE)], gang(HIGH), None,
        id="ongoing-pod-of-lower-group"),
    pytest.param(
        # Preemptor group returns success with current nominating infos if nominated node has terminating pod
        # belonging to a pod group of lower priority with DisruptionModePod
        [vpod("victim", HIGH, "node1", group="victim-pg", **DT)], [group("victim-pg", LOW)], gang(HIGH), None,
        id="ongoing-pod-of-lower-group-single"),
    pytest.param(
        # PodGroup preemptor with PreemptNever policy does not perform preemption
        [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2", group="pg1"), vpod("p3", LOW, "node3", group="pg2")], [],
        gang(HIGH, policy=NEVER), "not eligible due to preemptionPolicy=Never.", id="never-policy"),
    pytest.param(
        # PodGroup preemptor with PreemptNever preemption policy does not perform preemption with PodGroup victims
        [vpod("p1", LOW, "node1"), vpod("p2", LOW, "node2", group="pg1"), vpod("p3", LOW, "node3", group="pg2")],
        [group("pg1", LOW), group("pg2", LOW)], gang(HIGH, policy=NEVER), "not eligible due to preemptionPolicy=Never.",
        id="never-policy-group-victims"),
]


@pytest.mark.parametrize("pods, groups, preemptor, never", PREEMPT)
def test_preempt(monkeypatch, pods, groups, preemptor, never):
    """TestPodGroupEvaluator_Preempt (GenericWorkload and PodGroupPreemptionPolicy on): the preemptor's
    pods are p1 and p2 (nominated to node1), or p-1 and p-2 for the policy rows, over nodes without
    capacities. Upstream calls the preemption as after a failed cycle, with a scheduling function that
    fails the test if called: here the model's placement places nothing for the cycle and fails the
    test if the preemption places again. Where a pod below the group's priority terminates by
    preemption on node1, the group preempts nobody and keeps its nominations (p1 none, p2 node1);
    with the Never policy it is not eligible at all."""
    calls = []

    def no_placement(state, group_pods, choices=None):
        assert not calls, "the preemption must not run the scheduling function"
        calls.append(1)
        return Placement({}, {}, {p.key: "does not fit" for p in group_pods}, frozenset({"NodeResourcesFit"}))

    monkeypatch.setattr(podgroup, "place", no_placement)
    # Upstream calls the evaluator directly, past the cycle's validatePodGroup, which would refuse the
    # Never rows' group (its pods are PreemptLowerPriority): so does the model here.
    monkeypatch.setattr(podgroup, "invalid", lambda *a: "")
    nodes = [node(f"node{i}") for i in (1, 2, 3)] if never else [node("node1")]
    mine = members("p-1", "p-2") if never else members("p1", ("p2", dict(nominated_node_name="node1")))
    state = cluster(nodes, [*pods, *mine], (), [*groups, preemptor])
    gates = GENERIC_WORKLOAD + (("kube-scheduler", "PodGroupPreemptionPolicy", True),)
    ga = attempt(state, preemptor, RELEASE, gates, T0)
    assert (ga.outcome, ga.victims) == ("unschedulable", ())
    if never:
        assert ga.reasons[0].endswith(never)
        return
    assert ga.nominations == {"default/p1": "", "default/p2": "node1"}
    assert ga.reasons[0].endswith("ongoing preemption on nominated nodes")
