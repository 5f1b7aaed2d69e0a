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

The scenario as read is ``plan``; a world and how each component changes it is
``world``; here are the steps between them and the expectations, the contract
with the runner.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Mapping

from .objects import ABSENT
from .plan import Action, CreateClass, Delete, DeleteClass, Expect, Plan, Propagate, Scale, SetScheduler, Wait
from .world import World, dedup, heard, reconcile, retries, start


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


# --- steps ---------------------------------------------------------------------------------


def _apply(w: World, action: Action) -> list[World]:
    if isinstance(action, CreateClass):
        w = replace(w, classes=tuple(c for c in w.classes if c.name != action.cls.name) + (action.cls,))
        # Nothing watches classes: only apps the detector is still retrying pick it up.
        waiting = sorted(a for a in w.retrying if w.app(a).class_name == action.cls.name)
        changed = []
        for a in waiting:
            w, ch = reconcile(w, a, f"reconciled by the detector's retry after class {action.cls.name!r} was created")
            if ch:
                changed.append(a)
        return heard(w, changed)
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
        w, changed = reconcile(w, action.app.name, "reconciled when propagated")
        return heard(w, [action.app.name] if changed else [])
    if isinstance(action, Scale):
        w = replace(w, apps=tuple(replace(a, replicas=action.replicas) if a.name == action.app else a for a in w.apps))
        w, changed = reconcile(w, action.app, f"reconciled when the template was scaled to {action.replicas}")
        return heard(w, [action.app] if changed else [])
    if isinstance(action, Delete):
        w = replace(w, apps=tuple(a for a in w.apps if a.name != action.app),
                    bindings=tuple(b for b in w.bindings if b.app != action.app), retrying=w.retrying - {action.app})
        return [w.noted(action.app, "", "deleted: the garbage collector removes the binding with its Deployment")]
    if isinstance(action, SetScheduler):
        if action.running and not w.running:
            return start(w)
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
                    nxt += retries(after)
            worlds = dedup(nxt)
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
    "BindingExpectation",
    "StepExpectation",
    "Undetermined",
    "Unset",
    "predict",
    "simulate",
]
