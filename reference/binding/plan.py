"""A Karmada scenario as the binding model reads it: the members, the classes, and the steps.

Each action is one thing a scenario does to the control plane (a class created or deleted, an
app propagated, scaled or deleted, karmada-scheduler stopped or started, a wait); an expect
names a step whose outcome is asked for. harness/formats/bindings.py turns a scenario file into
a ``Plan``; ``predict`` chains its steps into expectations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .objects import App, KarmadaClass, Member


@dataclass(frozen=True)
class CreateClass:
    cls: KarmadaClass


@dataclass(frozen=True)
class DeleteClass:
    name: str


@dataclass(frozen=True)
class Propagate:
    """Create the Deployment and its PropagationPolicy."""

    app: App


@dataclass(frozen=True)
class Scale:
    """Change the Deployment's replicas: a template spec change, so the detector reconciles it."""

    app: str
    replicas: int


@dataclass(frozen=True)
class Delete:
    """Delete the Deployment and its policy; the garbage collector removes the binding."""

    app: str


@dataclass(frozen=True)
class SetScheduler:
    running: bool


@dataclass(frozen=True)
class Wait:
    seconds: float  # nothing the model follows happens on a timer within a scenario's length


Action = Union[CreateClass, DeleteClass, Propagate, Scale, Delete, SetScheduler, Wait]


@dataclass(frozen=True)
class Expect:
    order: tuple[str, ...] | None = None  # apps whose first-scheduled order is asked for


@dataclass(frozen=True)
class Step:
    action: Action | None = None
    expect: Expect | None = None


@dataclass(frozen=True)
class Plan:
    members: tuple[Member, ...]
    classes: tuple[KarmadaClass, ...] = ()  # exist before the first step
    steps: tuple[Step, ...] = ()
    gate: bool = True  # PriorityBasedScheduling in karmada-scheduler (always on in the controller-manager)


__all__ = ["Action", "CreateClass", "Delete", "DeleteClass", "Expect", "Plan", "Propagate", "Scale", "SetScheduler",
           "Step", "Wait"]
