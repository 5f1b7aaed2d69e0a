"""The detector (karmada-controller-manager): a binding's priority, and when a binding is (re)built.

Upstream (v1.18.2): pkg/detector/detector.go (ApplyPolicy, BuildResourceBinding)
and pkg/util/helper/priorityclass.go. The PriorityBasedScheduling gate is on in
the controller-manager: with it off no binding ever gets a priority, a
configuration the kit does not run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from .objects import App, Binding, KarmadaClass


@dataclass(frozen=True)
class Resolved:
    priority: int | None  # None: the binding carries no schedulePriority at all
    reason: str


@dataclass(frozen=True)
class ClassMissing:
    """The policy names a class that does not exist: the whole ApplyPolicy fails."""

    class_name: str
    reason: str

    def __bool__(self) -> bool:  # a failure is falsy so `if built:` reads naturally
        return False


@dataclass(frozen=True)
class Built:
    binding: Binding
    reason: str  # why the binding has the priority it has


def resolve_priority(app: App, classes: Mapping[str, KarmadaClass]) -> Resolved | ClassMissing:
    if app.class_name is None:
        # No fallback of any kind: globalDefault classes are not consulted, and the
        # field stays absent (the scheduler reads it as 0).
        return Resolved(None, "no schedulePriority in the policy: the field is absent (read as 0); "
                              "globalDefault classes are not consulted")
    pc = classes.get(app.class_name)
    if pc is None:
        return ClassMissing(app.class_name, f"PriorityClass {app.class_name!r} does not exist: ApplyPolicy fails "
                                            f"and the detector retries with growing backoff")
    # Only the value is copied: bindings have no preemptionPolicy field.
    return Resolved(pc.value, f"priority {pc.value} from PriorityClass {pc.name!r}, read when the detector "
                              f"last built the binding")


def apply_policy(app: App, classes: Mapping[str, KarmadaClass], existing: Binding | None) -> Built | ClassMissing:
    """What one successful reconcile of the template makes of its binding, or why it changes nothing.

    The detector resolves the class on every reconcile and on nothing else:
    nothing watches PriorityClasses, so a class deleted or recreated with
    another value reaches an existing binding only at the template's next
    reconcile (a spec change such as a new replica count, a policy change or a
    restart). When the class is missing, the reconcile fails before the create
    or update, so the binding (if any) keeps every field, replicas included.
    """
    resolved = resolve_priority(app, classes)
    if isinstance(resolved, ClassMissing):
        kept = "no binding is created" if existing is None else "the binding is left as it was"
        return ClassMissing(resolved.class_name, f"{resolved.reason}; {kept}")
    if existing is None:
        return Built(Binding(app.name, resolved.priority, app.replicas, app.cpu_milli), resolved.reason)
    # The scheduler's result (clusters, condition) is not the detector's to touch.
    return Built(replace(existing, priority=resolved.priority, replicas=app.replicas, cpu_milli=app.cpu_milli),
                 resolved.reason)
