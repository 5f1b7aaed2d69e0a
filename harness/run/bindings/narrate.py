"""The binding model's account of a Karmada scenario, step by step: each expected binding's state,
priority, clusters and reason, the order it allows, and whether each ``expect:`` holds. ``./kit
explain`` prints it and the spec site renders it, so the two cannot tell different stories.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.binding.predict import Undetermined, predict

from harness.errors import KitError
from harness.formats.bindings import KarmadaScenario, StepSpec, disagreements


@dataclass(frozen=True)
class StepAccount:
    index: int
    action: str  # the step's action, or "expect" for a step that only looks
    argument: str
    lines: tuple[str, ...]  # the model's bindings and order, for the apps the expect names
    misses: tuple[str, ...] | None  # None: the step has no expect; (): met


def narrate(s: KarmadaScenario) -> tuple[StepAccount, ...]:
    """The binding model through ``s``; a scenario whose outcome the model cannot pin is a KitError."""
    try:
        predicted = predict(s)
    except Undetermined as e:
        raise KitError(f"{s.id}: the model cannot predict one outcome: {e}") from None
    misses = disagreements(s, predicted)
    by_step = {e.index: e for e in predicted}
    out = []
    for i, st in enumerate(s.steps):
        lines: list[str] = []
        mine: tuple[str, ...] | None = None
        if st.expect is not None:
            e = by_step[i]
            for app in sorted(set(st.expect.bindings) | set(st.expect.order)):
                b = e.bindings.get(app)
                if b is None:
                    continue
                why = f": {b.reason}" if b.reason else ""
                if b.clusters is None:  # no binding: nothing but its absence to say
                    lines.append(f"{app}: {b.state}{why}")
                    continue
                clusters = " or ".join(str(dict(c)) for c in sorted(b.clusters))
                priority = "absent" if b.priority is None else b.priority
                lines.append(f"{app}: {b.state}, priority {priority}, clusters {clusters}{why}")
            if st.expect.order:
                lines.append(f"order: the model allows {sorted(list(o) for o in e.orders or ())}")
            mine = tuple(str(m) for m in misses if m.step == i)
        out.append(StepAccount(i, st.action or "expect", step_argument(st) if st.action else "", tuple(lines), mine))
    return tuple(out)


def step_argument(st: StepSpec) -> str:
    value = getattr(st, st.action)
    if hasattr(value, "name"):
        return value.name
    if hasattr(value, "total_seconds"):
        return f"{value.total_seconds():g}s"
    return str(value)


__all__ = ["StepAccount", "narrate", "step_argument"]
