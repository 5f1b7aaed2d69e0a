"""Reading a pod scenario's recorded history as the model sees the cluster, and judging a step.

Pods, their conditions, nominations and the Preempted events come from the watch history
(``PodLog``), never from a poll. Priority classes and PDB status are read directly when a
step starts: the runner made the classes itself and they change only by its own actions,
and a PDB's status is the disruption controller's count, which ``wait_pdbs_current``
already waited to be current; watches on them would add two threads per scenario for no
verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from harness.formats.pod_model import to_class, to_group, to_node, to_pdb, to_pod
from harness.formats.pods import Scenario
from harness.kube import condition, disrupted_by_preemption
from harness.run.pods.faults import Fault, preempted_again
from harness.run.names import Names
from harness.run.pods.act import PodClient
from harness.run.pods.compare import compare
from harness.run.pods.expectation import Mismatch
from harness.run.pods.history import PodLog
from reference import eviction
from reference.admission import admit_pod_group
from reference.release import GROUP_POLICY_FROM_GROUP, has
from reference import scheduler as sched
from reference.objects import ClusterState
from reference.preemption import filter_nodes
from reference.queue import UNSCHEDULABLE_MAX_STAY
from reference.requeue import assigned_pod_gone
from reference.world import wake
from reference.scheduler import PodView, World


def pod_views(log: PodLog, names: Names, rejected: dict[str, str]) -> tuple[dict[str, PodView], dict[str, int]]:
    """Each pod as the model's views put it, and each pod's priority, from the recorded history."""
    preempted = log.preempted()
    out: dict[str, PodView] = {}
    priorities: dict[str, int] = {}
    for v in log.pods():
        phase = "terminating" if v.metadata.deletion_timestamp else ("running" if v.spec.node_name else "pending")
        if v.status.phase in ("Failed", "Succeeded"):
            phase = "evicted" if evicted_for_pressure(v) else f"{v.status.phase} ({v.status.reason}: {v.status.message})"
        out[v.metadata.name] = PodView(phase, names.scenario_node(v.spec.node_name or ""),
                                       names.scenario_node(v.status.nominated_node_name or ""),
                                       v.metadata.name in preempted)
        priorities[v.metadata.name] = v.spec.priority
    for name in preempted:
        out.setdefault(name, PodView("gone", preempted=True))
    for name in rejected:
        out.setdefault(name, PodView("rejected"))
    return out, priorities


def evicted_for_pressure(pod: client.V1Pod) -> bool:
    """What the kubelet's pressure eviction leaves on a pod: phase Failed, reason Evicted, the
    "low on resource" message and DisruptionTarget by the kubelet. A limit eviction, or a
    pod the kubelet refused to admit under pressure, shows some of these but not all."""
    c = condition(pod, "DisruptionTarget")
    return (pod.status.phase == "Failed" and pod.status.reason == eviction.REASON
            and (pod.status.message or "").startswith("The node was low on resource")
            and c is not None and c.status == "True" and c.reason == eviction.DISRUPTION_REASON)


def evicted(log: PodLog, names: Names) -> tuple[tuple[str, str], ...]:
    """The scenario's pods evicted by their kubelet, and the scenario node each was on."""
    return tuple((f"default/{v.metadata.name}", names.scenario_node(v.spec.node_name or ""))
                 for v in log.pods() if evicted_for_pressure(v))


def messages(log: PodLog) -> dict[str, str]:
    """Each pending pod's scheduling failure message (its PodScheduled=False condition)."""
    out = {}
    for v in log.pods():
        c = condition(v, "PodScheduled")
        if not v.spec.node_name and c is not None and c.status == "False" and c.message:
            out[v.metadata.name] = c.message
    return out


def was_attempted(log: PodLog, name: str) -> bool:
    """Whether the scheduler has tried the pod: bound, or marked unschedulable; a pod gone counts.
    A pod not recorded yet has not been tried (the runner created it: its version is on the way)."""
    pod = log.pod(name)
    if pod is None:
        return log.seen(name)
    return condition(pod, "PodScheduled") is not None  # True (bound) or False (tried and failed)


def faults(log: PodLog, release: str, build: str, restarts: tuple[datetime, ...] = ()) -> list[Fault]:
    """What no specification allows, named, with the events that show it; ``restarts``: when the
    kit restarted the scheduler."""
    return preempted_again(log.preempted_events(), release, build, displaced(log), restarts)


def displaced(log: PodLog) -> frozenset[str]:
    """UIDs of pods whose nomination was cleared after being set: a preemptor that lost its node
    to a higher one (its recorded versions go from nominated to not nominated)."""
    out = set()
    for name in {v.name for v in log.versions}:
        had = False
        for v in log.of(name):
            nominated = bool(v.pod.status and v.pod.status.nominated_node_name)
            if had and not nominated and not v.pod.spec.node_name and v.kind != "DELETED":
                out.add(v.pod.metadata.uid)
            had = had or nominated
    return frozenset(out)


def observe_world(log: PodLog, act: PodClient, scenario: Scenario, build: str, release: str,
                  gates: tuple = (), rejectors_then: Mapping[str, frozenset[str]] | None = None,
                  flush: timedelta = UNSCHEDULABLE_MAX_STAY) -> World:
    """The cluster as the model sees it, with the real times.

    ``rejectors_then``: the plugins that rejected each pod at the attempt that parked it, as the
    model had them at the end of the step before; what wakes a parked pod is theirs to say."""
    names = act.names
    classes = []
    for name in act.created_classes:
        try:
            pc = act.kube.scheduling.read_priority_class(name)
        except ApiException as e:
            if e.status == 404:
                continue
            raise
        spec = act.class_specs.get(names.unprefix(name))
        if spec is not None:
            classes.append(to_class(spec.model_copy(update={
                "value": pc.value, "globalDefault": bool(pc.global_default),
                "preemptionPolicy": pc.preemption_policy or "PreemptLowerPriority",
                "annotations": dict(pc.metadata.annotations or {})})))
    pods, parked = [], []
    for v in log.pods():
        spec = act.pod_specs.get(v.metadata.name)
        if spec is None or v.status.phase in ("Failed", "Succeeded"):  # a finished pod holds no room
            continue
        sched_cond = condition(v, "PodScheduled")
        scheduled_at = sched_cond.last_transition_time if sched_cond is not None and sched_cond.status == "True" else None
        pods.append(to_pod(
            spec, "default",
            priority_class_name=names.unprefix(v.spec.priority_class_name or ""),
            priority=v.spec.priority or 0,
            preemption_policy=v.spec.preemption_policy or "PreemptLowerPriority",
            node_name=names.scenario_node(v.spec.node_name or ""),
            nominated_node_name=names.scenario_node(v.status.nominated_node_name or ""),
            scheduled_at=scheduled_at,
            start_time=v.status.start_time,
            deletion_timestamp=v.metadata.deletion_timestamp,  # already includes the grace period
            disruption_target_by_preemption=disrupted_by_preemption(v),
            # A pod put back as unschedulable re-enters the queue then.
            queued_at=sched_cond.last_transition_time if sched_cond is not None and sched_cond.status == "False"
            else v.metadata.creation_timestamp,
        ))
        if not v.spec.node_name and sched_cond is not None and sched_cond.status == "False":
            parked.append((f"default/{v.metadata.name}", sched_cond.last_transition_time))
    pdbs = []
    for b in act.kube.policy.list_namespaced_pod_disruption_budget(names.namespace).items:
        spec = next((x for x in act.pdb_specs() if x.name == b.metadata.name), None)
        if spec is None:
            continue
        st = b.status
        pdbs.append(replace(to_pdb(spec, "default", st.disruptions_allowed if st else 0),
                            disrupted_pods=tuple((st.disrupted_pods or {}) if st else {})))
    state = ClusterState(tuple(classes), tuple(to_node(n) for n in act.node_specs.values()), tuple(pods), tuple(pdbs))
    for g in act.group_specs:
        # Its priority was resolved from its class on create, as the model's admission does.
        decision = admit_pod_group(state, to_group(g), policy_field=has(release, GROUP_POLICY_FROM_GROUP, tuple(gates)),
                                   requested_policy=g.preemptionPolicy)
        if decision:
            state = state.with_group(decision.obj)
    # The cluster does not show which plugins rejected a parked pod. The model's own account of
    # the attempt that parked it comes first; only a pod it has none for (parked during the
    # set-up) is read from the state as it is now. Pods that moved since can shrink the present
    # rejectors (to NodeAffinity alone, say) and hide the event that wakes the pod.
    rejectors = parked_rejectors(state, [key for key, _ in parked], rejectors_then or {})
    return World(state, datetime.now(timezone.utc), build, parked=tuple(parked), release=release,
                 preempted=frozenset(f"default/{n}" for n in log.preempted()),
                 rejected=tuple(act.rejected.items()), rejectors=rejectors, evicted=evicted(log, names),
                 gates=tuple(gates), flush_after=flush)


def woken_by_removals(observed: World, then: World | None) -> World:
    """``observed`` with the parked pods woken that a removal since ``then`` (the model's world at
    the end of the last step) may help, as the scheduler's informer woke them: a pod ``then`` had
    on a node that is gone now, for the pods parked before it was due to go. Between the
    informer's delete and the bind that follows it, the cluster can be read with the victim gone
    and its preemptor still parked; without this the model kept the preemptor parked until the
    flush (x52-0681, upstream, on a loaded machine)."""
    if then is None:
        return observed
    present = {p.key for p in observed.state.pods}
    world = observed
    for pod in (p for p in then.state.pods if p.node_name and p.key not in present):
        due = pod.deletion_timestamp
        later = tuple(p for p in world.parked if due is not None and p[1] > due)  # parked after: it saw the room
        woken = wake(replace(world, parked=tuple(p for p in world.parked if p not in later)), assigned_pod_gone(pod))
        world = replace(woken, parked=woken.parked + later)
    return sched.run_queue(world, set()) if world.queued != observed.queued else world


def parked_rejectors(state: ClusterState, parked: list[str],
                     then: Mapping[str, frozenset[str]]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each parked pod's rejectors: the model's from the attempt that parked it where it has
    them, else the filters' verdict on ``state``."""
    return tuple((key, then[key] if key in then else filter_nodes(state, state.pod_keyed(key))[2]) for key in parked)


@dataclass(frozen=True)
class Look:
    """One look at a step in progress: the closest allowed world and what differs from it."""

    world: World
    mismatches: list[Mismatch]
    observed: dict[str, PodView]
    priorities: dict[str, int]
    attempted: bool

    @property
    def settled(self) -> bool:
        return not self.mismatches and self.attempted


def look(log: PodLog, names: Names, rejected: dict[str, str], worlds: list[World], must_attempt: set[str]) -> Look:
    observed, priorities = pod_views(log, names, rejected)
    # Where the scheduler may choose, each choice is a world of its own: the closest one counts.
    scored = [(w, compare(sched.view(w), observed, dict(w.allowed_nodes))) for w in worlds]
    world, mismatches = min(scored, key=lambda wm: len(wm[1]))
    return Look(world, mismatches, observed, priorities, all(was_attempted(log, n) for n in must_attempt))


def reasons(before: World, predicted: World, outcomes: int) -> list[str]:
    """The model's reasons for its prediction of one step, as the report prints them."""
    out = list(predicted.log[len(before.log):])
    for pr in predicted.predictions[len(before.predictions):]:
        for v in pr.per_node:
            extra = "; ".join(f"{k} {why}" for k, why in v.exempted)
            out.append(f"  {pr.pod} node {v.node}: {v.reason}" + (f"; exempted: {extra}" if extra else ""))
    if outcomes > 1:
        out.append(f"  ({outcomes} outcomes allowed by ties, pods due to go about the action, or the course past "
                   "a mid-way look's moment; the closest is shown)")
    return out
