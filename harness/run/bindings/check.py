"""Judging a Karmada step: the recorded bindings held against the model's expectation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from reference.binding.objects import SCHEDULED, binding_name
from reference.binding.predict import UNSET, BindingExpectation, StepExpectation

from harness.run.bindings.history import BindingLog, Observed

Clusters = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class StepVerdict:
    index: int
    differences: tuple[str, ...]


def compare(app: str, want: BindingExpectation, obs: Observed, clusters: Clusters) -> str | None:
    """None if the observation is one the model allows; else what differs, with the model's reason."""
    problems = []
    if obs.state != want.state:
        problems.append(f"state {obs.state}, expected {want.state}")
    if want.priority is not UNSET and obs.state != "absent" and obs.priority != want.priority:
        problems.append(f"priority {_p(obs.priority)}, expected {_p(want.priority)}")
    if want.clusters is not None and obs.state == SCHEDULED and clusters not in want.clusters:
        allowed = " or ".join(str(dict(c)) for c in sorted(want.clusters))
        problems.append(f"clusters {dict(clusters)}, expected {allowed}")
    if not problems:
        return None
    return f"{app} ({binding_name(app)}): {'; '.join(problems)} [{want.reason}]"


def differences(history: BindingLog, want: StepExpectation, apps: list[str],
                scenario_clusters: Callable[[Observed], Clusters]) -> list[str]:
    """Every way the recorded bindings differ from the step's expectation; ``scenario_clusters``
    names an observation's clusters as the scenario does."""
    diffs = []
    for app, exp in sorted(want.bindings.items()):
        obs = history.now(app)
        d = compare(app, exp, obs, scenario_clusters(obs))
        if d:
            diffs.append(d)
    if want.orders is not None:
        seen = history.first_scheduled(apps)
        if seen not in want.orders:
            allowed = " or ".join(" < ".join(o) for o in sorted(want.orders))
            diffs.append(f"first scheduled in the order {' < '.join(seen) or '(none yet)'}, expected {allowed}")
    return diffs


def _p(priority) -> str:
    return "absent" if priority is None else str(priority)
