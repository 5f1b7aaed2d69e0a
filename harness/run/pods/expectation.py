"""Scenarios against the model: step the model through a scenario, and check ``expect:`` blocks.

The same check runs twice: in tests/ against the model's view (so the model
is checked against a human reading of the spec) and in conformance/ against
what the cluster showed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from datetime import datetime, timedelta, timezone

from reference import nodes as node_events, scheduler as sched
from reference.queue import UNSCHEDULABLE_MAX_STAY
from reference.restart import disconnect, failover, partly_written, pause, restart, restart_apiserver
from reference.resize import NotRunning, resize_pod
from reference.release import DEFAULT_RELEASE, GROUP_POLICY_FROM_GROUP, has
from reference.admission import Rejected, validate_class_create, validate_class_update
from reference.scheduler import PodView, World

from harness.clusters.standby import LEASE_SECONDS
from harness.formats.common import ScenarioError
from harness.formats.nodes import NODE_ACTIONS, after, node_named
from harness.formats.pod_model import from_node, initial_state, to_class, to_group, to_node, to_pdb, to_pod
from harness.formats.pods import CPU, MEMORY, DuringFault, Expect, Scenario, Step

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


def settle(world: World) -> World:
    """Everything that follows from an action without the periodic flush: victims finish terminating."""
    for _ in range(100):
        if not any(p.terminating for p in world.state.pods):
            return world
        world = sched.advance(world, None, flush=False)
    raise RuntimeError("the model did not settle after 100 rounds of terminations")


def apply_step(world: World, step: Step, namespace: str = "default", partial: Partial | None = None) -> World:
    """One scenario step on the model world, settled; ``partial``: which of a preemption's writes
    a during: fault cut short (``fault_variants``)."""
    world = act_and_fault(world, step, namespace, partial)
    if step.settle is not None:
        # The outcome is looked at this long after the action, mid-way if need be.
        return sched.advance(world, world.now + step.settle.at(world.flush_after), flush=False)
    return settle(world)


def trajectory(world: World, step: Step, namespace: str = "default") -> list[tuple[float, dict[str, PodView]]]:
    """What the model predicts the step's pods to show, and from when: (seconds after the action,
    views) right after the action and at each moment a terminating pod is predicted gone, up to
    the moment apply_step looks at. Where ties let the scheduler choose, ``world.choices`` picks
    the branch."""
    world = act_and_fault(world, step, namespace)
    start = world.now  # the runner's clock starts once the action is done (a wait step's too)
    until = world.now + step.settle.at(world.flush_after) if step.settle is not None else None
    return [(0.0, sched.view(world))] + [((w.now - start).total_seconds(), sched.view(w)) for w in course(world, until)]


def course(world: World, until: datetime | None) -> list[World]:
    """The world at each moment one of its terminating pods is predicted gone, in order, up to
    ``until`` (None: until none is left terminating)."""
    out: list[World] = []
    for _ in range(100):
        ends = [p.deletion_timestamp for p in world.state.pods if p.deletion_timestamp is not None]
        if not ends or (until is not None and min(ends) > until):
            break
        world = sched.advance(world, min(ends), flush=False)
        out.append(world)
    return out


# How long after the action a terminating pod's end still races the scheduler's first attempt at
# what the step changed: the scheduler takes the step's pod from its informer and queue, kwok
# removes a terminating pod at its deletionTimestamp, and neither waits for the other.
RACE = timedelta(seconds=1)


def due_first(before: World, step: Step, done_at: datetime, namespace: str = "default") -> list[World]:
    """The step's outcomes had the terminating pods due by ``done_at`` (the action done) and RACE
    after it been gone before the scheduler first tried anything the step changed: for each
    moment such a pod is due, in order, every outcome ``sched.branches`` gives from there; none
    when no pod is due so soon.

    The model otherwise lets the action come first (x11-0005: a preemptor created in the second
    a terminating pod was due; the model had it preempt elsewhere, the scheduler, slower than
    kwok, found the room already free)."""
    due = sorted({p.deletion_timestamp for p in before.state.pods
                  if p.deletion_timestamp is not None and p.deletion_timestamp <= done_at + RACE})
    out: list[World] = []
    for moment in due:
        early = sched.advance(before, moment, flush=False)
        out += sched.branches(early, lambda w: apply_step(w, step, namespace))
    return out


def later_states(worlds: list[World], until: datetime) -> list[World]:
    """Each world's course on from its moment up to ``until``: the world at each moment one of its
    terminating pods is predicted gone. A step looked at mid-way (``settle``) is watched past its
    moment (the quiet time, a lagging cluster's grace), and kwok ends a pod at its
    deletionTimestamp whether the scheduler has caught up or not: the state the model puts at the
    moment may end, or never show, before the look does."""
    return [w for world in worlds for w in course(world, until)]


def retried_after_failure(before: World, predicted: World) -> list[str]:
    """Pods the step's outcome places (bound, or nominated with victims) on an attempt that
    follows a failed one: a pod parked before the step, or one that failed in it (a preemptor
    tried again once its victims are gone). The scheduler tries such a pod again only once its
    backoff is over (``backoff_queue.go`` getBackoffTime: 1 s doubling per failure to
    podMaxBackoffSeconds, 10 s, from its last failure; pods in backoffQ pop early only when
    activeQ is empty), and on a shared cluster other scenarios' events retry it and add to its
    failures, so the model cannot know that backoff; it puts the attempt at the event that woke
    the pod."""
    failed = set(before.parked_keys())
    out: list[str] = []
    for pr in predicted.predictions[len(before.predictions):]:
        if pr.pod in failed and pr.outcome in ("schedule", "preempt") and pr.pod not in out:
            out.append(pr.pod)
        failed.add(pr.pod)
    return out


def act(world: World, step: Step, namespace: str = "default") -> World:
    """The step's action on the model world, before anything that follows from it settles."""
    if step.createPod is not None:
        spec = step.createPod
        world = sched.create_pod(world, to_pod(spec, namespace), spec.priority, spec.preemptionPolicy)
    elif step.deletePod is not None:
        world = sched.delete_pod(world, f"{namespace}/{step.deletePod}")
    elif step.createClass is not None:
        world = _change_class(world, to_class(step.createClass), validate_class_create)
    elif step.updateClass is not None or step.patchClass is not None:
        world = _change_class(world, to_class(step.updateClass or step.patchClass), validate_class_update)
    elif step.deleteClass is not None:
        world = replace(world, state=world.state.without_class(step.deleteClass))
    elif step.createPodGroup is not None:
        world = sched.create_pod_group(world, to_group(step.createPodGroup, namespace), step.createPodGroup.preemptionPolicy)
    elif step.createPdb is not None:
        state = world.state
        world = replace(world, state=replace(state, pdbs=state.pdbs + (to_pdb(step.createPdb, namespace),)))
    elif step.pressure is not None:
        world = sched.pressure(world, step.pressure.node, step.pressure.resource, step.pressure.evictions)
    elif step.wait is not None:
        world = sched.advance(world, world.now + step.wait.at(world.flush_after))
    elif step.resizePod is not None:
        r = step.resizePod
        world = resize_pod(world, f"{namespace}/{r.name}", {k: v for k, v in ((CPU, r.milliCPU), (MEMORY, r.memoryRequest))
                                                            if v is not None})
    elif step.action in NODE_ACTIONS:
        world = node_step(world, step)
    else:
        world = fault_on(world, step)
    return world


def fault_on(world: World, fault) -> World:
    """A fault step's, or a during: fault's, fault on the model world (both carry the fault fields)."""
    if fault.restartScheduler is not None:
        return restart(world, graceful=fault.restartScheduler == "graceful")
    if fault.restartApiserver is not None:
        return restart_apiserver(world)
    if fault.failover is not None:
        return failover(world, LEASE_SECONDS, taken=fault.failover == "takeLease")
    if fault.disconnectScheduler is not None:
        return disconnect(world, fault.disconnectScheduler.total_seconds())
    if fault.pauseScheduler is not None:
        return pause(world, fault.pauseScheduler.total_seconds())
    return world


def modelled_seconds(world: World, fault) -> float:
    """How far ``fault_on`` moves the model's clock from ``world``: a pause's or a cut's length, a
    lease's; a restart takes the model no time, however long the real one takes."""
    return (fault_on(world, fault).now - world.now).total_seconds()


@dataclass(frozen=True)
class Partial:
    """A preemption's writes cut short by a during: fault (reference.restart.partly_written)."""

    preemptor: str
    undone: frozenset[str]  # victims marked but not deleted
    nomination_lost: bool


def act_and_fault(world: World, step: Step, namespace: str = "default", partial: Partial | None = None) -> World:
    """The step's action, and the fault ``during:`` injects at its point if the point comes."""
    after = act(world, step, namespace)
    if step.during is None or not point_reached(world, after, step):
        return after
    if partial is not None:
        after = partly_written(after, partial.preemptor, partial.undone, partial.nomination_lost)
    return inject(after, step.during)


MAX_VICTIMS = 3  # more victims than this: only the writes done, or none of the later ones


def fault_variants(before: World, step: Step, namespace: str = "default") -> list[Partial | None]:
    """Which of the action's preemption writes a during: fault may find missing, by its point:
    None (all written) first. At victimMarked any victim's deletion and the nomination may be
    missing; at victimDeleting at least one victim is deleting; at nominated the nomination is
    written. At victimGone every write is long done, and a pause loses none."""
    # A paused scheduler does its remaining writes once it goes on, and a leader whose lease was
    # taken runs on until its renew deadline (seconds, where the writes take milliseconds): none is lost.
    if (step.during is None or step.during.at == "victimGone" or step.during.pauseScheduler is not None
            or step.during.failover == "takeLease"):
        return [None]
    after = act(before, step, namespace)
    if not point_reached(before, after, step):
        return [None]
    already = {p.key for p in before.state.pods if p.terminating}
    victims = sorted(p.key for p in after.state.pods if p.terminating and p.key not in already)
    preemptor = next((p.key for p in after.state.pods if p.nominated_node_name and not p.node_name
                      and (step.createPod is None or p.name == step.createPod.name)), "")
    subsets = ([frozenset(c) for n in range(len(victims) + 1) for c in combinations(victims, n)]
               if len(victims) <= MAX_VICTIMS else [frozenset(victims[1:])])
    if step.during.at == "victimDeleting":
        subsets = [u for u in subsets if len(u) < len(victims)]
    lost = (False,) if step.during.at == "nominated" or not preemptor else (False, True)
    out: list[Partial | None] = [None]
    out += [Partial(preemptor, u, nl) for u in subsets for nl in lost if u or nl]
    return out


def point_reached(before: World, after: World, step: Step) -> bool:
    """Whether the action leads to the fault's point. The model's preemption writes its victims'
    marks and deletions and the preemptor's nomination at once, so each point is reached or not
    by the action itself."""
    assert step.during is not None
    if step.during.at == "nominated":
        pod = step.createPod.name if step.createPod else None
        return any(p.nominated_node_name and not p.node_name and (pod is None or p.name == pod)
                   for p in after.state.pods)
    already = {p.key for p in before.state.pods if p.terminating}
    return any(p.terminating and p.key not in already for p in after.state.pods)


def inject(world: World, fault: DuringFault) -> World:
    """The fault at its point. A kill between the preemption's writes leaves some undone; the
    restarted scheduler tries the preemptor again from the same state and makes the same
    choice, so the model lets the writes come first. At victimGone the world is the moment the
    first victim is predicted gone (the model binds the preemptor in that moment: a scheduler
    restarted just before it binds binds it once it is back)."""
    if fault.at == "victimGone":
        ends = [p.deletion_timestamp for p in world.state.pods if p.deletion_timestamp is not None]
        if ends:
            world = sched.advance(world, min(ends), flush=False)
    return fault_on(world, fault)


def node_step(world: World, step: Step) -> World:
    """A node step on the model: the node as the step leaves it, through the scheduler's node events."""
    name = node_named(step)
    if step.addNode is not None:
        return node_events.add_node(world, to_node(step.addNode))
    if step.deleteNode is not None:
        return node_events.delete_node(world, name)
    old = world.state.node_named(name)
    spec = after({name: from_node(old)}, step)[name]
    return node_events.update_node(world, to_node(spec))


def _change_class(world: World, pc, validate) -> World:
    decision = validate(world.state, pc)
    if isinstance(decision, Rejected):
        return replace(world, rejected=world.rejected + ((pc.name, decision.reason),))
    return replace(world, state=world.state.with_class(pc))


def simulate(scenario: Scenario, build: str, now: datetime = EPOCH, release: str = DEFAULT_RELEASE,
             gates: tuple = (), flush: timedelta = UNSCHEDULABLE_MAX_STAY) -> list[World]:
    """The model's world after the set-up and after each step. ``gates``: the run's own
    (harness.gates.Settings.gates); the scenario's come on top."""
    gates = tuple(gates) + scenario.cluster_settings().gates
    state = initial_state(scenario, now, policy_field=has(release, GROUP_POLICY_FROM_GROUP, gates))
    state = replace(state, pdbs=tuple(to_pdb(b, "default") for b in scenario.pdbs))
    worlds = [sched.start(state, build, now, release, gates, flush)]
    for i, step in enumerate(scenario.steps):
        try:
            worlds.append(apply_step(worlds[-1], step))
        except sched.EvictionTie as e:
            raise ScenarioError(f"{scenario.id}: steps[{i}].pressure: {e}") from None
        except node_events.NodeNotEmpty as e:
            raise ScenarioError(f"{scenario.id}: steps[{i}].deleteNode: {e}") from None
        except NotRunning as e:
            raise ScenarioError(f"{scenario.id}: steps[{i}].resizePod.name: {e}") from None
    return worlds


@dataclass(frozen=True)
class Mismatch:
    pod: str
    field: str
    expected: str
    actual: str


def _as_set(nodes: str | list[str]) -> set[str]:
    return {nodes} if isinstance(nodes, str) else set(nodes)


def check_expect(expect: Expect, pods: dict[str, PodView], rejected: dict[str, str],
                 priorities: dict[str, int] | None = None, messages: dict[str, str] | None = None) -> list[Mismatch]:
    """Compare an ``expect:`` block with a view of the pods (model's or cluster's)."""
    out: list[Mismatch] = []
    gone = PodView("gone")
    for name, nodes in expect.running.items():
        v = pods.get(name, gone)
        if v.phase != "running" or v.node not in _as_set(nodes):
            out.append(Mismatch(name, "running", f"running on {_fmt(nodes)}", _describe(v)))
    for name in expect.preempted:
        v = pods.get(name, gone)
        if not v.preempted:
            out.append(Mismatch(name, "preempted", "preempted", _describe(v)))
    for name in expect.notPreempted:
        v = pods.get(name, gone)
        if v.preempted:
            out.append(Mismatch(name, "notPreempted", "not preempted", _describe(v)))
    for name in expect.pending:
        v = pods.get(name, gone)
        if v.phase != "pending":
            out.append(Mismatch(name, "pending", "pending", _describe(v)))
    for name, nodes in expect.nominated.items():
        v = pods.get(name, gone)
        if v.nominated not in _as_set(nodes):
            out.append(Mismatch(name, "nominated", f"nominated to {_fmt(nodes)}", _describe(v)))
    for name, part in expect.rejected.items():
        reason = rejected.get(name)
        if reason is None or part not in reason:
            out.append(Mismatch(name, "rejected", f"rejected with '{part}'", reason or "accepted"))
    for name, value in expect.priority.items():
        got = (priorities or {}).get(name)
        if got != value:
            out.append(Mismatch(name, "priority", str(value), str(got)))
    for name in expect.evicted:
        v = pods.get(name, gone)
        if v.phase != "evicted":
            out.append(Mismatch(name, "evicted", "evicted by its kubelet", _describe(v)))
    for name, part in expect.message.items():
        got = (messages or {}).get(name, "")
        if part not in got:
            out.append(Mismatch(name, "message", f"a scheduling failure message with '{part}'", got or "no message"))
    return out


def _fmt(nodes: str | list[str]) -> str:
    return nodes if isinstance(nodes, str) else "one of " + ", ".join(sorted(nodes))


def _describe(v: PodView) -> str:
    return str(v)


def model_priorities(world: World) -> dict[str, int]:
    return {p.name: p.priority for p in world.state.pods}


def model_messages(world: World) -> dict[str, str]:
    """Each pending pod's scheduling failure message, as its last attempt in the model left it."""
    pending = {p.key for p in world.state.pods if not p.node_name}
    out: dict[str, str] = {}
    for pr in world.predictions:
        if pr.pod in pending and pr.message:
            out[pr.pod.split("/", 1)[1]] = pr.message
    return out


def model_rejections(world: World) -> dict[str, str]:
    return dict(world.rejected)


__all__ = ["Mismatch", "apply_step", "check_expect", "due_first", "later_states", "model_messages",
           "retried_after_failure", "simulate", "settle"]
