"""Karmada binding priority (``--system karmada``): one test per file in scenarios/karmada/.

The kit starts one Karmada control plane for the run (its API server and its
members are the kit's own local clusters) and runs the scenarios one after
another on it: they stop and start the one karmada-scheduler and read member
capacity as a whole. Each expect is held against the model's prediction
(``reference.binding``), never against a guess of the runner's.
"""

from __future__ import annotations

import time

import pytest

from harness.errors import KitError
from harness.run import artifacts

pytestmark = pytest.mark.karmada


def test_binding_scenario(binding_scenario, karmada_plane, run_id: str, kit_run, request: pytest.FixtureRequest):
    from harness.run.bindings.scenario_run import BindingRun

    started = time.monotonic()
    marks = karmada_plane.log_marks()
    run = BindingRun(karmada_plane, binding_scenario, run_id)
    def keep(report: list[str]):
        return artifacts.keep_bindings(request.config.getoption("--artifacts"), binding_scenario.id, report,
                                       run.history_lines, karmada_plane.logs_since(marks))

    try:
        verdicts = run.run()
    except KitError as e:
        keep([str(e)])
        pytest.fail(f"{binding_scenario.id}: the kit could not run it: {e}", pytrace=False)
    finally:
        kit_run.karmada_seconds += time.monotonic() - started
    failed = [v for v in verdicts if v.differences]
    if failed:
        lines = [f"{binding_scenario.id}: Karmada did not do what the model predicts"]
        for v in failed:
            step = binding_scenario.steps[v.index]
            lines.append(f"  step {v.index} ({step.action or 'expect'}):")
            lines += [f"    - {d}" for d in v.differences]
        where = keep(lines)
        lines.append(f"  the binding history and this report: {where}")
        pytest.fail("\n".join(lines), pytrace=False)

