"""A scenario's steps chained through the detector and karmada-scheduler, and what each expect may observe.

The model follows the real components step by step: the detector (re)builds a
binding when its template or policy is reconciled; karmada-scheduler tries a
binding when it hears of it (at once while it runs, all together in queue
order when it starts). Each step's outcome is taken to have settled before
the next step: a class created is picked up by the detector's next retry, a
binding created is scheduled, before anything else happens.

Where Karmada may choose (bindings that appear in the same step, Webster ties
in a replica split), the model follows every branch and an expectation holds
the union. A binding whose state would differ between branches cannot be
predicted: ``predict`` raises ``Undetermined``, and the scenario must be written
so that it does not depend on that choice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Mapping, Union

from .objects import ABSENT, App, Binding, KarmadaClass, Member
from .priority import ClassMissing, apply_policy
from .queue import needs_scheduling, retried_after_failure, start_orders
from .scheduling import DoesNotFit, attempt


# --- the input: a scenario as the model reads it ------------------------------------


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


# --- the output: the contract with the runner ----------------------------------------


class Unset(enum.Enum):
    """A field the expectation does not check."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset.UNSET


@dataclass(frozen=True)
class BindingExpectation:
    """What may be observed for one app's binding at an expect step.

    An absent binding has priority UNSET and clusters None (nothing to check
    but its absence). Any other has its priority (None: the field is absent)
    and the set of allowed spec.clusters; a binding without clusters allows
    only ``()``.
    """

    state: str  # absent | scheduled | unschedulable | waiting
    priority: int | None | Unset  # None: the field is absent
    clusters: frozenset[tuple[tuple[str, int], ...]] | None  # allowed spec.clusters (sorted tuples)
    reason: str


@dataclass(frozen=True)
class StepExpectation:
    index: int  # the step's index in the scenario
    bindings: Mapping[str, BindingExpectation]  # every app propagated so far, by app name
    # Allowed orders in which the apps of expect.order were first scheduled; apps not
    # scheduled by then are left out. None when the step does not ask.
    orders: frozenset[tuple[str, ...]] | None


class Undetermined(ValueError):
    """The scenario's outcome depends on a choice Karmada does not fix."""


# --- the world between steps ------------------------------------------------------


@dataclass(frozen=True)
class World:
    gate: bool
    members: tuple[Member, ...]
    classes: tuple[KarmadaClass, ...] = ()
    apps: tuple[App, ...] = ()  # templates that exist now
    seen: tuple[str, ...] = ()  # every app ever propagated, in order
    bindings: tuple[Binding, ...] = ()
    retrying: frozenset[str] = frozenset()  # apps whose last reconcile failed: the detector retries them
    running: bool = True
    first_scheduled: tuple[str, ...] = ()
    # (app, why the priority, why the state): the reasons an expectation carries.
    why: tuple[tuple[str, str, str], ...] = field(default=(), compare=False)

    @property
    def class_map(self) -> dict[str, KarmadaClass]:
        return {c.name: c for c in self.classes}

    def app(self, name: str) -> App | None:
        return next((a for a in self.apps if a.name == name), None)

    def binding(self, app: str) -> Binding | None:
        return next((b for b in self.bindings if b.app == app), None)

    def reasons(self, app: str) -> tuple[str, str]:
        return next(((p, s) for a, p, s in self.why if a == app), ("", ""))

    def noted(self, app: str, priority: str | None = None, state: str | None = None) -> World:
        p, s = self.reasons(app)
        rest = tuple(w for w in self.why if w[0] != app)
        return replace(self, why=rest + ((app, p if priority is None else priority, s if state is None else state),))

    def with_binding(self, b: Binding) -> World:
        return replace(self, bindings=tuple(x for x in self.bindings if x.app != b.app) + (b,))


def _key(w: World) -> tuple:
    # Branches that agree on everything observable are one branch.
    return (w.classes, w.apps, tuple(sorted(w.bindings, key=lambda b: b.app)), w.retrying, w.running,
            w.first_scheduled)


def _dedup(worlds: list[World]) -> list[World]:
    out: dict[tuple, World] = {}
    for w in worlds:
        out.setdefault(_key(w), w)
    return list(out.values())


# --- the detector ---------------------------------------------------------------------


def _reconcile(w: World, app_name: str, context: str) -> tuple[World, bool]:
    """One reconcile of the app's template; True when its binding was created or its spec changed."""
    app = w.app(app_name)
    existing = w.binding(app_name)
    built = apply_policy(app, w.class_map, existing)
    if isinstance(built, ClassMissing):
        w = replace(w, retrying=w.retrying | {app_name})
        if existing is None:
            return w.noted(app_name, "", f"{context}: {built.reason}"), False
        _, before = w.reasons(app_name)
        return w.noted(app_name, state="; then ".join(x for x in (before, f"{context}: {built.reason}") if x)), False
    w = replace(w, retrying=w.retrying - {app_name}).with_binding(built.binding)
    changed = existing is None or (existing.priority, existing.replicas, existing.cpu_milli) != (
        built.binding.priority, built.binding.replicas, built.binding.cpu_milli)
    w = w.noted(app_name, f"{context}: {built.reason}")
    if changed and not w.running:
        w = w.noted(app_name, state="karmada-scheduler is stopped: the binding has not been tried since")
    return w, changed


# --- karmada-scheduler -------------------------------------------------------------------


def _try(w: World, app_name: str, why: str) -> list[World]:
    b = w.binding(app_name)
    outcome = attempt(b, w.members, w.bindings)
    if isinstance(outcome, DoesNotFit):
        stays = ("the legacy queue retries it with backoff" if retried_after_failure(w.gate) else
                 "it stays so: freed room does not requeue it, only its own spec change, a cluster change "
                 "or the 5-minute flush")
        return [w.with_binding(replace(b, unschedulable=True)).noted(app_name, state=f"{why}: {outcome.reason}; {stays}")]
    out = []
    for clusters in sorted(outcome.assignments):
        first = w.first_scheduled if app_name in w.first_scheduled else w.first_scheduled + (app_name,)
        nw = replace(w.with_binding(replace(b, clusters=clusters, unschedulable=False)), first_scheduled=first)
        out.append(nw.noted(app_name, state=f"{why}: {outcome.reason}"))
    return out


def _try_in_order(worlds: list[World], apps: list[str], why: str) -> list[World]:
    for i, app in enumerate(apps):
        nxt = []
        for w in worlds:
            b = w.binding(app)
            if b is not None and needs_scheduling(b):
                nxt += _try(w, app, why.format(n=i + 1, of=len(apps)))
            else:
                nxt.append(w)
        worlds = _dedup(nxt)
    return worlds


def _heard(w: World, apps: list[str]) -> list[World]:
    """The running scheduler hears of bindings created or changed in one step and tries them.

    One binding is tried at once. Several that appear in the same step (a class
    that unblocks several apps, each on its own retry timer) may come in any order.
    """
    todo = [a for a in apps if (b := w.binding(a)) is not None and needs_scheduling(b)]
    if not w.running or not todo:
        return [w]
    if len(todo) == 1:
        return _try_in_order([w], todo, "tried as soon as the binding appeared or changed")
    out = []
    for order in permutations(todo):
        out += _try_in_order([w], list(order), f"one of {len(todo)} bindings that appeared together, tried in any order")
    return _dedup(out)


def _start(w: World) -> list[World]:
    w = replace(w, running=True)
    rule = ("priority, highest first; equal priorities in any order" if w.gate
            else "in the informer's list order, which is not fixed (gate off: priority ignored)")
    out = []
    for order in start_orders(w.bindings, w.gate):
        out += _try_in_order([w], [b.app for b in order], f"tried {{n}} of {{of}} when karmada-scheduler started ({rule})")
    return _dedup(out)


def _retries(w: World) -> list[World]:
    """With the gate off, bindings that did not fit keep being retried; they take room that appeared."""
    if not (w.running and retried_after_failure(w.gate)):
        return [w]
    failed = [b.app for b in w.bindings if b.unschedulable and needs_scheduling(b)]
    if not any(attempt(w.binding(a), w.members, w.bindings) for a in failed):
        return [w]  # every retry fails again and changes nothing
    out = []
    for order in permutations(failed):
        out += _try_in_order([w], list(order), "retried by the legacy queue's backoff, in any order")
    return _dedup(out)


# --- steps ---------------------------------------------------------------------------------


def _apply(w: World, action: Action) -> list[World]:
    if isinstance(action, CreateClass):
        w = replace(w, classes=tuple(c for c in w.classes if c.name != action.cls.name) + (action.cls,))
        # Nothing watches classes: only apps the detector is still retrying pick it up.
        waiting = sorted(a for a in w.retrying if w.app(a).class_name == action.cls.name)
        changed = []
        for a in waiting:
            w, ch = _reconcile(w, a, f"reconciled by the detector's retry after class {action.cls.name!r} was created")
            if ch:
                changed.append(a)
        return _heard(w, changed)
    if isinstance(action, DeleteClass):
        w = replace(w, classes=tuple(c for c in w.classes if c.name != action.name))
        for b in w.bindings:
            if w.app(b.app).class_name == action.name:
                p, _ = w.reasons(b.app)
                w = w.noted(b.app, f"{p}; class {action.name!r} deleted since: nothing watches classes, "
                                   f"the binding keeps its value until the template is reconciled")
        return [w]
    if isinstance(action, Propagate):
        w = replace(w, apps=w.apps + (action.app,), seen=w.seen + (action.app.name,))
        w, changed = _reconcile(w, action.app.name, "reconciled when propagated")
        return _heard(w, [action.app.name] if changed else [])
    if isinstance(action, Scale):
        w = replace(w, apps=tuple(replace(a, replicas=action.replicas) if a.name == action.app else a for a in w.apps))
        w, changed = _reconcile(w, action.app, f"reconciled when the template was scaled to {action.replicas}")
        return _heard(w, [action.app] if changed else [])
    if isinstance(action, Delete):
        w = replace(w, apps=tuple(a for a in w.apps if a.name != action.app),
                    bindings=tuple(b for b in w.bindings if b.app != action.app), retrying=w.retrying - {action.app})
        return [w.noted(action.app, "", "deleted: the garbage collector removes the binding with its Deployment")]
    if isinstance(action, SetScheduler):
        if action.running and not w.running:
            return _start(w)
        return [replace(w, running=action.running)]
    if isinstance(action, Wait):
        return [w]
    raise TypeError(f"not a step action: {action!r}")


def _seen_as(w: World, app: str) -> tuple[str, int | None | Unset, tuple | None, str]:
    b = w.binding(app)
    p, s = w.reasons(app)
    if b is None:
        return ABSENT, UNSET, None, s
    return b.state, b.priority, b.clusters, "; ".join(x for x in (p, s) if x)


def _expectation(index: int, worlds: list[World], expect: Expect) -> StepExpectation:
    apps = []
    for w in worlds:
        apps += [a for a in w.seen if a not in apps]
    out = {}
    for app in apps:
        seen = [_seen_as(w, app) for w in worlds]
        states = {s for s, _, _, _ in seen}
        if len(states) > 1:
            raise Undetermined(f"step {index}: the binding of {app} may end up {' or '.join(sorted(states))}, "
                               f"depending on an order Karmada does not fix ({' | '.join(r for *_, r in seen)})")
        prios = {p for _, p, _, _ in seen}
        if len(prios) > 1:
            raise Undetermined(f"step {index}: the binding of {app} may have priority {sorted(map(str, prios))}")
        state = states.pop()
        clusters = None if state == ABSENT else frozenset(c for _, _, c, _ in seen)
        reason = " | ".join(dict.fromkeys(r for *_, r in seen))
        out[app] = BindingExpectation(state, prios.pop(), clusters, reason)
    orders = None
    if expect.order is not None:
        asked = set(expect.order)
        orders = frozenset(tuple(a for a in w.first_scheduled if a in asked) for w in worlds)
    return StepExpectation(index, out, orders)


def simulate(plan: Plan) -> list[list[World]]:
    """The possible worlds before the first step and after each step."""
    worlds = [World(plan.gate, plan.members, plan.classes)]
    history = [worlds]
    for step in plan.steps:
        if step.action is not None:
            nxt = []
            for w in worlds:
                for after in _apply(w, step.action):
                    nxt += _retries(after)
            worlds = _dedup(nxt)
        history.append(worlds)
    return history


def predict(scenario) -> list[StepExpectation]:
    """One expectation per step that has an expect; ``scenario`` is a Plan or has ``to_plan()``."""
    plan = scenario if isinstance(scenario, Plan) else scenario.to_plan()
    history = simulate(plan)
    return [_expectation(i, history[i + 1], step.expect) for i, step in enumerate(plan.steps)
            if step.expect is not None]


__all__ = [
    "UNSET",
    "Action",
    "BindingExpectation",
    "CreateClass",
    "Delete",
    "DeleteClass",
    "Expect",
    "Plan",
    "Propagate",
    "Scale",
    "SetScheduler",
    "Step",
    "StepExpectation",
    "Undetermined",
    "Unset",
    "Wait",
    "World",
    "predict",
    "simulate",
]
