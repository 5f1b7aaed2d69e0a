"""On kind, the preemption scenarios once more on the workers' real kubelets.

The catalogue runs on kwok nodes of the kind cluster (``test_scenarios``); kwok plays the
kubelet from ``data/kwok-stages.yaml``. Here the scenarios where the kubelet's part shows (a
victim's graceful termination, its DisruptionTarget and deletion, the start times victims are
ranked by: ``placement.on_real_kubelets``) run again on the kind workers, one at a time, with
containerd running a container that outlasts SIGTERM, so a victim stays Terminating for its
grace period as the specs describe. Collected only with --cluster kind.
"""

from __future__ import annotations

import pytest

from conformance.test_scenarios import judge, selected
from harness.run.batch import Batch
from harness.clusters.local import split_target

pytestmark = [pytest.mark.real_kubelets]


@pytest.fixture(scope="session")
def real_batch(request: pytest.FixtureRequest, build: str, run_id: str, real_nodes):
    config = request.config
    ids = selected(request, "real_scenario", build)
    kube, local = request.getfixturevalue("cluster")
    # A run id of its own: the kwok batch's namespaces of the same scenarios may still be going.
    b = Batch([s for s in config._scenarios if s.id in ids], kube, local, split_target(build)[0],
              run_id + "r", real_nodes, stop_at_first_failure=config.getoption("maxfail") == 1,
              artifacts=config.getoption("--artifacts") / "real-kubelets")
    b.run()
    config._scenario_timing = getattr(config, "_scenario_timing", []) + [
        f"[{build}] {len(b.results)} scenarios on real kubelets in {b.wall:.1f} s wall time"]
    return b


def test_scenario_on_real_kubelets(real_scenario, build: str, real_batch: Batch):
    judge(real_scenario, real_batch)
