"""One test per scenario file: the cluster under test must do what the model predicts.

On the local cluster, every build's scenarios start in the background as soon
as the tests are collected (conftest), each in its own namespace on its own
nodes, and an ``alone`` scenario on a cluster of its own, so a run takes about
as long as its longest scenario (``harness.batch``). On a cluster the kit did
not start, they run when the first test asks for a result. Each test reports
its own scenario's comparison, and its own scenario's seconds as its duration.
"""

from __future__ import annotations

import pytest

from harness.run.batch import Batch
from harness.clusters.local import split_target
from harness.errors import KitError


@pytest.fixture(scope="session")
def batch(request: pytest.FixtureRequest, build: str, run_id: str):
    config = request.config
    clusters = getattr(config, "_local_clusters", None)
    if clusters is not None and build in clusters.batches:
        # Started at collection, on the run's own clusters; here we only wait for it.
        try:
            b = clusters.batches[build].result()
        except KitError as e:
            pytest.fail(f"cluster not available: {e}", pytrace=False)
    else:
        kube, local = request.getfixturevalue("cluster")
        selected_ids = selected(request, "scenario", build)
        b = Batch([s for s in config._scenarios if s.id in selected_ids], kube, local, split_target(build)[0], run_id,
                  request.getfixturevalue("node_source"), config.getoption("--repeat"),
                  stop_at_first_failure=config.getoption("maxfail") == 1, artifacts=config.getoption("--artifacts"))
        b.run()
    yield b
    if b.results:
        longest = max(b.results.values(), key=lambda r: r.seconds)
        config._scenario_timing = getattr(config, "_scenario_timing", []) + [
            f"[{build}] {len(b.results)} scenarios in {b.wall:.1f} s wall time; "
            f"longest: {longest.scenario.id} {longest.seconds:.1f} s"]
        config._longest = max(getattr(config, "_longest", 0.0), longest.seconds)


def selected(request: pytest.FixtureRequest, param: str, build: str) -> set[str]:
    """The ids of the scenarios this session's tests ask of ``build`` through ``param``."""
    return {item.callspec.params[param].id for item in request.session.items
            if param in getattr(getattr(item, "callspec", None), "params", {})
            and item.callspec.params.get("build") == build}


def test_scenario(scenario, build: str, copy: int, batch: Batch):
    judge(scenario, batch, copy)


def judge(scenario, batch: Batch, copy: int = 0) -> None:
    """The verdict on one scenario's result in a batch: pass, fail, or a named expected difference."""
    build, release = batch.build, batch.release
    result = batch.results[scenario.id, copy]
    if result.cancelled:
        pytest.skip("not run to the end: -x stopped the batch at another scenario's failure")
    if not scenario.applies_to(build, release):
        # Specified for another build or release: a difference is expected (a strict xfail),
        # and the build showing the behaviour after all is news, so it fails.
        specified = f"{', '.join(scenario.builds)}" + (f", Kubernetes {scenario.releases}" if scenario.releases else "")
        if result.ok:
            pytest.fail(f"unexpected pass: {scenario.id} specifies behaviour of {specified}, "
                        f"and the {build} build on Kubernetes {release} showed it too", pytrace=False)
        if result.error:
            pytest.fail(result.report(), pytrace=False)  # an error is no evidence of a difference
        pytest.xfail(f"expected difference: the {build} build on Kubernetes {release} does not do what "
                     f"{scenario.id} specifies (for {specified})")
    if not result.ok:
        pytest.fail(result.report(), pytrace=False)
    if result.known_faults:
        # The pods ended as specified, but the events show a known scheduler race: reported by
        # name, never counted as a pass (strict=False: it comes and goes).
        pytest.xfail("known scheduler fault, outcome as specified: " + "; ".join(map(str, result.known_faults)))
