"""Priority admission: what a PriorityClass may be, and what a new pod's priority becomes.

Upstream: plugin/pkg/admission/priority/admission.go and
pkg/apis/scheduling/validation/validation.go.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .objects import PREEMPT_LOWER, ClusterState, Pod, PodGroup, PriorityClass

HIGHEST_USER_DEFINABLE = 1_000_000_000
SYSTEM_PREFIX = "system-"
SYSTEM_CLASSES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}


def system_class(name: str) -> PriorityClass | None:
    """The classes every API server creates for itself at start-up (and which no one may change)."""
    value = SYSTEM_CLASSES.get(name)
    return PriorityClass(name, value) if value is not None else None


@dataclass(frozen=True)
class Accepted:
    obj: Pod | PriorityClass | PodGroup
    reason: str = ""


@dataclass(frozen=True)
class Rejected:
    reason: str  # the key part of the API server's message
    field: str = ""

    def __bool__(self) -> bool:  # a rejection is falsy so `if decision:` reads naturally
        return False


Decision = Accepted | Rejected


def default_class(state: ClusterState) -> PriorityClass | None:
    """The global default; when a race left several, the lowest value wins."""
    defaults = [c for c in state.priority_classes if c.global_default]
    return min(defaults, key=lambda c: c.value, default=None)


def validate_class_create(state: ClusterState, pc: PriorityClass) -> Decision:
    if pc.name.startswith(SYSTEM_PREFIX):
        if SYSTEM_CLASSES.get(pc.name) != pc.value:
            return Rejected(
                f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only",
                "metadata.name",
            )
    elif pc.value > HIGHEST_USER_DEFINABLE:
        return Rejected(f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}", "value")
    if state.class_named(pc.name) is not None:
        return Rejected(f'priorityclasses.scheduling.k8s.io "{pc.name}" already exists', "metadata.name")
    if pc.global_default and (d := default_class(state)) is not None:
        return Rejected(f"PriorityClass {d.name} is already marked as default. Only one default can exist", "globalDefault")
    return Accepted(pc)


def validate_class_update(state: ClusterState, new: PriorityClass) -> Decision:
    old = state.class_named(new.name)
    if old is None:
        return Rejected(f'priorityclasses.scheduling.k8s.io "{new.name}" not found', "metadata.name")
    if new.value != old.value:
        return Rejected("may not be changed in an update.", "value")
    if new.preemption_policy != old.preemption_policy:
        return Rejected("field is immutable", "preemptionPolicy")
    if new.global_default and (d := default_class(state)) is not None and d.name != new.name:
        return Rejected(f"PriorityClass {d.name} is already marked as default. Only one default can exist", "globalDefault")
    return Accepted(new)


def resolve_class(state: ClusterState, class_name: str) -> tuple[str, int, str] | Rejected:
    """(class name, value, preemption policy) that admission stamps for ``class_name``: the global
    default (or none: 0) when it is empty; a rejection when no such class exists."""
    if not class_name:
        d = default_class(state)
        return (d.name, d.value, d.preemption_policy) if d else ("", 0, PREEMPT_LOWER)
    pc = state.class_named(class_name) or system_class(class_name)
    if pc is None:
        return Rejected(f"no PriorityClass with name {class_name} was found", "spec.priorityClassName")
    return pc.name, pc.value, pc.preemption_policy


def admit_pod(
    state: ClusterState,
    pod: Pod,
    *,
    requested_priority: int | None = None,
    requested_policy: str | None = None,
) -> Decision:
    """Stamp priority and policy onto a new pod, or reject it.

    ``requested_*`` are what the pod spec itself set, if anything; the stamped
    values on ``pod`` are ignored and recomputed here.
    """
    resolved = resolve_class(state, pod.priority_class_name)
    if isinstance(resolved, Rejected):
        return resolved
    name, value, policy = resolved
    if requested_priority is not None and requested_priority != value:
        return Rejected(
            f"the integer value of priority ({requested_priority}) must not be provided in pod spec; "
            f"priority admission controller computed {value} from the given PriorityClass name",
            "spec.priority",
        )
    if requested_policy is not None and requested_policy != policy:
        return Rejected(
            f"the string value of PreemptionPolicy ({requested_policy}) must not be provided in pod spec; "
            f"priority admission controller computed {policy} from the given PriorityClass name",
            "spec.preemptionPolicy",
        )
    reason = f"priority {value} and policy {policy} from " + (f"class {name}" if name else "no class (no global default)")
    return Accepted(replace(pod, priority_class_name=name, priority=value, preemption_policy=policy), reason)


def admit_pod_group(state: ClusterState, group: PodGroup, *, policy_field: bool = False,
                    requested_policy: str | None = None) -> Decision:
    """A new PodGroup's priority, resolved from its class on create as for a pod (admitPodGroup, with
    workload-aware preemption on); the class must exist.

    ``policy_field``: the PodGroupPreemptionPolicy gate is on (1.37), so the group has a
    spec.preemptionPolicy, which the v1beta1 defaulter sets to PreemptLowerPriority before admission
    runs when the group leaves it out: a group whose class says Never must then say Never itself, or
    it is refused. ``requested_policy``: what the group's spec set."""
    resolved = resolve_class(state, group.priority_class_name)
    if isinstance(resolved, Rejected):
        return resolved
    name, value, policy = resolved
    if policy_field and (requested_policy or PREEMPT_LOWER) != policy:
        return Rejected(
            f"the string value of PreemptionPolicy ({requested_policy or PREEMPT_LOWER}) must not be provided in pod "
            f"group spec; priority admission controller computed {policy} from the given PriorityClass name",
            "spec.preemptionPolicy",
        )
    reason = f"pod group priority {value} from " + (f"class {name}" if name else "no class (no global default)")
    return Accepted(replace(group, priority_class_name=name, priority=value, preemption_policy=policy), reason)
