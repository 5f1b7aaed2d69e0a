"""Comparing what the cluster showed with the model, and the scheduler faults it names."""

from harness.run.pods.compare import compare
from reference.scheduler import PodView


def test_compare_treats_sets_and_termination_as_the_model_means_them():
    predicted = {"p": PodView("running", "n1"), "v": PodView("gone", preempted=True)}
    observed = {"p": PodView("running", "n2"), "v": PodView("terminating", "n1", preempted=True)}
    assert compare(predicted, observed, {"default/p": frozenset({"n1", "n2"})}) == []
    assert [m.field for m in compare(predicted, observed, {})] == ["node"]
    assert compare({"q": PodView("pending")}, {"q": PodView("pending", nominated="n1")}, {})[0].field == "nominated"


def _event(victim, preemptor_uid, node, at, preemptor="p"):
    from datetime import datetime, timezone
    from types import SimpleNamespace as NS

    return NS(message=f"Preempted by pod {preemptor_uid} on node {node}", involved_object=NS(name=victim),
              event_time=datetime(2026, 1, 1, 1, 7, at[0], at[1] * 1000, tzinfo=timezone.utc),
              first_timestamp=None, last_timestamp=None, related=NS(name=preemptor, uid=preemptor_uid))


def test_victims_of_one_preemptor_on_two_nodes_are_named_as_a_scheduler_fault():
    from harness.run.pods.faults import preempted_again as fault

    two = [_event("guarded-1", "u1", "n1", (6, 967)), _event("plain", "u1", "n2", (6, 996))]
    [f] = fault(two)
    assert f.fails and str(f).startswith(
        "one preemptor, victims on two nodes: p preempted guarded-1 on n1 at 01:07:06.967, plain on n2 at "
        "01:07:06.996 (a scheduler race")
    [f] = fault(two, "1.34")
    assert not f.fails and f.changes_outcome, "before 1.35 upstream's two-node race is a known bug (kubernetes#134249)"
    [f] = fault(two, "1.35", "plugins")
    assert not f.fails and f.changes_outcome, "the synchronous plugins build's informer race, on every release"
    twice = [_event("low", "u1", "n1", (6, 1)), _event("low", "u1", "n1", (6, 40))]
    [f] = fault(twice, "1.34")
    assert not f.fails and str(f).startswith(
        "one preemptor preempted the same victim twice: p preempted low on n1 at 01:07:06.001, low on n1 at "
        "01:07:06.040")
    [f] = fault(twice, "1.35")
    # 1.35's gate opens on the informer's view while victims come from the scheduler's cache: the
    # window is upstream's, and the pods end as specified, so it is known, not a regression.
    assert not f.fails and not f.changes_outcome and "leaves a window" in str(f)
    [f] = fault(two, "1.35")
    assert f.fails and "fixed in 1.35 by kubernetes#134294, #134730, so here a regression" in str(f)
    [f] = fault(twice, "1.35", "plugins")
    assert not f.fails, "the synchronous plugins build has no gate: its informer race stays a known fault"
    same_node = [_event("a", "u1", "n1", (6, 1)), _event("b", "u1", "n1", (6, 2))]
    two_preemptors = [_event("a", "u1", "n1", (6, 1)), _event("b", "u2", "n2", (6, 2), preemptor="q")]
    assert fault(same_node) == [] and fault(two_preemptors) == []


def test_a_preemptor_that_lost_its_nomination_may_preempt_on_another_node():
    """A higher preemptor took its node and cleared its nomination: preempting elsewhere then is
    the spec (queue-cleared-nomination-retried-at-once), not the race."""
    from kubernetes import client

    from harness.run.pods.faults import preempted_again as fault
    from harness.run.pods.check import displaced
    from harness.run.pods.history import PodLog

    def mid(nominated: str):
        return client.V1Pod(metadata=client.V1ObjectMeta(name="mid", uid="u1"), spec=client.V1PodSpec(containers=[]),
                            status=client.V1PodStatus(nominated_node_name=nominated or None))

    log = PodLog()
    for nominated in ("", "n1", "", "n2"):
        log.add("MODIFIED", mid(nominated))
    assert displaced(log) == {"u1"}
    two = [_event("v1", "u1", "n1", (6, 1)), _event("v2", "u1", "n2", (9, 1))]
    assert fault(two, displaced=displaced(log)) == []
    kept = PodLog()
    for nominated in ("", "n1", "n2"):
        kept.add("MODIFIED", mid(nominated))
    assert displaced(kept) == frozenset() and fault(two, displaced=displaced(kept))
