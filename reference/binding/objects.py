"""The Karmada objects the binding model reasons about, as frozen values.

Only what decides a binding's priority, its place in the queue and its
replicas' placement is kept. CPU is in millicores throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

# The observable states of one app's binding, as the runner classifies what it reads back.
ABSENT = "absent"  # no ResourceBinding
WAITING = "waiting"  # exists, no clusters, no Scheduled=False: not tried yet
SCHEDULED = "scheduled"  # spec.clusters is not empty
UNSCHEDULABLE = "unschedulable"  # no clusters, condition Scheduled=False/Unschedulable
STATES = (ABSENT, WAITING, SCHEDULED, UNSCHEDULABLE)

# Karmada names a Deployment's binding after the Deployment and its kind.
BINDING_SUFFIX = "-deployment"


def binding_name(app: str) -> str:
    return app + BINDING_SUFFIX


@dataclass(frozen=True)
class KarmadaClass:
    """A PriorityClass on the Karmada API server: the detector reads only its value."""

    name: str
    value: int


@dataclass(frozen=True)
class App:
    """A Deployment and the PropagationPolicy that selects it alone (Divided, Aggregated).

    ``class_name`` is the policy's spec.schedulePriority.priorityClassName; None
    when the policy has no schedulePriority.
    """

    name: str
    replicas: int
    cpu_milli: int  # requested per replica
    class_name: str | None = None


@dataclass(frozen=True)
class Member:
    """A member cluster; its room is its nodes' allocatable CPU, summed (the estimator fits no nodes)."""

    name: str
    cpu_milli: int


@dataclass(frozen=True)
class Binding:
    """The ResourceBinding of one app, as far as the model follows it."""

    app: str
    priority: int | None  # spec.schedulePriority.priority; None when the field is absent
    replicas: int  # spec.replicas, copied from the template
    cpu_milli: int  # spec.replicaRequirements, per replica
    clusters: tuple[tuple[str, int], ...] = ()  # spec.clusters: (member, replicas), by member name
    unschedulable: bool = False  # the last attempt ended Scheduled=False/Unschedulable

    @property
    def name(self) -> str:
        return binding_name(self.app)

    @property
    def queue_priority(self) -> int:
        # The scheduler reads an absent field as 0 (SchedulePriorityValue).
        return self.priority if self.priority is not None else 0

    @property
    def assigned(self) -> int:
        return sum(n for _, n in self.clusters)

    @property
    def state(self) -> str:
        # A failed rescale keeps the old clusters, so clusters decide before the condition does.
        if self.clusters:
            return SCHEDULED
        return UNSCHEDULABLE if self.unschedulable else WAITING


__all__ = [
    "ABSENT",
    "BINDING_SUFFIX",
    "SCHEDULED",
    "STATES",
    "UNSCHEDULABLE",
    "WAITING",
    "App",
    "Binding",
    "KarmadaClass",
    "Member",
    "binding_name",
]
