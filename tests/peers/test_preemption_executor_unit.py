"""Peer cases: the preemption executor's unit tables, through the model's executor
(reference.executor): kubernetes v1.37.2 pkg/scheduler/framework/preemption/executor_test.go, the
same tests in v1.34.4 and v1.35.8 preemption_test.go (where the Evaluator ran the calls), and
v1.37.2 defaultpreemption's TestPreEnqueue. Each test names its upstream function and case and is
the ``test:`` of that case, at each release it is parametrized by, in peers/upstream-cases.yaml; the
facts (victims, what the fake API server answers, which pods wait in Permit or PreBind, expected
calls, sets and activations) are the upstream rows', written anew.

Upstream swaps in fake API reactors (a delete or a patch of a pod named fail-victim fails, one named
not-found-victim is not found), fake informers and waiting-pod maps; here they are the ``Replies``
a step of the executor meets. Upstream waits on goroutines; here the executor's steps are taken one
by one (``trace``), so the state between two calls can be looked at. Upstream runs most rows with
SchedulerAsyncAPICalls on and off: that gate only routes the nomination patch through the
scheduler's API cache, which sends the same request, so the model has one answer for both.
"""

from __future__ import annotations

import pytest

from reference import executor as ex_
from reference.executor import (CLEAR, DELETE, PATCH, PERMIT, POD, POD_GROUP, PREBIND, WAITING_GROUP, WAITING_POD,
                                Executor, Preemptor, Replies, Victim, of_group)
from reference.preemption import predict
from reference.victim import COMPOSITE as CPG_KEY

from tests.builders import T0
from tests.peers.upstream_tables import COMPOSITE, GENERIC_WORKLOAD, HIGH, cluster, composite, group, node, pod

NS = "default"
MID = 100  # the preemption package's midPriority


def key(name: str) -> str:
    return f"{NS}/{name}"


def names(keys) -> list[str]:
    return [k.split("/", 1)[1] for k in keys]


PREEMPTOR = Preemptor(key("preemptor"), POD, (key("preemptor"),), HIGH)
GROUP_PREEMPTOR = of_group(key("pg1"), (key("preemptor"),), HIGH)


def fails(*verbs_and_names: tuple[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset((verb, key(name)) for verb, name in verbs_and_names)


# -- TestIsPodRunningPreemption, TestIsPodGroupRunningPreemption -----------------------------------------

# (preempting, last victims, the informer's pods) -> running; the preemptor's uid is "P".
RUNNING = [
    # preemptor not in preemptingSet: nothing recorded at all
    pytest.param(False, {}, {}, False, id="not-preempting"),
    # preemptor not in preemptingSet, lastVictimSet not empty: a last victim recorded for it is not enough
    pytest.param(False, {"P": "victim1"}, {}, False, id="not-preempting-last-victim-set"),
    # preemptor in preemptingSet, no lastVictim for preemptor (another preemptor has one)
    pytest.param(True, {"other": "victim1"}, {}, True, id="preempting-no-last-victim"),
    # preemptor in preemptingSet, victim in lastVictimSet, not in PodLister: the victim is gone
    pytest.param(True, {"P": "victim1"}, {}, False, id="last-victim-not-listed"),
    # preemptor in preemptingSet, victim in lastVictimSet and in PodLister (victim2 too), neither terminating
    pytest.param(True, {"P": "victim1"}, {"victim1": False, "victim2": False}, True, id="last-victim-listed"),
]


def _running(release: str, uid: str, preempting: bool, last: dict, listed: dict) -> bool:
    uids = {"P": uid, "other": key("otherPod")}
    ex = Executor(release, preempting=frozenset({uid}) if preempting else frozenset(),
                  last_victims=tuple((uids[p], key(v)) for p, v in last.items()))
    return ex_.is_running(ex, uid, {key(n): t for n, t in listed.items()})


@pytest.mark.parametrize("release", ["1.35", "1.37"])
@pytest.mark.parametrize("preempting, last, listed, running", RUNNING)
def test_is_pod_running_preemption(release, preempting, last, listed, running):
    """TestIsPodRunningPreemption (1.35.8 preemption_test.go, 1.37.2 executor_test.go): whether the
    preemptor pod is held back, read from the executor's sets and the informer."""
    assert _running(release, key("preemptor"), preempting, last, listed) is running


@pytest.mark.parametrize("preempting, last, listed, running", RUNNING)
def test_is_pod_group_running_preemption(preempting, last, listed, running):
    """TestIsPodGroupRunningPreemption (1.37.2 executor_test.go): the same, for pod group pg1."""
    assert _running("1.37", GROUP_PREEMPTOR.uid, preempting, last, listed) is running


# -- TestPrepareCandidateAsyncSetsPreemptingSets ---------------------------------------------------------

KINDS = {
    "pod": PREEMPTOR,
    "podgroup": GROUP_PREEMPTOR,
    # the executor sees a composite pod group as one more preemptor id
    "compositepodgroup": Preemptor(f"compositepodgroup:{key('cpg1')}", "compositepodgroup", (key("preemptor"),), HIGH),
}
SETS = [
    *(pytest.param(r, k, n, id=f"{v}-{k}-{r}") for r, ks in (("1.35", ["pod"]), ("1.37", list(KINDS)))
      for k in ks for n, v in ((0, "no-victims"), (1, "one-victim"), (2, "two-victims"))),
]


@pytest.mark.parametrize("release, kind, count", SETS)
def test_prepare_candidate_async_sets_preempting_sets(release, kind, count):
    """TestPrepareCandidateAsyncSetsPreemptingSets (1.35.8 preemption_test.go; 1.37.2 executor_test.go,
    for a pod, a pod group and a composite pod group): victims victim1 and victim2 (mid priority, on
    node1), the candidate taking the first ``count``. Before each victim's call the preemptor is at
    work; the last victim's call comes last, when that victim is the one written down, and no victim
    is written down before; at the end the preemptor is not at work, nothing is written down, and
    there was one call per victim."""
    preemptor = KINDS[kind]
    uid = preemptor.uid
    victims = [Victim(key(f"victim{i}")) for i in (1, 2)][:count]
    before = Executor(release)
    assert not before.preempting and not before.last_victims
    states = ex_.trace(ex_.start(before, preemptor, "node1", victims), uid)
    calls: list[str] = []
    for was, now in zip(states, states[1:]):
        for call in now.calls[len(was.calls):]:
            assert call.verb in (PATCH, DELETE)
            if call.verb != DELETE:
                continue
            calls.append(call.pod)
            assert uid in was.preempting
            if call.pod == victims[-1].key:
                assert len(calls) == count, "the last victim is called last"
                assert was.last_victim(uid) == victims[-1].key
            else:
                assert len(calls) < count and was.last_victim(uid) is None
    end = states[-1]
    assert uid not in end.preempting and end.last_victim(uid) is None
    assert calls == [v.key for v in victims]


# -- TestPrepareCandidate: the rows with an injected API failure or a NotFound -----------------------------

# (victims: name and the condition it already carries, replies) -> (patch failed, delete failed,
# the deleted victims upstream accepts, each a list); every row fails when some call fails.
PREPARE = {
    # one victim, not-found victim error is ignored when patching: victim1 already carries the
    # condition, so no patch is sent; its delete succeeds
    "not-found-when-patching": ([("victim1", POD)], Replies(), False, False, [["victim1"]]),
    # one victim, but pod deletion failed: fail-victim carries the condition; its delete fails
    "deletion-failed": ([("fail-victim", POD)], Replies(failing=fails((DELETE, "fail-victim"))),
                        False, True, [[]]),
    # one victim, not-found victim error is ignored when deleting: victim1 without condition is
    # patched and deleted, both answered
    "not-found-when-deleting": ([("victim1", "")], Replies(), False, False, [["victim1"]]),
    # one victim, but patch pod failed: fail-victim without condition; its patch fails, no delete
    "patch-failed": ([("fail-victim", "")], Replies(failing=fails((PATCH, "fail-victim"), (DELETE, "fail-victim"))),
                     True, False, [[]]),
    # two victims without condition, one passes successfully and the second fails: fail-victim's
    # patch fails; victim2 (priority 50000) may or may not be deleted, upstream accepts both
    "two-victims-one-fails": ([("fail-victim", ""), ("victim2", "")],
                              Replies(failing=fails((PATCH, "fail-victim"), (DELETE, "fail-victim"))),
                              True, False, [["victim2"], []]),
}
PREPARE_ROWS = [
    *(pytest.param(r, row, POD, id=f"{row}-{r}") for r in ("1.34", "1.35", "1.37") for row in PREPARE),
    # podgroup preemptor, one victim, but pod deletion failed: the victim carries the condition a
    # pod group's preemption writes; its delete fails
    pytest.param("1.37", "deletion-failed", POD_GROUP, id="podgroup-deletion-failed-1.37"),
]


@pytest.mark.parametrize("asynchronous", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("release, row, kind", PREPARE_ROWS)
def test_prepare_candidate_api_failures(release, row, kind, asynchronous):
    """TestPrepareCandidate (1.34.4 and 1.35.8 preemption_test.go, 1.37.2 executor_test.go), with async
    preemption on and off: the high preemptor's candidate on node1. Async: right after the start the
    preemptor is at work, at the end it is not, and it was activated when a call failed. Sync: the
    cycle's status is the call's error. Either way the failed requests and the deleted victims."""
    victims, replies, patch_failed, delete_failed, deleted = PREPARE[row]
    preemptor = PREEMPTOR if kind == POD else GROUP_PREEMPTOR
    victims = [Victim(key(n), condition=kind if c else "") for n, c in victims]
    ex = Executor(release)
    if asynchronous:
        started = ex_.start(ex, preemptor, "node1", victims)
        assert started.preempting == {preemptor.uid}
        end = ex_.complete(started, preemptor.uid, replies)
        assert not end.preempting
        failed = patch_failed or delete_failed
        assert list(end.activated) == ([key("preemptor")] if failed else [])
    else:
        end, error = ex_.prepare(ex, preemptor, "node1", victims, replies=replies)
        assert bool(error) == (patch_failed or delete_failed)
        assert not end.preempting and not end.activated
    answers = {(c.verb, c.answer) for c in end.calls}
    assert ((PATCH, "error") in answers) is patch_failed
    assert ((DELETE, "error") in answers) is delete_failed
    assert names(end.removed()) in deleted


def test_prepare_candidate_two_victims_last_call_by_release():
    """TestPrepareCandidate, "two victims without condition, one passes successfully and the second
    fails", async: of the two answers upstream accepts, the model gives the one each release's code
    does. victim2 is the last victim: 1.34 and 1.35 preempt it whatever happened before; from 1.36
    a failure before it means no call for it."""
    victims, replies, *_ = PREPARE["two-victims-one-fails"]
    victims = [Victim(key(n)) for n, _ in victims]
    for release, deleted in (("1.34", ["victim2"]), ("1.35", ["victim2"]), ("1.37", [])):
        end = ex_.complete(ex_.start(Executor(release), PREEMPTOR, "node1", victims), PREEMPTOR.uid, replies)
        assert names(end.removed()) == deleted, release


@pytest.mark.parametrize("release, at_work", [("1.34", True), ("1.35", False), ("1.37", False)])
def test_prepare_candidate_no_victims_async(release, at_work):
    """TestPrepareCandidate, "no victims", async (its index entry's test is the cycle's, in
    test_preemption_framework_unit.py; this is the executor's side): a candidate with no victim puts
    the preemptor at work in 1.34 (its set is checked right after the start) and not from 1.35;
    either way it ends with nothing sent and nobody activated."""
    started = ex_.start(Executor(release), PREEMPTOR, "", [])
    assert (PREEMPTOR.uid in started.preempting) is at_work
    end = ex_.complete(started, PREEMPTOR.uid)
    assert not end.preempting and not end.calls and not end.activated


# -- TestRemoveNominatedNodeName --------------------------------------------------------------------------

@pytest.mark.parametrize("release", ["1.34", "1.35", "1.37"])
@pytest.mark.parametrize("nominated, patched", [
    # Should make patch request to clear node name: foo is nominated to node1; one patch nulls it
    pytest.param("node1", True, id="clears-nomination"),
    # Should not make patch request if nominated node is already cleared: foo has none; nothing is sent
    pytest.param("", False, id="already-cleared"),
])
def test_remove_nominated_node_name(release, nominated, patched):
    """TestRemoveNominatedNodeName (1.34.4, 1.35.8 preemption_test.go; 1.37.2 executor_test.go), with
    async API calls on and off: clearing pod foo's nomination."""
    end = ex_.clear_nomination(Executor(release), key("foo"), nominated)
    assert end.sent() == ([key("foo")] if patched else [])
    assert all(c.verb == CLEAR for c in end.calls)


# -- TestAsyncPreemptionFailure ---------------------------------------------------------------------------

# The victims in order ("x" marks one whose delete fails) -> (last victim's delete sent, and done).
FAILURES = [
    # Failure with a single victim
    pytest.param(["fail-victim x"], True, False, id="single-victim-fails"),
    # Success with a single victim
    pytest.param(["victim1"], True, True, id="single-victim-succeeds"),
    # Failure in first of three victims
    pytest.param(["fail-victim x", "victim2", "victim3"], False, False, id="first-of-three-fails"),
    # Failure in second of three victims
    pytest.param(["victim1", "fail-victim x", "victim3"], False, False, id="second-of-three-fails"),
    # Failure in first two of three victims
    pytest.param(["fail-victim1 x", "fail-victim2 x", "victim3"], False, False, id="first-two-of-three-fail"),
    # Failure in third of three victims
    pytest.param(["victim1", "victim2", "fail-victim x"], True, False, id="third-of-three-fails"),
    # Success with three victims
    pytest.param(["victim1", "victim2", "victim3"], True, True, id="three-victims-succeed"),
]


def _failure(victims: list[str], preemptor: Preemptor) -> Executor:
    keys = [key(v.split()[0]) for v in victims]
    replies = Replies(failing=frozenset((DELETE, key(v.split()[0])) for v in victims if v.endswith(" x")))
    started = ex_.start(Executor("1.37"), preemptor, "node1", [Victim(k) for k in keys])
    end = ex_.complete(started, preemptor.uid, replies)
    assert not end.preempting
    attempted, deleted = end.sent(DELETE), end.removed()
    assert (all(k in deleted for k in keys[:-1])) is (keys[-1] in attempted), "the last only after all others"
    return end


@pytest.mark.parametrize("victims, last_attempted, succeeded", FAILURES)
def test_async_preemption_failure(victims, last_attempted, succeeded):
    """TestAsyncPreemptionFailure (1.37.2 executor_test.go): the high preemptor's mid victims on node1,
    deleted asynchronously. The last victim's delete is sent only if every other victim was deleted;
    the preemptor is activated only when the preemption failed; the last victim is deleted only when
    it succeeded."""
    end = _failure(victims, PREEMPTOR)
    last = key(victims[-1].split()[0])
    assert (last in end.sent(DELETE)) is last_attempted
    assert (last in end.removed()) is succeeded
    assert list(end.activated) == ([] if succeeded else [key("preemptor")])


def test_async_preemption_failure_for_a_pod_group():
    """TestAsyncPreemptionFailure (1.37.2 executor_test.go), "Failure with a single victim for pod
    group": pod group pg1's preemption (its pods pod1 and pod2) fails on its one victim; the last
    victim's delete was sent, and both pods of the group are activated."""
    end = _failure(["fail-victim x"], of_group(key("pg1"), (key("pod1"), key("pod2")), HIGH))
    assert end.sent(DELETE) == [key("fail-victim")] and not end.removed()
    assert sorted(end.activated) == [key("pod1"), key("pod2")]


# -- TestPreemptPod ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["pod", "podgroup", "compositepodgroup"])
@pytest.mark.parametrize("held, in_memory, requests", [
    # victim is in preBind, context should be cancelled: its binding is cancelled, no request sent
    pytest.param(PREBIND, True, [], id="victim-in-prebind"),
    # victim is in waiting pods, it should be rejected (no calls to apiserver)
    pytest.param(PERMIT, True, [], id="victim-waiting"),
    # victim is not in waiting/preBind pods, pod should be deleted: a patch, then a delete
    pytest.param("", False, [PATCH, DELETE], id="victim-bound"),
])
def test_preempt_pod(kind, held, in_memory, requests):
    """TestPreemptPod (1.37.2 executor_test.go): one mid victim v preempted by p (a pod), pod group pg
    or composite pod group cpg (their pods p1 and p2), with the victim where the row puts it."""
    preemptor = {"pod": Preemptor(key("p"), POD, (key("p"),), HIGH),
                 "podgroup": of_group(key("pg"), (key("p1"), key("p2")), HIGH),
                 "compositepodgroup": Preemptor("compositepodgroup:default/cpg", "compositepodgroup",
                                                (key("p1"), key("p2")), HIGH)}[kind]
    replies = Replies(held=((key("v"), held),) if held else ())
    end, memory, error = ex_.preempt_pod(Executor("1.37"), preemptor, Victim(key("v")), replies)
    assert not error and memory is in_memory
    assert [c.verb for c in end.calls] == requests
    assert list(end.in_memory) == ([key("v")] if in_memory else [])


# -- TestPrepareCandidateAsyncActivatesPreemptorAfterLastVictimInMemoryPreemption -------------------------

ACTIVATES = [
    # last waiting pod: the one victim waits in Permit
    pytest.param(["waiting-v"], {"waiting-v": PERMIT}, False, PREEMPTOR, True, id="last-waiting"),
    # last preBind pod: the one victim is in PreBind
    pytest.param(["prebind-v"], {"prebind-v": PREBIND}, False, PREEMPTOR, True, id="last-prebind"),
    # last pod enters preBind during preemption: in PreBind only once its call comes
    pytest.param(["prebind-v"], {"prebind-v": PREBIND}, True, PREEMPTOR, True, id="last-enters-prebind"),
    # last waiting pod after API-deleted victim: api-v deleted through the API first
    pytest.param(["api-v", "waiting-v"], {"waiting-v": PERMIT}, False, PREEMPTOR, True, id="last-waiting-after-api"),
    # last waiting pod for pod group: pod group pg (pods p and p2) preempts
    pytest.param(["waiting-v"], {"waiting-v": PERMIT}, False, of_group(key("pg"), (key("p"), key("p2")), HIGH), True,
                 id="last-waiting-pod-group"),
    # non-last waiting pod: the waiting victim comes first, api-v last
    pytest.param(["waiting-v", "api-v"], {"waiting-v": PERMIT}, False, PREEMPTOR, False, id="non-last-waiting"),
    # non-last preBind pod: the PreBind victim comes first, api-v last
    pytest.param(["prebind-v", "api-v"], {"prebind-v": PREBIND}, False, PREEMPTOR, False, id="non-last-prebind"),
]


@pytest.mark.parametrize("victims, held, late, preemptor, activated", ACTIVATES)
def test_prepare_candidate_async_activates_preemptor_after_last_victim_in_memory(victims, held, late, preemptor,
                                                                                activated):
    """TestPrepareCandidateAsyncActivatesPreemptorAfterLastVictimInMemoryPreemption (1.37.2
    executor_test.go): mid victims on node1, some held by the scheduler. The preemptor's pods are
    activated, and only once it is no longer at work, exactly when its last victim was preempted in
    memory; a victim in PreBind has its binding cancelled. ``late``: the victim enters PreBind after
    the preemption chose it, before its call."""
    uid = preemptor.uid
    held_now = Replies(held=tuple((key(n), s) for n, s in held.items()))
    ex = ex_.start(Executor("1.37"), preemptor, "node1", [Victim(key(n)) for n in victims])
    states = [ex]
    while ex.work_of(uid) is not None:
        step = ex.work_of(uid).step
        ex = ex_.advance(ex, uid, held_now if not late or step == "last" else Replies())
        states.append(ex)
    assert all(not s.activated or uid not in s.preempting for s in states), "activated while at work"
    assert sorted(ex.activated) == (sorted(preemptor.pods) if activated else [])
    assert sorted(ex.in_memory) == sorted(key(n) for n in held)
    assert ex.removed() == [key(n) for n in victims if n not in held]


# -- TestPreEnqueue (1.37.2 default_preemption_test.go) ---------------------------------------------------

def _pending(name: str, pg: str = "") -> object:
    return pod(name, HIGH, group=pg)


@pytest.mark.parametrize("asynchronous, gates, trigger, check, held", [
    # AsyncPreemption disabled, returns nil: p preempted (synchronously); p itself is not held
    pytest.param(False, (), "p", "p", "", id="async-off"),
    # AsyncPreemption enabled, same pod, returns UnschedulableAndUnresolvable
    pytest.param(True, (), "p", "p", WAITING_POD, id="async-same-pod"),
    # AsyncPreemption enabled, different pod, returns nil: p_other is not held for p's preemption
    pytest.param(True, (), "p", "p_other", "", id="async-other-pod"),
    # GenericWorkload enabled, pod in same PodGroup: pg1's preemption holds p_other, of pg1 too
    pytest.param(True, GENERIC_WORKLOAD, "pg1", "p_other@pg1", WAITING_GROUP, id="group-same"),
    # GenericWorkload disabled, pod in same PodGroup, returns nil: p (naming pg1) preempted as a pod
    pytest.param(True, (), "p@pg1", "p_other@pg1", "", id="group-gate-off"),
    # GenericWorkload enabled, pod in different PodGroup, returns nil: p_other belongs to pg2
    pytest.param(True, GENERIC_WORKLOAD, "pg1", "p_other@pg2", "", id="group-other"),
])
def test_pre_enqueue(asynchronous, gates, trigger, check, held):
    """TestPreEnqueue (1.37.2 default_preemption_test.go): node1 holds one pod (p1, priority 0) and
    room for one; a high pod, or pod group pg1 (high; its pod p), preempts p1 there, and its calls
    have not finished (upstream blocks them). Then DefaultPreemption's PreEnqueue for the pod
    checked (name@group for a pod naming a pod group)."""
    def split(spec: str):
        name, _, pg = spec.partition("@")
        return name, pg
    name, pg = split(check)
    pods = [pod("p1", 0, on="node1"), _pending(name, pg)]
    trigger_name, trigger_pg = split(trigger) if trigger != "pg1" else ("p", "pg1")
    if trigger_name != name:
        pods.append(_pending(trigger_name, trigger_pg))
    state = cluster([node("node1", pods=1)], pods, groups=[group("pg1", HIGH), group("pg2", HIGH)])
    ex = Executor("1.37")
    if trigger == "pg1":
        preemptor = of_group(key("pg1"), (key("p"),), HIGH)
        victims = [Victim(key("p1"))]
    else:
        preemptor = ex_.of_pod(state.pod_keyed(key(trigger_name)))
        chosen = predict(state, preemptor.uid, "upstream", T0, "1.37", gates)
        assert chosen.outcome == "preempt" and chosen.victims == {"node1": (key("p1"),)}
        victims = [Victim(key("p1"))]
    if asynchronous:
        ex = ex_.start(ex, preemptor, "node1", victims)
    else:
        ex, error = ex_.prepare(ex, preemptor, "node1", victims)
        assert not error
    assert ex_.pre_enqueue(ex, state, key(name), gates, asynchronous) == held


# The composite rows of TestPreEnqueue (1.37.2): p (of pg1) triggered its root group's preemption,
# whose calls have not finished; p_other's PreEnqueue is asked. Each row's groups: name -> parent
# ("" none), the composite groups named with "cpg"; the root whose preemption is at work.
PRE_ENQUEUE_COMPOSITE = [
    # pod in different leaf PodGroup but same root CompositePodGroup: held
    pytest.param(COMPOSITE, {"pg1": "cpg1", "pg2": "cpg1", "cpg1": ""}, "cpg1", "pg2", WAITING_GROUP,
                 id="composite-same-root"),
    # pod in different leaf PodGroup and different root CompositePodGroup: not held
    pytest.param(COMPOSITE, {"pg1": "cpg1", "pg2": "cpg2", "cpg1": "", "cpg2": ""}, "cpg1", "pg2", "",
                 id="composite-other-root"),
    # CompositePodGroup disabled, same root: pg2's own preemption is not at work, so not held
    pytest.param(GENERIC_WORKLOAD, {"pg1": "cpg1", "pg2": "cpg1", "cpg1": ""}, "cpg1", "pg2", "",
                 id="composite-gate-off"),
    # parent CompositePodGroup is missing: the hierarchy cannot be built, nothing held (pg1 at work)
    pytest.param(COMPOSITE, {"pg1": "cpg_missing"}, "pg1", "pg1", "", id="composite-parent-missing"),
    # different leaf under a multi-level hierarchy with one root: held
    pytest.param(COMPOSITE, {"pg1": "child-cpg1", "pg2": "child-cpg2", "child-cpg1": "root-cpg",
                             "child-cpg2": "root-cpg", "root-cpg": ""}, "root-cpg", "pg2", WAITING_GROUP,
                 id="composite-multi-level"),
    # intermediate parent missing: child-cpg-missing (at work) names a root that does not exist
    pytest.param(COMPOSITE, {"pg1": "child-cpg-missing", "child-cpg-missing": "missing-root"},
                 "child-cpg-missing", "pg1", "", id="composite-intermediate-missing"),
]


@pytest.mark.parametrize("gates, hierarchy, at_work, leaf, held", PRE_ENQUEUE_COMPOSITE)
def test_pre_enqueue_composite(gates, hierarchy, at_work, leaf, held):
    """TestPreEnqueue's CompositePodGroup rows (1.37.2 default_preemption_test.go): with async
    preemption and GenericWorkload on, the group at work (a pod group's id, or a composite group's)
    has started its preemption of p1 on node1 and its calls have not finished; p_other, of pod group
    ``leaf``, waits only if the root of its hierarchy is the group at work, and a hierarchy with a
    missing group holds nothing."""
    groups = [group(n, HIGH, parent=parent) for n, parent in hierarchy.items() if not n.startswith(("cpg", "child", "root"))]
    composites = [composite(n, HIGH, parent=parent) for n, parent in hierarchy.items()
                  if n.startswith(("cpg", "child", "root"))]
    pods = [pod("p1", 0, on="node1"), pod("p", HIGH, group="pg1"), pod("p_other", HIGH, group=leaf)]
    state = cluster([node("node1", pods=1)], pods, groups=groups, composites=composites)
    uid = key(at_work) if at_work.startswith("pg") else f"{CPG_KEY}:{key(at_work)}"
    ex = ex_.start(Executor("1.37"), of_group(uid, (key("p"),), HIGH), "node1", [Victim(key("p1"))])
    assert ex_.pre_enqueue(ex, state, key("p_other"), gates) == held
