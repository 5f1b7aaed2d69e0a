"""The preemption executor: what kube-scheduler keeps while a preemption's API calls run.

Once a preemption has chosen its victims, the executor sends the calls that remove them
(framework/preemption executor.go from 1.36, the Evaluator in preemption.go before). With async
preemption (SchedulerAsyncPreemption, on by default) the calls run after the scheduling cycle has
ended, and meanwhile the executor remembers each preemptor at work and, once it has got that far,
the last victim it is removing: DefaultPreemption's PreEnqueue reads both to hold the preemptor
(or any pod of its group) out of the queue until the last victim's delete has been issued.

The model's scheduling cycle (reference.cycle) completes these calls at once. Here they are a
state machine over frozen values, so the moments between them can be looked at: ``start`` records
a preemptor at work, ``advance`` takes its next step, and what the calls meet (an API error, a pod
the API server no longer has, a victim still waiting in Permit or in PreBind) is an input of the
step, ``Replies``, not a fault of a cluster. The steps of one preemption, in order:

  nominations  the lower-priority pods nominated to the node get their nomination cleared;
  others       every victim but the last is preempted (in parallel upstream);
  register     the last victim is written down as the one to wait for (from 1.35);
  last         the last victim is preempted;
  finish       the preemptor is no longer at work; it is activated when a call failed or (from
               1.37) its last victim was preempted in memory, since no delete event will wake it.

A victim is preempted in memory when the scheduler still holds it: waiting in Permit (rejected;
every release), or in PreBind (its binding cancelled; from 1.36). Otherwise it gets the
DisruptionTarget condition (a status patch, unless it already carries the one this preemptor
writes) and a delete.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from .objects import ClusterState, Pod
from .podgroup import enabled as groups_enabled, key_of, unit_of
from .release import (DEFAULT_RELEASE, LAST_VICTIM_SKIPPED_AFTER_FAILURE, ONE_PREEMPTION_AT_A_TIME,
                      PREBIND_VICTIMS_CANCELLED, PREEMPTOR_ACTIVATED_AFTER_IN_MEMORY_LAST, TERMINATING_VICTIMS_SKIPPED,
                      Gates, has, minor)

POD, POD_GROUP = "pod", "podgroup"  # the kinds of preemptor (the condition's message names it from 1.37)
PERMIT, PREBIND, PREBOUND = "permit", "prebind", "prebound"  # where the scheduler may still hold a victim
OK, NOT_FOUND, ERROR = "ok", "not-found", "error"
PATCH, DELETE, CLEAR = "patch-condition", "delete", "clear-nomination"  # the API requests
WAITING_POD = "waiting for the preemption for this pod to be finished"
WAITING_GROUP = "waiting for the preemption for this pod group to be finished"
STEPS = ("nominations", "others", "register", "last", "finish")
# A NotFound answer to the DisruptionTarget patch means the victim is gone, not an error, from 1.35
# (v1.35.8 preemption.go PreemptPod; v1.34.4 returns the patch's error whatever it is). No upstream
# row the kit translates tells the two apart, so no release switch names it.
PATCH_NOT_FOUND_IS_GONE_SINCE = "1.35"


@dataclass(frozen=True)
class Preemptor:
    """Whose preemption it is: a pod, or a pod group (then ``pods`` are its pending pods)."""

    uid: str
    kind: str = POD
    pods: tuple[str, ...] = ()
    priority: int = 0


def of_pod(pod: Pod) -> Preemptor:
    return Preemptor(pod.key, POD, (pod.key,), pod.priority)


def of_group(key: str, pods: tuple[str, ...], priority: int) -> Preemptor:
    # A pod group's id is not a pod's key: a pod and a pod group may share a name.
    return Preemptor(f"{POD_GROUP}:{key}", POD_GROUP, pods, priority)


@dataclass(frozen=True)
class Victim:
    """A victim as the candidate hands it over. ``condition``: the kind of preemptor whose
    DisruptionTarget condition it carries already ("" none): then no patch is sent."""

    key: str
    terminating: bool = False
    condition: str = ""


@dataclass(frozen=True)
class Replies:
    """What the calls meet when they are sent."""

    failing: frozenset[tuple[str, str]] = frozenset()  # (request, pod) answered with an error
    missing: frozenset[str] = frozenset()  # pods the API server does not have: NotFound
    held: tuple[tuple[str, str], ...] = ()  # (pod, PERMIT | PREBIND | PREBOUND): where the scheduler holds it

    def answer(self, verb: str, pod: str) -> str:
        if (verb, pod) in self.failing:
            return ERROR
        return NOT_FOUND if pod in self.missing else OK

    def stage(self, pod: str) -> str:
        return dict(self.held).get(pod, "")


@dataclass(frozen=True)
class Call:
    verb: str
    pod: str
    by: str  # the preemptor's uid
    answer: str = OK


@dataclass(frozen=True)
class Work:
    """One preemptor's calls still to run."""

    preemptor: Preemptor
    node: str
    victims: tuple[Victim, ...]  # those that get a call; the last one last
    nominated: tuple[tuple[str, str], ...] = ()  # lower-priority pods nominated to the node, with their nomination
    step: str = STEPS[0]
    failed: bool = False  # preempting a victim failed
    unsettled: bool = False  # clearing a nomination failed: not critical, but the preemptor is activated
    last_in_memory: bool = False


@dataclass(frozen=True)
class Executor:
    release: str = DEFAULT_RELEASE
    preempting: frozenset[str] = frozenset()  # preemptors at work
    last_victims: tuple[tuple[str, str], ...] = ()  # (preemptor, its last victim's key)
    work: tuple[Work, ...] = ()
    calls: tuple[Call, ...] = ()  # the API requests sent, in order
    in_memory: tuple[str, ...] = ()  # victims preempted without a call
    activated: tuple[str, ...] = ()  # pods handed back to the active queue, in order

    def last_victim(self, uid: str) -> str | None:
        return dict(self.last_victims).get(uid)

    def work_of(self, uid: str) -> Work | None:
        return next((w for w in self.work if w.preemptor.uid == uid), None)

    def sent(self, verb: str = "") -> list[str]:
        """The pods the requests (of one kind) were sent for, in order."""
        return [c.pod for c in self.calls if not verb or c.verb == verb]

    def removed(self) -> list[str]:
        """The victims whose delete the API server carried out."""
        return [c.pod for c in self.calls if c.verb == DELETE and c.answer == OK]


# --- the transitions ------------------------------------------------------------


def start(ex: Executor, preemptor: Preemptor, node: str, victims, nominated=()) -> Executor:
    """An async preemption begins (prepareCandidateAsync, the part inside the cycle). From 1.35 a
    victim already terminating gets no call, and with none left nothing starts: the preemptor is
    not at work and no nomination is cleared. 1.34 starts even with no victim at all."""
    victims = tuple(victims)
    if has(ex.release, TERMINATING_VICTIMS_SKIPPED):
        victims = tuple(v for v in victims if not v.terminating)
        if not victims:
            return ex
    return replace(ex, preempting=ex.preempting | {preemptor.uid},
                   work=ex.work + (Work(preemptor, node, victims, tuple(nominated)),))


def advance(ex: Executor, uid: str, replies: Replies = Replies()) -> Executor:
    """The next step of ``uid``'s preemption (module docstring)."""
    w = ex.work_of(uid)
    if w is None:
        return ex
    one_at_a_time = has(ex.release, ONE_PREEMPTION_AT_A_TIME)
    if w.step == "nominations":
        for key, nomination in w.nominated:
            ex = clear_nomination(ex, key, nomination, uid, replies)
            w = replace(w, unsettled=w.unsettled or ex.calls[-1:] == (Call(CLEAR, key, uid, ERROR),))
        if not w.victims:  # 1.34 only: nothing to preempt
            return _finish(ex, w)
        return _put(ex, replace(w, step="others"))
    if w.step == "others":
        for v in w.victims[:-1]:
            ex, _, error = preempt_pod(ex, w.preemptor, v, replies)
            w = replace(w, failed=w.failed or bool(error))
        if not one_at_a_time:
            # 1.34 lets the preemptor go before the last victim's call (kubernetes#134249).
            ex = replace(ex, preempting=ex.preempting - {uid})
            return _put(ex, replace(w, step="last"))
        return _put(ex, replace(w, step="register"))
    if w.step == "register":
        if w.failed and has(ex.release, LAST_VICTIM_SKIPPED_AFTER_FAILURE):
            return _put(ex, replace(w, step="finish"))
        ex = replace(ex, last_victims=_without(ex.last_victims, uid) + ((uid, w.victims[-1].key),))
        return _put(ex, replace(w, step="last"))
    if w.step == "last":
        ex, in_memory, error = preempt_pod(ex, w.preemptor, w.victims[-1], replies)
        return _put(ex, replace(w, step="finish", failed=w.failed or bool(error), last_in_memory=in_memory))
    return _finish(ex, w)


def complete(ex: Executor, uid: str, replies: Replies = Replies()) -> Executor:
    """Every remaining step of ``uid``'s preemption."""
    return trace(ex, uid, replies)[-1]


def trace(ex: Executor, uid: str, replies: Replies = Replies()) -> list[Executor]:
    """The executor after each remaining step of ``uid``'s preemption, the given state first."""
    states = [ex]
    while states[-1].work_of(uid) is not None:
        states.append(advance(states[-1], uid, replies))
    return states


def prepare(ex: Executor, preemptor: Preemptor, node: str, victims, nominated=(),
            replies: Replies = Replies()) -> tuple[Executor, str]:
    """A preemption with async preemption off (prepareCandidate): within the cycle, no preemptor at
    work. Every victim's call is sent (in parallel upstream: one that fails does not recall the
    others); a failure is the cycle's error, and then no nomination is cleared."""
    error = ""
    for v in victims:
        if v.terminating and has(ex.release, TERMINATING_VICTIMS_SKIPPED):
            continue
        ex, _, failed = preempt_pod(ex, preemptor, v, replies)
        error = error or failed
    if error:
        return ex, error
    for key, nomination in nominated:
        ex = clear_nomination(ex, key, nomination, preemptor.uid, replies)
    return ex, ""


def preempt_pod(ex: Executor, preemptor: Preemptor, victim: Victim, replies: Replies = Replies()) -> tuple[Executor, bool, str]:
    """One victim preempted (PreemptPod): (executor, preempted in memory, error or "").

    Where the victim is is read when its turn comes: a pod may have entered PreBind since the
    preemption chose it. NotFound means the victim is gone already: no error, and after a patch
    no delete (from 1.35; 1.34 takes a patch's NotFound for an error)."""
    stage = replies.stage(victim.key)
    if stage == PERMIT or (stage == PREBIND and has(ex.release, PREBIND_VICTIMS_CANCELLED)):
        return replace(ex, in_memory=ex.in_memory + (victim.key,)), True, ""
    if victim.condition != preemptor.kind:
        answer = replies.answer(PATCH, victim.key)
        ex = _sent(ex, PATCH, victim.key, preemptor.uid, answer)
        if answer == NOT_FOUND and minor(ex.release) >= minor(PATCH_NOT_FOUND_IS_GONE_SINCE):
            return ex, False, ""
        if answer != OK:
            return ex, False, f"patching {victim.key} failed"
    answer = replies.answer(DELETE, victim.key)
    ex = _sent(ex, DELETE, victim.key, preemptor.uid, answer)
    return ex, False, f"deleting {victim.key} failed" if answer == ERROR else ""


def clear_nomination(ex: Executor, pod: str, nomination: str, by: str = "", replies: Replies = Replies()) -> Executor:
    """A lower-priority pod's nomination cleared (clearNominatedNodeName): a status patch setting
    nominatedNodeName to null, not sent when the pod has none."""
    if not nomination:
        return ex
    return _sent(ex, CLEAR, pod, by, replies.answer(CLEAR, pod))


# --- the queries ----------------------------------------------------------------


def is_running(ex: Executor, uid: str, listed: Mapping[str, bool]) -> bool:
    """Whether ``uid``'s preemption still holds it back (IsPodRunningPreemption,
    IsPodGroupRunningPreemption). ``listed``: the scheduler's informer, each pod it has and whether
    that pod has a deletionTimestamp. From 1.35, once the last victim is written down the
    preemption counts as over when that victim is gone or being deleted; 1.34 asks only whether
    the preemptor is at work (it let it go before the last call)."""
    if uid not in ex.preempting:
        return False
    if not has(ex.release, ONE_PREEMPTION_AT_A_TIME):
        return True
    victim = ex.last_victim(uid)
    if victim is None:
        return True  # at work, its last victim not reached yet
    return victim in listed and not listed[victim]


def listed_in(state: ClusterState) -> dict[str, bool]:
    """The informer's view of a cluster: each pod and whether it is terminating."""
    return {p.key: p.terminating for p in state.pods}


def pre_enqueue(ex: Executor, state: ClusterState, key: str, gates: Gates = (), asynchronous: bool = True) -> str:
    """DefaultPreemption's PreEnqueue for pod ``key``: "" lets it into the queue, otherwise the
    UnschedulableAndUnresolvable message. Nothing is held with async preemption off. A pod of a
    pod group (when the scheduler runs pod groups) waits for its group's preemption, and a pod whose
    PodGroup does not exist is not this plugin's to hold; any other pod waits for its own."""
    if not asynchronous:
        return ""
    pod = state.pod_keyed(key)
    listed = listed_in(state)
    if pod.group and groups_enabled(ex.release, gates):
        # Its pod group, or with composite pod groups on the root of its hierarchy; none while a
        # group on the way up is missing, and then nothing is held (1.37 default_preemption.go:180-204).
        root = unit_of(state, pod, ex.release, gates)
        if root is None:
            return ""
        return WAITING_GROUP if is_running(ex, of_group(key_of(root), (), 0).uid, listed) else ""
    return WAITING_POD if is_running(ex, pod.key, listed) else ""


# --- bookkeeping ----------------------------------------------------------------


def _finish(ex: Executor, w: Work) -> Executor:
    uid = w.preemptor.uid
    ex = replace(ex, preempting=ex.preempting - {uid}, last_victims=_without(ex.last_victims, uid),
                 work=tuple(x for x in ex.work if x.preemptor.uid != uid))
    if w.failed or w.unsettled or (w.last_in_memory and has(ex.release, PREEMPTOR_ACTIVATED_AFTER_IN_MEMORY_LAST)):
        # No delete event will come for a victim preempted in memory (a victim in Permit is one in
        # every release; only from 1.37 does the executor make up for it). Activated only once the
        # preemptor is no longer at work: PreEnqueue would turn it away again.
        ex = replace(ex, activated=ex.activated + tuple(sorted(w.preemptor.pods)))
    return ex


def _put(ex: Executor, w: Work) -> Executor:
    return replace(ex, work=tuple(w if x.preemptor.uid == w.preemptor.uid else x for x in ex.work))


def _without(pairs, uid: str):
    return tuple(p for p in pairs if p[0] != uid)


def _sent(ex: Executor, verb: str, pod: str, by: str, answer: str) -> Executor:
    return replace(ex, calls=ex.calls + (Call(verb, pod, by, answer),))


__all__ = ["Call", "Executor", "Preemptor", "Replies", "Victim", "Work", "advance", "clear_nomination", "complete",
           "is_running", "listed_in", "of_group", "of_pod", "pre_enqueue", "preempt_pod", "prepare", "start", "trace"]
