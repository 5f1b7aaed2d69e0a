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

pytestmark = pytest.mark.karmada


def test_binding_scenario(binding_scenario, karmada_plane, run_id: str, kit_run, request: pytest.FixtureRequest):
    from harness.run.bindings.scenario_run import BindingRun

    started = time.monotonic()
    marks = karmada_plane.log_marks()
    run = BindingRun(karmada_plane, binding_scenario, run_id)
    try:
        verdicts = run.run()
    except KitError as e:
        _keep(request, binding_scenario.id, [str(e)], run.history_lines, karmada_plane.logs_since(marks))
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
        where = _keep(request, binding_scenario.id, lines, run.history_lines, karmada_plane.logs_since(marks))
        lines.append(f"  the binding history and this report: {where}")
        pytest.fail("\n".join(lines), pytrace=False)


def _keep(request: pytest.FixtureRequest, scenario_id: str, report: list[str], history: list[str],
          logs: dict[str, bytes]):
    """A failing scenario's evidence: the report, every binding version seen, and the lines each
    Karmada component logged while it ran."""
    out = request.config.getoption("--artifacts") / "karmada" / scenario_id
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.txt").write_text("\n".join(report) + "\n")
    (out / "bindings.txt").write_text("\n".join(history) + "\n")
    for component, text in logs.items():
        (out / f"{component}.log").write_bytes(text)
    return out

