"""The pod scenario format's bridge to the model: a scenario's classes, nodes, pods, groups and
PDBs as reference.objects, and its declared start as a ClusterState."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reference.objects import (
    ClusterState,
    LabelSelector,
    Node,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    Taint,
    Toleration,
)

from harness.formats.common import ScenarioError
from harness.formats.nodes import TaintSpec
from harness.formats.pods import (CPU, EPHEMERAL_STORAGE, MEMORY, PIDS, TOPOLOGY, AffinityTerm, ClassSpec, NodeSpec, PdbSpec, PodGroupSpec,
                                  PodSpec, Scenario)
from harness.kube import NODE_MEMORY, NODE_MILLI_CPU, NODE_STORAGE, SLOT

def to_class(c: ClassSpec) -> PriorityClass:
    return PriorityClass(c.name, c.value, c.globalDefault, c.preemptionPolicy, tuple(sorted(c.annotations.items())),
                         c.description)


def to_node(n: NodeSpec) -> Node:
    return Node(n.name, labels=tuple(sorted(n.labels.items())),
                allocatable=(("pods", 110), (SLOT, n.slots), (EPHEMERAL_STORAGE, NODE_STORAGE), (MEMORY, NODE_MEMORY),
                             (CPU, n.milliCPU)),
                taints=tuple(Taint(t.key, t.effect, t.value) for t in n.taints), unschedulable=n.unschedulable)


def from_node(n: Node) -> NodeSpec:
    """The scenario node a model node came from (``to_node``'s inverse), for a node step to change."""
    return NodeSpec(name=n.name, slots=n.allocatable_map.get(SLOT, 0), milliCPU=n.allocatable_map.get(CPU, NODE_MILLI_CPU),
                    labels=dict(n.labels),
                    taints=[TaintSpec(key=t.key, value=t.value, effect=t.effect) for t in n.taints],
                    unschedulable=n.unschedulable)


def _terms(terms: list[AffinityTerm]) -> tuple[PodAffinityTerm, ...]:
    return tuple(PodAffinityTerm(LabelSelector(tuple(sorted(t.labels.items()))), TOPOLOGY[t.topology]) for t in terms)


def to_pod(p: PodSpec, namespace: str = "default", **facts: Any) -> Pod:
    """The model's view of a scenario pod; ``facts`` are what admission and the cluster decided."""
    fields: dict[str, Any] = dict(
        labels=tuple(sorted(p.labels.items())), priority_class_name=p.priorityClassName,
        requests=tuple((r, q) for r, q in ((SLOT, p.slots), (EPHEMERAL_STORAGE, p.storageRequest),
                                           (MEMORY, p.memory_request), (CPU, p.cpu_request)) if q),
        usage=((EPHEMERAL_STORAGE, p.writes), (MEMORY, p.memory), (PIDS, p.processes)), termination_grace_seconds=p.grace,
        node_selector=tuple(sorted(p.nodeSelector.items())),
        tolerations=tuple(Toleration(t.key, t.operator, t.value, t.effect) for t in p.tolerations),
        pod_affinity=_terms(p.podAffinity), pod_anti_affinity=_terms(p.podAntiAffinity), group=p.group,
    )
    return Pod(p.name, namespace, **{**fields, **facts})


def to_group(g: PodGroupSpec, namespace: str = "default") -> PodGroup:
    return PodGroup(g.name, namespace, min_count=g.minCount or 0, priority_class_name=g.priorityClassName,
                    disruption=g.disruptionMode)


def to_pdb(b: PdbSpec, namespace: str, disruptions_allowed: int | None = None) -> PodDisruptionBudget:
    """The model's PDB: with the observed status, or (None) computed from pods as the controller would."""
    return PodDisruptionBudget(b.name, namespace, LabelSelector(tuple(sorted(b.selector.items()))),
                               disruptions_allowed if disruptions_allowed is not None else -1,
                               min_available=b.minAvailable if disruptions_allowed is None else None)


def initial_state(s: Scenario, now: datetime, policy_field: bool = False) -> ClusterState:
    """The scenario's declared start, as if every initial pod had been admitted and placed in order.
    ``policy_field``: PodGroups have spec.preemptionPolicy (reference.release.GROUP_POLICY_FROM_GROUP)."""
    from reference.admission import admit_pod, admit_pod_group

    state = ClusterState(tuple(to_class(c) for c in s.priorityClasses), tuple(to_node(n) for n in s.nodes))
    for i, g in enumerate(s.podGroups):
        decision = admit_pod_group(state, to_group(g), policy_field=policy_field, requested_policy=g.preemptionPolicy)
        if not decision:
            raise ScenarioError(f"{s.id}: podGroups[{i}]: {g.name} rejected by admission: {decision.reason}")
        state = state.with_group(decision.obj)
    for i, p in enumerate(s.pods):
        when = now - timedelta(seconds=len(s.pods) - i)
        decision = admit_pod(state, to_pod(p))
        if not decision:
            raise ScenarioError(f"{s.id}: pods[{i}]: {p.name} rejected by admission: {decision.reason}")
        pod = decision.obj.with_(node_name=p.node, start_time=when,
                                 scheduled_at=None if p.bypassScheduler else when)
        state = state.with_pod(pod)
    return state
