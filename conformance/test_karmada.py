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

from conformance.plugin.verdicts import judge_bindings

pytestmark = pytest.mark.karmada


def test_binding_scenario(binding_scenario, karmada_plane, run_id: str, kit_run, request):
    from harness.run.bindings.scenario_run import BindingRun

    started = time.monotonic()
    try:
        result = BindingRun(karmada_plane, binding_scenario, run_id, kit_run.options.artifacts).run()
    finally:
        kit_run.karmada_seconds += time.monotonic() - started
    judge_bindings(result, request.node.user_properties)
