"""One test per scenario file: the cluster under test must do what the model predicts.

All selected scenarios of a build run concurrently the first time any of
their tests asks for a result (each in its own namespace, on its own nodes),
so the suite takes about as long as its longest scenario. Scenarios marked
``alone`` (they change cluster-wide state) run afterwards, one at a time.
Each test then reports its own scenario's comparison, and its own scenario's
seconds as its duration (conftest), not the batch's.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness import lifecycle
from harness.runner import KwokNodes, Result, ScenarioRun

MAX_CONCURRENT = 12


class Batch:
    """Runs the selected scenarios (each ``copies`` times, side by side) for one build and keeps their results."""

    def __init__(self, selected: list, kube, local, build: str, run_id: str, nodes, copies: int = 1,
                 stop_at_first_failure: bool = False, artifacts: Path = Path("artifacts")):
        self.artifacts = artifacts
        self.selected, self.kube, self.local, self.build, self.run_id = selected, kube, local, build, run_id
        self.nodes, self.copies = nodes, copies
        self.stop_at_first_failure = stop_at_first_failure
        self.results: dict[tuple[str, int], Result] = {}
        self.wall = 0.0

    def run(self) -> None:
        started = time.monotonic()
        log = self.local.log_path("kube-scheduler") if self.local else None
        # A scenario specified for another build is still run, against its own
        # semantics, so the report shows what this build lacks.
        runs = [ScenarioRun(self.kube.kubeconfig, s, self.build if s.applies_to(self.build) else s.builds[0],
                            self.run_id, self.artifacts, log, label=self.build, nodes=self.nodes, copy=c)
                for s in self.selected for c in range(self.copies)]
        # Longest first: a long scenario started last would end the batch long after the rest.
        together = sorted((r for r in runs if not r.s.alone), key=lambda r: -r.s.least_seconds())
        # Lent real nodes go to one scenario at a time; kwok nodes are made per scenario.
        workers = MAX_CONCURRENT if isinstance(self.nodes, KwokNodes) else 1
        def run_one(r: ScenarioRun) -> Result:
            result = r.run()
            if self.stop_at_first_failure and _failed(result, self.build):
                for other in runs:  # -x: the verdict is in; the others' results are not needed
                    other.cancel.set()
            return result

        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            for run, r in zip(together, pool.map(run_one, together)):
                self.results[r.scenario.id, run.copy] = r
        finally:
            # Interrupted: the workers see the stop and end on their own; waiting for them
            # here would hold the cluster's teardown until every scenario had finished.
            pool.shutdown(wait=not lifecycle.stopping(), cancel_futures=True)
        for r in runs:
            if r.s.alone:
                # Alone means no other scenario's events either: not even the
                # pod deletions of namespaces still being torn down.
                self.kube.wait_namespaces_gone(self.run_id)
                self.results[r.s.id, r.copy] = run_one(r)
        self.wall = time.monotonic() - started


def _failed(result: Result, build: str) -> bool:
    """A verdict against the build: a difference where none is expected, or an unexpected pass."""
    if result.cancelled:
        return False
    return not result.ok if result.scenario.applies_to(build) else (result.ok or bool(result.error))


@pytest.fixture(scope="session")
def batch(request: pytest.FixtureRequest, kube, local_cluster, build: str, run_id: str, node_source):
    selected_ids = {item.callspec.params["scenario"].id for item in request.session.items
                    if "scenario" in getattr(getattr(item, "callspec", None), "params", {})
                    and item.callspec.params.get("build") == build}
    selected = [s for s in request.config._scenarios if s.id in selected_ids]
    b = Batch(selected, kube, local_cluster, build, run_id, node_source, request.config.getoption("--repeat"),
              stop_at_first_failure=request.config.getoption("maxfail") == 1,
              artifacts=request.config.getoption("--artifacts"))
    b.run()
    yield b
    if b.results:
        longest = max(b.results.values(), key=lambda r: r.seconds)
        request.config._scenario_timing = getattr(request.config, "_scenario_timing", []) + [
            f"[{build}] {len(b.results)} scenarios in {b.wall:.1f} s wall time; "
            f"longest: {longest.scenario.id} {longest.seconds:.1f} s"]


def test_scenario(scenario, build: str, copy: int, batch: Batch):
    result = batch.results[scenario.id, copy]
    if result.cancelled:
        pytest.skip("not run to the end: -x stopped the batch at another scenario's failure")
    if not scenario.applies_to(build):
        # Specified for another build: a difference is expected (a strict xfail), and the
        # build showing the behaviour after all is news, so it fails.
        if result.ok:
            pytest.fail(f"unexpected pass: {scenario.id} specifies behaviour of {', '.join(scenario.builds)}, "
                        f"and the {build} build showed it too", pytrace=False)
        if result.error:
            pytest.fail(result.report(), pytrace=False)  # an error is no evidence of a difference
        pytest.xfail(f"expected difference: the {build} build does not implement what {scenario.id} "
                     f"specifies (for {', '.join(scenario.builds)})")
    if not result.ok:
        pytest.fail(result.report(), pytrace=False)
