"""The history rules (harness.run.pods.invariants) on recorded histories built by hand."""

from datetime import datetime, timezone

from kubernetes import client

from harness.run.pods import invariants
from harness.run.pods.history import PodLog
from harness.run.pods.result import Result
from harness.run.pods.verdict import cause, verdict
from harness.run.results import Cause, Verdict

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
MARK = ("DisruptionTarget", "True", "PreemptionByScheduler")


def pod(name, uid, priority, node="n1", deleting=False, marked=False, rv=1):
    conds = [client.V1PodCondition(type=t, status=s, reason=r) for t, s, r in ([MARK] if marked else [])]
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, uid=uid, resource_version=str(rv),
                                                     deletion_timestamp=T0 if deleting else None),
                        spec=client.V1PodSpec(containers=[], node_name=node or None, priority=priority),
                        status=client.V1PodStatus(conditions=conds))


def preempted(victim, preemptor_uid, preemptor=None):
    related = client.V1ObjectReference(name=preemptor, uid=preemptor_uid) if preemptor else None
    return client.CoreV1Event(metadata=client.V1ObjectMeta(name=f"{victim}.1"), reason="Preempted",
                              message=f"Preempted by pod {preemptor_uid} on node n1",
                              involved_object=client.V1ObjectReference(name=victim), related=related)


def history(*, victim_priority=100, mark=True, related=True, gap=False):
    log = PodLog()
    log.add("ADDED", pod("victim", "u-v", victim_priority))
    log.add("ADDED", pod("preemptor", "u-p", 1000, node=""))
    if mark:
        log.add("MODIFIED", pod("victim", "u-v", victim_priority, marked=True, rv=2))
    log.add("MODIFIED", pod("victim", "u-v", victim_priority, marked=mark, deleting=True, rv=3))
    log.add_event("ADDED", preempted("victim", "u-p", "preemptor" if related else None))
    log.add("DELETED", pod("victim", "u-v", victim_priority, marked=mark, deleting=True, rv=4))
    h = log.history()
    return invariants.History(h.versions, h.preempted_events, complete=not gap)


def rules(h):
    return [v.rule for v in invariants.check(h)]


def test_a_marked_lower_victim_keeps_every_rule():
    assert rules(history()) == []


def test_a_victim_of_equal_priority_breaks_the_priority_rule_whether_the_event_names_the_preemptor_or_its_uid():
    assert rules(history(victim_priority=1000)) == ["victim-of-lower-priority"]
    assert rules(history(victim_priority=2000, related=False)) == ["victim-of-lower-priority"]


def test_a_victim_deleted_unmarked_breaks_the_order_rule_unless_the_history_has_a_gap():
    assert rules(history(mark=False)) == ["marked-before-deleted"]
    assert rules(history(mark=False, gap=True)) == [], "a relist may have lost the marked version"


def test_a_pod_deleted_by_the_kit_is_no_victim():
    log = PodLog()
    log.add("ADDED", pod("p", "u", 1))
    log.add("MODIFIED", pod("p", "u", 1, deleting=True, rv=2))
    assert invariants.check(log.history()) == []


def test_a_broken_rule_fails_the_run_as_a_difference_even_beside_a_named_fault():
    from harness.formats.pods import Scenario

    s = Scenario.model_validate({"id": "x", "title": "t", "spec": "s", "areas": ["preemption"],
                                 "nodes": [{"name": "n1"}], "steps": [{"wait": "1s"}]})
    r = Result(s, "upstream", violations=invariants.check(history(mark=False)))
    assert not r.ok and not r.fault_only
    assert verdict(r, "upstream") is Verdict.FAIL and cause(r, "upstream") is Cause.DIFFERENCE
    assert "HISTORY RULE BROKEN: marked-before-deleted" in r.report()


def test_group_members_and_pods_the_scenario_deletes_are_left_to_the_rules_that_can_judge_them():
    from dataclasses import replace

    assert rules(replace(history(victim_priority=1000), grouped=frozenset({"victim"}))) == []
    assert rules(replace(history(mark=False), deleted=frozenset({"victim"}))) == []


def test_the_fault_variants_of_a_step_follow_its_point():
    from harness.formats.pods import Scenario
    from harness.run.pods.expectation import Partial, fault_variants, simulate

    def variants(at, fault=("restartScheduler", "kill")):
        s = Scenario.model_validate({
            "id": "x", "title": "t", "spec": "s", "areas": ["preemption"],
            "priorityClasses": [{"name": "low", "value": 1}, {"name": "high", "value": 9}],
            "nodes": [{"name": "n1", "slots": 2}],
            "pods": [{"name": "v1", "class": "low", "node": "n1"}, {"name": "v2", "class": "low", "node": "n1"}],
            "steps": [{"createPod": {"name": "p", "class": "high", "slots": 2},
                       "during": {fault[0]: fault[1], "at": at}}]})
        return fault_variants(simulate(s, "upstream")[0], s.steps[0])

    two = frozenset({"default/v1", "default/v2"})
    marked = variants("victimMarked")
    assert marked[0] is None and Partial("default/p", two, True) in marked and len(marked) == 8
    deleting = variants("victimDeleting")
    assert all(v is None or v.undone != two for v in deleting) and len(deleting) == 6
    assert all(v is None or not v.nomination_lost for v in variants("nominated"))
    assert variants("victimGone") == [None]
    # A leader whose lease was taken, like a paused one, writes the rest before it stops.
    assert variants("victimMarked", ("failover", "takeLease")) == [None]
    assert variants("victimMarked", ("pauseScheduler", "3s")) == [None]
    assert len(variants("victimMarked", ("failover", "kill"))) == 8
