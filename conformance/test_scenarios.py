"""One test per scenario file: the cluster under test must do what the model predicts.

All selected scenarios of a build run concurrently the first time any of
their tests asks for a result (each in its own namespace, on its own nodes),
so the suite takes about as long as its longest scenario. Scenarios marked
``alone`` (they change cluster-wide state) run afterwards, one at a time.
Each test then reports its own scenario's comparison.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.runner import KwokNodes, Result, ScenarioRun
from harness.scenario import load_all

SCENARIOS = load_all(Path(__file__).parent.parent / "scenarios")
ARTIFACTS = Path("artifacts")
MAX_CONCURRENT = 12


def _params():
    for s in SCENARIOS:
        marks = [pytest.mark.cluster, *(getattr(pytest.mark, a) for a in s.areas)]
        yield pytest.param(s, id=s.id, marks=marks)


class Batch:
    """Runs the selected scenarios for one build and keeps their results."""

    def __init__(self, selected: list, kube, local, build: str, run_id: str, nodes):
        self.selected, self.kube, self.local, self.build, self.run_id = selected, kube, local, build, run_id
        self.nodes = nodes
        self.results: dict[str, Result] = {}
        self.wall = 0.0

    def run(self) -> None:
        started = time.monotonic()
        log = self.local.log_path("kube-scheduler") if self.local else None
        # A scenario specified for another build is still run, against its own
        # semantics, so the report shows what this build lacks.
        runs = [ScenarioRun(self.kube.kubeconfig, s, self.build if s.applies_to(self.build) else s.builds[0],
                            self.run_id, ARTIFACTS, log, label=self.build, nodes=self.nodes) for s in self.selected]
        together = [r for r in runs if not r.s.alone]
        # Lent real nodes go to one scenario at a time; kwok nodes are made per scenario.
        workers = MAX_CONCURRENT if isinstance(self.nodes, KwokNodes) else 1
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for r in pool.map(lambda r: r.run(), together):
                self.results[r.scenario.id] = r
        for r in runs:
            if r.s.alone:
                # Alone means no other scenario's events either: not even the
                # pod deletions of namespaces still being torn down.
                self.kube.wait_namespaces_gone(self.run_id)
                self.results[r.s.id] = r.run()
        self.wall = time.monotonic() - started


@pytest.fixture(scope="session")
def batch(request: pytest.FixtureRequest, kube, local_cluster, build: str, run_id: str, node_source):
    selected_ids = {item.callspec.params["scenario"].id for item in request.session.items
                    if "scenario" in getattr(getattr(item, "callspec", None), "params", {})
                    and item.callspec.params.get("build") == build}
    selected = [s for s in SCENARIOS if s.id in selected_ids]
    b = Batch(selected, kube, local_cluster, build, run_id, node_source)
    b.run()
    yield b
    if b.results:
        longest = max(b.results.values(), key=lambda r: r.seconds)
        request.config._scenario_timing = getattr(request.config, "_scenario_timing", []) + [
            f"[{build}] {len(b.results)} scenarios in {b.wall:.1f} s wall time; "
            f"longest: {longest.scenario.id} {longest.seconds:.1f} s"]


@pytest.mark.parametrize("scenario", list(_params()))
def test_scenario(scenario, build: str, batch: Batch):
    result = batch.results[scenario.id]
    if not scenario.applies_to(build):
        # The behaviour is specified for another build: the run shows whether this build has it.
        if result.ok:
            pytest.fail(f"{scenario.id} specifies behaviour of {scenario.builds} and {build} showed it anyway", pytrace=False)
        pytest.fail(f"{build} does not implement what {scenario.id} specifies "
                    f"(the scenario is for {', '.join(scenario.builds)})\n{result.report()}", pytrace=False)
    if not result.ok:
        pytest.fail(result.report(), pytrace=False)
