"""The binding model's world between steps, and how the detector and karmada-scheduler change it.

A ``World`` is one possible state of the control plane: the classes, the templates, the
bindings, which apps the detector is retrying, whether karmada-scheduler runs, and the order
apps were first scheduled in, with the reasons an expectation carries. The detector rebuilds a
binding when its template is reconciled (``reconcile``); karmada-scheduler tries bindings when
it hears of them (``heard``), all together in queue order when it starts (``start``), and, with
the gate off, again after a failure (``retries``). Where Karmada may choose (an order it does
not fix, a Webster tie) each returns every branch; ``predict`` chains them over a scenario's
steps. What one attempt decides is ``scheduling``, the order it is tried in ``queue``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import permutations

from .objects import App, Binding, KarmadaClass, Member
from .priority import ClassMissing, apply_policy
from .queue import needs_scheduling, retried_after_failure, start_orders
from .scheduling import DoesNotFit, attempt


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


def dedup(worlds: list[World]) -> list[World]:
    out: dict[tuple, World] = {}
    for w in worlds:
        out.setdefault(_key(w), w)
    return list(out.values())


# --- the detector ---------------------------------------------------------------------


def reconcile(w: World, app_name: str, context: str) -> tuple[World, bool]:
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
        worlds = dedup(nxt)
    return worlds


def heard(w: World, apps: list[str]) -> list[World]:
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
    return dedup(out)


def start(w: World) -> list[World]:
    w = replace(w, running=True)
    rule = ("priority, highest first; equal priorities in any order" if w.gate
            else "in the informer's list order, which is not fixed (gate off: priority ignored)")
    out = []
    for order in start_orders(w.bindings, w.gate):
        out += _try_in_order([w], [b.app for b in order], f"tried {{n}} of {{of}} when karmada-scheduler started ({rule})")
    return dedup(out)


def retries(w: World) -> list[World]:
    """With the gate off, bindings that did not fit keep being retried; they take room that appeared."""
    if not (w.running and retried_after_failure(w.gate)):
        return [w]
    failed = [b.app for b in w.bindings if b.unschedulable and needs_scheduling(b)]
    if not any(attempt(w.binding(a), w.members, w.bindings) for a in failed):
        return [w]  # every retry fails again and changes nothing
    out = []
    for order in permutations(failed):
        out += _try_in_order([w], list(order), "retried by the legacy queue's backoff, in any order")
    return dedup(out)


__all__ = ["World", "dedup", "heard", "reconcile", "retries", "start"]
