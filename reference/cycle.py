"""One scheduling cycle and its effects on the world: a pod's attempt, or a pod group's.

``preemption.predict`` and ``podgroup.attempt`` decide; this module applies the decision the way
kube-scheduler does: binds, marks victims Terminating with the DisruptionTarget condition, sets
and clears nominations, parks what failed, and wakes the parked pods an effect may help.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from . import executor, podgroup
from .objects import Pod
from .preemption import PLUGINS, Prediction, predict
from .release import (GROUP_REST_RETRIED_AT_ONCE, NOMINATION_CLEARED_ON_BINDING, PREEMPTION_SUCCESS_MESSAGE,
                      TERMINATING_VICTIMS_SKIPPED, has)
from .requeue import ClusterEvent, nomination_changed, pod_bound
from .world import World, activate, hold, park, set_pod, wake


def attempt(world: World, key: str) -> World:
    """One scheduling attempt of a pending pod, and its effects."""
    first = world.state.pod_keyed(key)
    if not first.resize_deferred and podgroup.group_key(world.state, first, world.release, world.gates):
        return attempt_group(world, key)
    pr = predict(world.state, key, world.build if world.preemption else None, world.now, world.release, world.gates)
    pod = world.state.pod_keyed(key)
    assert pod is not None
    forced = dict(world.choices).get(key)
    chosen = forced if forced in pr.nodes else (sorted(pr.nodes)[0] if pr.nodes else "")
    if pr.outcome == "preempt":
        # What the pod is left saying depends on the node chosen and the release.
        pr = replace(pr, message=success_message(pr.message, chosen, len(pr.victims[chosen]), world.release))
    world = replace(world, predictions=world.predictions + (pr,))
    if len(pr.nodes) > 1:
        world = replace(world, allowed_nodes=world.allowed_nodes + ((key, pr.nodes),))
    if pod.resize_deferred:
        return _deferred_attempt(world, pod, pr, chosen)
    if pr.outcome == "schedule":
        bound = _bound(world, pod, chosen)
        world = set_pod(world, bound).note(f"{key} scheduled on {chosen} ({pr.reasons[0]})")
        return wake(world, pod_bound(bound))
    if pr.outcome == "preempt":
        victims = pr.victims[chosen]
        skip_terminating = has(world.release, TERMINATING_VICTIMS_SKIPPED)
        in_flight = world.executor is not None and PLUGINS[world.build].asynchronous
        if in_flight:
            world, started = _start_preemption(world, pod, chosen, victims, pr.nominations_cleared.get(chosen, ()))
            evicted: list[str] = []
        else:
            world, evicted = _preempt_victims(world, victims)
        # From 1.35 async preemption with nothing left to evict returns before clearing nominations.
        events: list[ClusterEvent] = []
        if (started if in_flight else evicted or not (skip_terminating and PLUGINS[world.build].asynchronous)):
            for cleared in pr.nominations_cleared.get(chosen, ()):
                other = world.state.pod_keyed(cleared)
                if other is not None:
                    world = set_pod(world, other.with_(nominated_node_name=""))
                    events.append(nomination_changed(other, ""))
        if pod.nominated_node_name and pod.nominated_node_name != chosen:
            events.append(nomination_changed(pod, chosen))
        world = set_pod(world, world.state.pod_keyed(key).with_(nominated_node_name=chosen))
        world = replace(world, preempted=world.preempted | set(evicted))
        world = world.note(f"{key} preempts {', '.join(victims) or 'nobody new'} on {chosen} ({pr.reasons[0]})"
                           + (", its calls in flight" if in_flight and started else ""))
        world = park(world, key, pr.rejectors)
        for event in events:
            world = wake(world, event)
        return world
    cleared = pr.nominated_node == "" and bool(pod.nominated_node_name)
    if pr.nominated_node == "":
        world = set_pod(world, pod.with_(nominated_node_name=""))
    world = park(world.note(f"{key} stays pending: {pr.message or pr.reasons[0]}"), key, pr.rejectors)
    return wake(world, nomination_changed(pod, "")) if cleared else world


def _deferred_attempt(world: World, pod: Pod, pr: Prediction, chosen: str) -> World:
    """A deferred resize's attempt (1.37, InPlacePodVerticalScalingSchedulerPreemption on). The pod
    runs on its node and stays there whatever the attempt finds: the failure handler keeps it in
    the queue although it is bound, and returns before it would nominate it or write its
    PodScheduled condition (schedule_one.go handleSchedulingFailure, isDeferredResize); the kubelet,
    not the scheduler, actuates the resize once there is room.

    * It fits: the cycle goes on to assume the pod, which the cache refuses for a pod it already
      has (backend/cache/cache.go AssumePod), an error: the pod goes back to the queue with no
      rejector (DeferredPodScheduling's Permit, meant to park it, is not reached). The model parks
      it so: only the flush retries it (upstream retries it on its backoff, to the same end).
    * It does not: its preemption ran on its own node; victims are deleted as any preemptor's, and
      lower-priority nominations there cleared, but it is not nominated. It waits for its
      rejectors' events (a victim gone from its node wakes it through NodeResourcesFit)."""
    key = pod.key
    if pr.outcome == "schedule":
        world = world.note(f"{key}'s deferred resize fits {pod.node_name} now; the attempt ends in an error at "
                           "assume (the pod is in the cache already) and it waits in the queue for the kubelet")
        return park(world, key, frozenset())
    if pr.outcome == "preempt":
        world, evicted = _preempt_victims(world, pr.victims[chosen])
        events: list[ClusterEvent] = []
        for cleared in pr.nominations_cleared.get(chosen, ()):
            other = world.state.pod_keyed(cleared)
            if other is not None:
                world = set_pod(world, other.with_(nominated_node_name=""))
                events.append(nomination_changed(other, ""))
        world = replace(world, preempted=world.preempted | set(evicted))
        world = world.note(f"{key}'s deferred resize preempts {', '.join(pr.victims[chosen]) or 'nobody new'} "
                           f"on {chosen}; it is not nominated")
        world = park(world, key, pr.rejectors)
        for event in events:
            world = wake(world, event)
        return world
    return park(world.note(f"{key}'s deferred resize stays deferred: {pr.message or pr.reasons[0]}"), key, pr.rejectors)


def success_message(filter_message: str, node: str, victims: int, release: str) -> str:
    """A preemptor's message after its preemption succeeded: from 1.37 DefaultPreemption's PostFilter
    status carries the placement (preemption.go Evaluator.Preempt, prefixed by default_preemption.go
    PostFilter), which the fit error appends to the filter reasons (framework/types.go FitError.Error)."""
    if not has(release, PREEMPTION_SUCCESS_MESSAGE):
        return filter_message
    return f"{filter_message} preemption: found a potential placement for pod on node {node}, preempting {victims} victims"


def attempt_group(world: World, key: str) -> World:
    """One pod-group cycle for the group ``key`` belongs to (reference.podgroup), and its effects."""
    pod = world.state.pod_keyed(key)
    if world.state.group_of(pod) is None:
        # The gang plugin's PreEnqueue: no PodGroup, no attempt (and no event, no message).
        return hold(world.note(f"{key} waits for its pod group {pod.group} to exist"), [key], frozenset())
    group = podgroup.unit_of(world.state, pod, world.release, world.gates)
    if group is None:
        # 1.37 with composite pod groups: a composite group above its pod group is missing.
        return hold(world.note(f"{key} waits for the composite pod groups above {pod.group} to exist"), [key],
                    frozenset())
    ga = podgroup.attempt(world.state, group, world.release, world.gates, world.now, dict(world.choices))
    pending = [p.key for p in podgroup.members_in_order(world.state, group)]
    if ga.outcome == "held":
        return hold(world.note(f"{group.key}: {ga.reasons[0]}"), pending, frozenset())
    outcome = {"schedule": "schedule", "preempt": "preempt"}.get(ga.outcome, "unschedulable")
    world = replace(world, predictions=world.predictions + tuple(
        Prediction(k, outcome if k in ga.placement or outcome == "unschedulable" else "unschedulable",
                   frozenset({ga.placement[k]}) if k in ga.placement else frozenset(), reasons=ga.reasons,
                   message="" if outcome == "schedule" and k in ga.placement else ga.messages.get(k, ""),
                   rejectors=ga.rejectors)
        for k in pending))
    world = replace(world, allowed_nodes=world.allowed_nodes + tuple(ga.ties.items()))
    if ga.outcome == "schedule":
        events = []
        for k, node in ga.placement.items():
            bound = _bound(world, world.state.pod_keyed(k), node)
            world = set_pod(world, bound)
            events.append(pod_bound(bound))
        world = world.note(f"{ga.reasons[0]}: " + ", ".join(f"{k} on {n}" for k, n in sorted(ga.placement.items())))
        # The pods the cycle could not place: from 1.37 requeued at once (``requeue``); 1.36 hands
        # each to FailureHandler alone (schedule_one_podgroup.go submitPodGroupAlgorithmResult), so
        # it is parked with its rejectors, which the binding of the others does not wake.
        rest = [k for k in pending if k not in ga.placement]
        for k in rest:
            world = world.note(f"{k} stays pending: {ga.messages.get(k, '')}")
            world = requeue(world, k) if has(world.release, GROUP_REST_RETRIED_AT_ONCE) else park(world, k, ga.rejectors)
        for event in events:
            world = wake(world, event)
        return world
    if ga.outcome == "preempt":
        # A victim already terminating is still one. The group is parked, not held back: the
        # PreEnqueue hold ends with the last delete call (reference.podgroup.GroupAttempt).
        world, evicted = _preempt_victims(world, ga.victims)
        for k in pending:
            member = world.state.pod_keyed(k)
            world = set_pod(world, member.with_(nominated_node_name=ga.nominations.get(k, "")))
        world = replace(world, preempted=world.preempted | set(evicted))
        world = world.note(f"{ga.reasons[0]}: {', '.join(ga.victims)}; placement "
                           + ", ".join(f"{k} on {n}" for k, n in sorted(ga.placement.items())))
        for k in pending:
            world = park(world, k, ga.rejectors)
        return world
    world = world.note(f"{group.key} stays pending: {ga.reasons[0]}")
    for k in pending:
        world = park(world, k, ga.rejectors)
    return world


def requeue(world: World, key: str) -> World:
    """From 1.37 a pod its group's successful cycle left unplaced goes straight back to the active
    queue, before the next cycle: not parked, no failure counted (the group's counts are reset), and
    its place in the queue kept (scheduling_queue.go AddAttemptedPodGroupIfNeeded, status Success)."""
    failures = tuple((k, n) for k, n in world.failures if k != key)
    return replace(world, parked=tuple(p for p in world.parked if p[0] != key), failures=failures,
                   queued=world.queued + ((key,) if key not in world.queued else ()))


def _bound(world: World, pod: Pod, node: str) -> Pod:
    # Before 1.35 nothing clears status.nominatedNodeName when a pod is bound: a preemptor
    # keeps showing the node it was nominated to (even if it landed elsewhere).
    kept = "" if has(world.release, NOMINATION_CLEARED_ON_BINDING, world.gates) else pod.nominated_node_name
    return pod.with_(node_name=node, nominated_node_name=kept, scheduled_at=world.now, start_time=world.now)


def _start_preemption(world: World, pod: Pod, node: str, victims, lower) -> tuple[World, bool]:
    """An async preemption handed to the world's executor (``World.executor``): its victims keep
    running until ``complete_preemption``. The executor clears the lower nominations before any
    victim's call, and nothing holds that step back, so it is taken at once. Whether it started:
    from 1.35 not when every victim is already terminating."""
    uid = executor.of_pod(pod).uid
    found = [p for p in (world.state.pod_keyed(k) for k in victims) if p is not None]
    marked = [executor.Victim(p.key, p.terminating, executor.POD if p.disruption_target_by_preemption else "")
              for p in found]
    nominated = [(k, world.state.pod_keyed(k).nominated_node_name) for k in lower if world.state.pod_keyed(k)]
    ex = executor.start(world.executor, executor.of_pod(pod), node, marked, nominated)
    if ex.work_of(uid) is None:
        return replace(world, executor=ex), False
    return replace(world, executor=executor.advance(ex, uid, _replies(world, executor.Replies()))), True


def complete_preemption(world: World, uid: str, replies: executor.Replies = executor.Replies()) -> World:
    """The rest of an in-flight preemption's calls (``World.executor``), and their effects: a victim
    whose delete went through is marked and terminating, one only patched carries the condition, and
    the preemptor is activated when the executor says so. A victim the API server no longer has
    answers NotFound, whatever ``replies`` says."""
    before = world.executor
    after = executor.complete(before, uid, _replies(world, replies, before.work_of(uid)))
    world = replace(world, executor=after)
    for call in after.calls[len(before.calls):]:
        victim = world.state.pod_keyed(call.pod)
        if victim is None or call.answer != executor.OK:
            continue
        if call.verb == executor.DELETE:
            world = replace(_preempted(world, victim), preempted=world.preempted | {call.pod})
        elif call.verb == executor.PATCH:
            world = set_pod(world, victim.with_(disruption_target_by_preemption=True))
    world = world.note(f"{uid}'s preemption calls completed: " + ", ".join(
        f"{c.verb} {c.pod} {c.answer}" for c in after.calls[len(before.calls):]))
    return activate(world, after.activated[len(before.activated):])


def _replies(world: World, replies: executor.Replies, work: executor.Work | None = None) -> executor.Replies:
    # Gone from the API server: a pod the world no longer has, or one whose grace period is over
    # (the world drops it when time passes; the API server already has).
    def gone(key: str) -> bool:
        pod = world.state.pod_keyed(key)
        return pod is None or (pod.deletion_timestamp is not None and pod.deletion_timestamp <= world.now)
    return replace(replies, missing=replies.missing | {v.key for v in (work.victims if work else ()) if gone(v.key)})


def _preempt_victims(world: World, victims) -> tuple[World, list[str]]:
    """Each victim marked and deleted; the keys of those the scheduler sent a call for. From 1.35
    a victim already being deleted (its owner deleted it) gets no call, so no DisruptionTarget
    and no Preempted event (executor.go prepareCandidateAsync), for a pod and a pod group alike."""
    skip_terminating = has(world.release, TERMINATING_VICTIMS_SKIPPED)
    evicted = []
    for v in victims:
        victim = world.state.pod_keyed(v)
        if victim is None or (victim.terminating and skip_terminating):
            continue
        world = _preempted(world, victim)
        evicted.append(v)
    return world, evicted


def _preempted(world: World, victim: Pod) -> World:
    # A victim already terminating (its owner deleted it) keeps its first deletion time: the
    # second delete does not move it. Before 1.35 such a victim still gets the DisruptionTarget
    # condition (upstream patches it before deleting again) and holds the preemptor back like any.
    ends = victim.deletion_timestamp or world.now + timedelta(seconds=victim.termination_grace_seconds)
    return set_pod(world, victim.with_(deletion_timestamp=ends, disruption_target_by_preemption=True))


__all__ = ["attempt", "attempt_group", "complete_preemption"]
