"""Peer cases: kubernetes pkg/scheduler/framework/preemption/preemption_test.go at v1.34.4, v1.35.8
and v1.37.2 (the Evaluator's own steps; 1.37.2 moved TestPrepareCandidate to executor_test.go),
through the model's dry run (reference.preemption.dry_run) and scheduling cycle
(reference.cycle.attempt). Each test names its upstream function and case, and is the ``test:`` of
that case, at each release it is parametrized by, in peers/upstream-cases.yaml; the facts are the
upstream rows', written anew. Builders and conventions: upstream_tables.py.

These rows hand the Evaluator a test-only preemption plugin or a ready-made candidate instead of
DefaultPreemption's victim search. The tests give the model the same stand-in (``given_victims``,
``given_candidate``) for that call, so what is checked is the step the row is about: the dry run
over every node, and what the preemption then sends for the candidate's victims.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

import reference.cycle as cycle
import reference.podgroup as podgroup
import reference.preemption as preemption
from reference import filter as flt
from reference.podgroup import GroupAttempt
from reference.preemption import NodeVerdict, Prediction
from reference.victim import units_by_node
from reference.world import World

from tests.builders import T0
from tests.peers.upstream_tables import GENERIC_WORKLOAD, UPSTREAM, big_node, cluster, group, groups_on, names, pod

# Upstream's priorities in preemption_test.go.
P_MID, P_HIGH = 100, 1000
RELEASES = ("1.34", "1.35", "1.37")


def given_victims(monkeypatch, violations: int) -> None:
    """The row's test plugin in place of the victim search on each node (its SelectVictimsOnNode):
    the node's first pod is the one victim, with the row's number of PDB violations."""
    def select(state, p, node, plugin, now, status, units=None):
        first = state.pods_on(node.name)[0]
        return NodeVerdict(node.name, status, candidate=True, victims=(first.key,), pdb_violations=violations,
                           reason="the row's test plugin")
    monkeypatch.setattr(preemption, "select_victims_on_node", select)


# -- TestDryRunPreemption ---------------------------------------------------------------------------------

DRY_RUN = [
    # no pdb violation: two nodes of the very large size, a mid pod (no requests) on each; the high
    # preemptor gets both nodes as candidates, each with its pod as the victim and no violation
    pytest.param(0, {"node1": (["p1"], 0), "node2": (["p2"], 0)}, id="no-pdb-violation"),
    # pdb violation on each node: the same, the plugin counting one violation per node
    pytest.param(1, {"node1": (["p1"], 1), "node2": (["p2"], 1)}, id="pdb-violation-on-each-node"),
]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("violations, candidates", DRY_RUN)
def test_dry_run_preemption(monkeypatch, release, violations, candidates):
    """TestDryRunPreemption (preemption_test.go): with the row's test plugin choosing each node's
    victims, the model's dry run over every node (offset 0, all nodes wanted, GenericWorkload off)
    makes each node a candidate with those victims and the plugin's PDB violations."""
    given_victims(monkeypatch, violations)
    state = cluster([big_node("node1"), big_node("node2")],
                    [pod("p", P_HIGH), pod("p1", P_MID, on="node1"), pod("p2", P_MID, on="node2")])
    p = state.pod_keyed("default/p")
    assert not groups_on(release, ())
    statuses = {n.name: flt.Status(flt.UNSCHEDULABLE) for n in state.nodes}
    units = units_by_node(state, p.priority, release, T0) if groups_on(release, ()) else None
    found = {v.node: (names(v.victims), v.pdb_violations)
             for v in preemption.dry_run(state, p, UPSTREAM, T0, statuses, units) if v.candidate}
    assert found == candidates


# -- TestPrepareCandidate (1.35.8) -------------------------------------------------------------------------

def given_candidate(monkeypatch, node_name: str, victims: tuple[str, ...]) -> None:
    """The row's ready-made candidate: the attempt preempts ``victims`` on ``node_name``."""
    def predict(state, key, build, now, release, gates):
        return Prediction(key, "preempt", frozenset({node_name}), victims={node_name: victims},
                          reasons=("the row's candidate",))
    monkeypatch.setattr(cycle, "predict", predict)


GONE = T0 - timedelta(seconds=100)
PREPARE = [
    # no victims: the candidate names no node and no victim; victim1 runs on node1 and nothing is sent
    *(pytest.param(r, {}, False, False, id=f"no-victims-{r}") for r in RELEASES),
    # one victim without condition: it is patched (DisruptionTarget) and deleted
    *(pytest.param(r, {}, True, True, id=f"one-victim-without-condition-{r}") for r in RELEASES),
    # one victim with same condition: it already has DisruptionTarget (by the scheduler); it is deleted
    *(pytest.param(r, {"disruption_target_by_preemption": True}, True, True, id=f"one-victim-with-same-condition-{r}")
      for r in RELEASES),
    # one victim, but victim is already deleted: it is no longer in the cluster; nothing fails
    *(pytest.param(r, None, True, False, id=f"one-victim-already-deleted-{r}") for r in ("1.35", "1.37")),
    # one victim, but victim is already being deleted: it has had a deletion timestamp for 100 s (a
    # finalizer keeps it); nothing is sent for it, no DisruptionTarget patch, no delete
    *(pytest.param(r, {"deletion_timestamp": GONE}, True, False, id=f"one-victim-already-being-deleted-{r}")
      for r in ("1.35", "1.37")),
]


@pytest.mark.parametrize("release, victim_state, in_candidate, sent", PREPARE)
def test_prepare_candidate(monkeypatch, release, victim_state, in_candidate, sent):
    """TestPrepareCandidate (preemption_test.go; executor_test.go from 1.37): the candidate's one
    victim (victim1, mid priority, on node1) for the high preemptor, with async preemption on or off.
    ``sent``: the victim is marked (DisruptionTarget, by preemption) and deleted; otherwise nothing is
    sent for it and it stays as it was. ``victim_state`` None: the victim is gone from the cluster
    already; ``in_candidate`` False: the candidate has no victims (and names no node)."""
    victim = pod("victim1", P_MID, on="node1", **(victim_state or {}))
    pods = [pod("preemptor", P_HIGH)] + ([victim] if victim_state is not None else [])
    world = World(cluster([big_node("node1")], pods), T0, "upstream", release=release)
    given_candidate(monkeypatch, "node1" if in_candidate else "", (victim.key,) if in_candidate else ())
    after = cycle.attempt(world, "default/preemptor")
    assert_sent(after, victim, victim_state, sent)


def assert_sent(after: World, victim, victim_state, sent: bool) -> None:
    assert after.preempted == (frozenset({victim.key}) if sent else frozenset())
    now = after.state.pod_keyed(victim.key)
    if victim_state is None:
        assert now is None
    elif sent:
        assert now.terminating and now.disruption_target_by_preemption
    else:
        assert now == victim


def test_prepare_candidate_for_a_pod_group(monkeypatch):
    """TestPrepareCandidate (executor_test.go, 1.37), "podgroup preemptor, one victim without
    condition": the preemptor is pod group pg1 (its pod preemptor pending, GenericWorkload on), whose
    preemption chose victim1 on node1; victim1 is marked and deleted as for a pod."""
    victim = pod("victim1", P_MID, on="node1")
    state = cluster([big_node("node1")], [pod("preemptor", P_HIGH, group="pg1"), victim], groups=[group("pg1", P_HIGH)])
    world = World(state, T0, "upstream", release="1.37", gates=GENERIC_WORKLOAD)

    def attempt(state, group, release, gates, now, choices=None):
        return GroupAttempt(group.key, "preempt", placement={"default/preemptor": "node1"}, victims=(victim.key,),
                            nominations={"default/preemptor": "node1"}, reasons=("the row's candidate",))
    monkeypatch.setattr(podgroup, "attempt", attempt)
    after = cycle.attempt(world, "default/preemptor")
    assert_sent(after, victim, {}, True)
