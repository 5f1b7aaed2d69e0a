"""The cluster objects the model reasons about, as frozen values.

Only the fields that decide priority, queueing, filtering and preemption are
kept. Quantities are plain integers in base units (cpu in millicores, memory
in bytes, extended resources in units); parsing Kubernetes quantity strings
happens at the edge, in the loaders.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Iterable, Literal, Mapping

PREEMPT_LOWER = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]




class cached_property:  # noqa: N801 - used as functools.cached_property is
    """A computed attribute stored on first use (frozen dataclasses included).

    functools.cached_property takes a lock on every first use in Python 3.11,
    which dominated the model's first prediction on a new state (tens of
    thousands of objects, each computing its indexes once). The model is pure
    and single-threaded per state, so no lock is needed: a race would only
    compute the same value twice.
    """

    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = self.func(obj)
        obj.__dict__[self.name] = value  # later reads find it without calling this
        return value


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: PreemptionPolicy = PREEMPT_LOWER
    annotations: tuple[tuple[str, str], ...] = ()
    description: str = ""

    @cached_property
    def annotation_map(self) -> dict[str, str]:
        return dict(self.annotations)

    @cached_property
    def _hash(self) -> int:
        return hash((self.name, self.value, self.global_default, self.preemption_policy, self.annotations,
                     self.description))

    def __hash__(self) -> int:
        # Classes key the toleration rule's memo, once per victim: hash the fields once.
        return self._hash


@dataclass(frozen=True)
class Taint:
    key: str
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    value: str = ""


@dataclass(frozen=True)
class Toleration:
    key: str = ""  # empty with operator Exists tolerates everything
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: str = ""  # empty matches every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.key == taint.key and self.value == taint.value


@dataclass(frozen=True)
class Requirement:
    """One label selector requirement (matchExpressions entry)."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator == "In":
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # NotIn


@dataclass(frozen=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.match_expressions
        )


@dataclass(frozen=True)
class PodAffinityTerm:
    selector: LabelSelector
    topology_key: str  # e.g. kubernetes.io/hostname, topology.kubernetes.io/zone


@dataclass(frozen=True)
class SpreadConstraint:
    """One of a pod's topologySpreadConstraints. Only DoNotSchedule ones filter (ScheduleAnyway
    ones score). The policies default as the scheduler defaults them (podtopologyspread/common.go
    filterTopologySpreadConstraints: minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore);
    matchLabelKeys is left out (the API server merges it into the selector at creation)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"] = "DoNotSchedule"
    min_domains: int = 1
    node_affinity_policy: Literal["Honor", "Ignore"] = "Honor"
    node_taints_policy: Literal["Honor", "Ignore"] = "Ignore"


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str = "default"
    labels: tuple[tuple[str, str], ...] = ()
    priority_class_name: str = ""
    # Stamped by admission. The model never re-reads the class for these.
    priority: int = 0
    preemption_policy: PreemptionPolicy = PREEMPT_LOWER
    requests: tuple[tuple[str, int], ...] = ()
    node_name: str = ""  # bound node; empty while pending
    nominated_node_name: str = ""
    # lastTransitionTime of PodScheduled=True; None when that condition is absent
    # (a pod created with spec.nodeName never gets it).
    scheduled_at: datetime | None = None
    start_time: datetime | None = None
    deletion_timestamp: datetime | None = None
    disruption_target_by_preemption: bool = False  # DisruptionTarget=True/PreemptionByScheduler
    termination_grace_seconds: int = 30
    node_selector: tuple[tuple[str, str], ...] = ()
    # Required node affinity: OR of terms, each an AND of requirements.
    node_affinity: tuple[tuple[Requirement, ...], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    pod_affinity: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity: tuple[PodAffinityTerm, ...] = ()
    # When the pod last entered the active queue; queue ties are broken by it.
    queued_at: datetime | None = None
    # What the pod uses of each resource, as the kubelet's stats show it (the eviction ranking's input).
    usage: tuple[tuple[str, int], ...] = ()
    # The PodGroup it belongs to (spec.schedulingGroup.podGroupName), in its namespace; "" for none.
    group: str = ""
    # An in-place resize the kubelet deferred (PodResizePending=True, reason Deferred): the requests
    # the spec now asks for, which the node could not give yet; () when none is deferred. The
    # scheduler's cache counts such a pod by the larger of those and what the kubelet allocated
    # (component-helpers PodRequests, determineEffectiveRequests), so ``requests`` normally holds
    # these already; they differ only where the cache lags the pod (a unit table's snapshot).
    deferred_requests: tuple[tuple[str, int], ...] = ()
    # What the kubelet allocated while the resize is deferred (its requests before the resize).
    allocated: tuple[tuple[str, int], ...] = ()
    topology_spread: tuple[SpreadConstraint, ...] = ()

    @cached_property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @cached_property
    def label_map(self) -> dict[str, str]:
        return dict(self.labels)

    @cached_property
    def request_map(self) -> dict[str, int]:
        return dict(self.requests)

    @cached_property
    def usage_map(self) -> dict[str, int]:
        return dict(self.usage)

    @property
    def terminating(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def resize_deferred(self) -> bool:
        """A running pod whose resize waits: with InPlacePodVerticalScalingSchedulerPreemption (1.37,
        alpha) the scheduler queues it as a preemptor bound to its own node (reference.resize)."""
        return bool(self.deferred_requests) and bool(self.node_name)

    @cached_property
    def desired_map(self) -> dict[str, int]:
        """What the pod asks for as its own scheduling sees it: a deferred resize's spec, else its requests."""
        return dict(self.deferred_requests) if self.deferred_requests else self.request_map

    def with_(self, **changes) -> Pod:
        return replace(self, **changes)


@dataclass(frozen=True)
class Node:
    name: str
    labels: tuple[tuple[str, str], ...] = ()
    allocatable: tuple[tuple[str, int], ...] = (("pods", 110),)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    # spec.podPreemptionPolicy.disableResizePreemption (1.37): who turned off preemption for deferred
    # resizes of this node's pods; any entry turns it off (deferredpodscheduling Filter).
    resize_preemption_disabled: tuple[str, ...] = ()

    @cached_property
    def label_map(self) -> dict[str, str]:
        # Every real node carries its hostname label; topology terms rely on it.
        return {"kubernetes.io/hostname": self.name, **dict(self.labels)}

    @cached_property
    def allocatable_map(self) -> dict[str, int]:
        return dict(self.allocatable)


@dataclass(frozen=True)
class PodDisruptionBudget:
    name: str
    namespace: str
    selector: LabelSelector
    disruptions_allowed: int  # status.disruptionsAllowed, as the disruption controller wrote it
    disrupted_pods: tuple[str, ...] = ()  # pod names already counted as disrupted
    # When set, the status is not given but derived from the pods, as the
    # disruption controller would: healthy matching pods minus minAvailable.
    min_available: int | None = None

    def allowed_in(self, pods: Iterable["Pod"]) -> int:
        if self.min_available is None:
            return self.disruptions_allowed
        healthy = sum(
            1 for p in pods
            if p.namespace == self.namespace and p.node_name and not p.terminating
            and not self.selector.empty and self.selector.matches(p.label_map)
        )
        return max(healthy - self.min_available, 0)


DisruptionMode = Literal["single", "all"]


@dataclass(frozen=True)
class PodGroup:
    """A PodGroup (scheduling.k8s.io, 1.36+): pods scheduled, and preempted, as one unit.

    ``min_count`` 0 is the basic policy (no gang); a gang binds none of its pods until
    ``min_count`` of them fit at once. ``disruption`` "all" makes the group one victim (1.36
    spells it disruptionMode PodGroup, 1.37 {all: {}}); "single" leaves each pod its own."""

    name: str
    namespace: str = "default"
    min_count: int = 0
    priority_class_name: str = ""
    priority: int = 0  # stamped by admission from the class
    preemption_policy: PreemptionPolicy = PREEMPT_LOWER
    disruption: DisruptionMode = "single"
    # spec.parentCompositePodGroupName (1.37, the CompositePodGroup gate): the composite group it is
    # a child of, in its namespace; "" for none.
    parent: str = ""

    @cached_property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def gang(self) -> bool:
        return self.min_count > 0

    def with_(self, **changes) -> PodGroup:
        return replace(self, **changes)


@dataclass(frozen=True)
class CompositePodGroup:
    """A CompositePodGroup (scheduling.k8s.io/v1alpha3, 1.37 alpha, the CompositePodGroup gate): a
    group of pod groups, or of other composite groups, under one priority and disruption mode.

    Its children name it (``parent`` of a PodGroup or of another CompositePodGroup); it names no
    pods itself. ``min_groups`` 0 is the basic policy; a gang needs that many of its children.
    ``preemption_policy`` None is a group created without the PodGroupPreemptionPolicy gate (it
    preempts as PreemptLowerPriority where its own policy counts)."""

    name: str
    namespace: str = "default"
    parent: str = ""
    min_groups: int = 0
    priority_class_name: str = ""
    priority: int = 0  # stamped by admission from the class
    preemption_policy: PreemptionPolicy | None = None
    disruption: DisruptionMode = "single"

    @cached_property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def gang(self) -> bool:
        return self.min_groups > 0

    def with_(self, **changes) -> CompositePodGroup:
        return replace(self, **changes)


@dataclass(frozen=True)
class ClusterState:
    priority_classes: tuple[PriorityClass, ...] = ()
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    pod_groups: tuple[PodGroup, ...] = ()
    # The CompositePodGroups the scheduler lists (it lists none without its CompositePodGroup gate).
    composite_groups: tuple[CompositePodGroup, ...] = ()

    # Indexes, computed once per (immutable) state: the model runs on clusters
    # of thousands of nodes and must not scan every pod for every node.

    @cached_property
    def _classes(self) -> dict[str, PriorityClass]:
        return {c.name: c for c in self.priority_classes}

    @cached_property
    def _nodes(self) -> dict[str, Node]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def _pods(self) -> dict[str, Pod]:
        return {p.key: p for p in self.pods}

    @cached_property
    def _by_node(self) -> dict[str, tuple[Pod, ...]]:
        out: dict[str, list[Pod]] = {}
        for p in self.pods:
            if p.node_name:
                out.setdefault(p.node_name, []).append(p)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _nominated(self) -> dict[str, tuple[Pod, ...]]:
        out: dict[str, list[Pod]] = {}
        for p in self.pods:
            if p.nominated_node_name and not p.node_name:
                out.setdefault(p.nominated_node_name, []).append(p)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def memo(self) -> dict:
        """Room for values other modules derive from this (immutable) state, once."""
        return {}

    @cached_property
    def with_anti_affinity(self) -> tuple[Pod, ...]:
        """Assigned pods that carry required anti-affinity terms."""
        return tuple(p for p in self.pods if p.node_name and p.pod_anti_affinity)

    def class_named(self, name: str) -> PriorityClass | None:
        return self._classes.get(name)

    def group_of(self, pod: Pod) -> PodGroup | None:
        """The PodGroup ``pod`` names, if it exists."""
        if not pod.group:
            return None
        return next((g for g in self.pod_groups if g.name == pod.group and g.namespace == pod.namespace), None)

    def group_named(self, namespace: str, name: str) -> PodGroup | None:
        return next((g for g in self.pod_groups if g.name == name and g.namespace == namespace), None)

    def composite_named(self, namespace: str, name: str) -> CompositePodGroup | None:
        return next((g for g in self.composite_groups if g.name == name and g.namespace == namespace), None)

    def children(self, composite: CompositePodGroup) -> tuple[PodGroup | CompositePodGroup, ...]:
        """The pod groups and composite groups that name ``composite`` as their parent."""
        return tuple(g for g in self.composite_groups + self.pod_groups
                     if g.parent == composite.name and g.namespace == composite.namespace)

    def members(self, group: PodGroup) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.group == group.name and p.namespace == group.namespace)

    def with_group(self, group: PodGroup) -> ClusterState:
        others = tuple(g for g in self.pod_groups if g.key != group.key)
        return replace(self, pod_groups=others + (group,))

    def node_named(self, name: str) -> Node | None:
        return self._nodes.get(name)

    def pod_keyed(self, key: str) -> Pod | None:
        return self._pods.get(key)

    def pods_on(self, node: str) -> tuple[Pod, ...]:
        return self._by_node.get(node, ())

    def nominated_to(self, node: str) -> tuple[Pod, ...]:
        return self._nominated.get(node, ())

    def pending(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if not p.node_name and not p.terminating)

    def without_pods(self, keys: Iterable[str]) -> ClusterState:
        drop = set(keys)
        return replace(self, pods=tuple(p for p in self.pods if p.key not in drop))

    def with_pod(self, pod: Pod) -> ClusterState:
        others = tuple(p for p in self.pods if p.key != pod.key)
        return replace(self, pods=others + (pod,))

    def with_class(self, pc: PriorityClass) -> ClusterState:
        others = tuple(c for c in self.priority_classes if c.name != pc.name)
        return replace(self, priority_classes=others + (pc,))

    def without_class(self, name: str) -> ClusterState:
        return replace(self, priority_classes=tuple(c for c in self.priority_classes if c.name != name))

    def with_node(self, node: Node) -> ClusterState:
        """The node added, or changed in place (its order among the nodes kept)."""
        if node.name in self._nodes:
            return replace(self, nodes=tuple(node if n.name == node.name else n for n in self.nodes))
        return replace(self, nodes=self.nodes + (node,))

    def without_node(self, name: str) -> ClusterState:
        return replace(self, nodes=tuple(n for n in self.nodes if n.name != name))


__all__ = [
    "PREEMPT_LOWER",
    "PREEMPT_NEVER",
    "ClusterState",
    "CompositePodGroup",
    "LabelSelector",
    "Node",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PodGroup",
    "PriorityClass",
    "Requirement",
    "SpreadConstraint",
    "Taint",
    "Toleration",
]
