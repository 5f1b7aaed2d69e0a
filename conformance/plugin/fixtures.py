"""The suite's fixtures: the cluster under test, its nodes, each target's batch of scenarios, the Karmada plane."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import pytest

from harness.clusters.base import Cluster
from harness.clusters.local import LocalCluster
from harness.errors import KitError
from harness.kube import Kube
from harness.targets import split_target
from conformance.plugin.session import selected
from conformance.plugin.state import RunState, run_state


@dataclass(frozen=True)
class ClusterUnderTest:
    """A ready cluster for one target: its API, and the cluster itself, of whatever kind."""

    kube: Kube
    cluster: Cluster | None = None

    @property
    def local(self) -> LocalCluster | None:
        """The local cluster, when the kit started one: its gates and scheduler log are the batch's."""
        return self.cluster if isinstance(self.cluster, LocalCluster) else None


@pytest.fixture
def copy() -> int:
    """Which copy of a scenario a test reports (--repeat); the only one otherwise."""
    return 0


@pytest.fixture(scope="session")
def kit_run(request: pytest.FixtureRequest) -> RunState:
    """The run's state: its options as read once, its scenarios, what it started and timed."""
    return run_state(request.config)


@pytest.fixture(scope="session")
def run_id(kit_run: RunState) -> str:
    return kit_run.run_id


@contextmanager
def held(state: RunState, target: str) -> Iterator[Cluster]:
    """``target``'s cluster from the run's collection, up, until the fixture that asked is done."""
    clusters = state.clusters
    assert clusters is not None, "the run's clusters are made when its tests are collected"
    try:
        c = clusters.get(target)
    except KitError as e:
        pytest.fail(f"{clusters.what} not available: {e}", pytrace=False)
    try:
        yield c
    finally:
        clusters.release(target)


@pytest.fixture(scope="session")
def cluster(kit_run: RunState, build: str):
    """A ready cluster for one scheduler build; ended at the end, whatever happens."""
    with held(kit_run, build) as c:
        kube = Kube(c.kubeconfig)
        try:
            yield ClusterUnderTest(kube, c)
        finally:
            kube.close()


@pytest.fixture(scope="session")
def kube(cluster: ClusterUnderTest) -> Kube:
    return cluster.kube


@pytest.fixture(scope="session")
def local_cluster(cluster: ClusterUnderTest) -> LocalCluster | None:
    return cluster.local


@pytest.fixture(scope="session")
def node_source(kube: Kube):
    """kwok nodes made per scenario (on kind too: the kit runs a kwok controller there)."""
    from harness.run.pods.nodes import KwokNodes

    return KwokNodes()


@pytest.fixture(scope="session")
def real_nodes(cluster: ClusterUnderTest):
    """(kind) the cluster's workers, with real kubelets, lent to one scenario at a time."""
    from harness.clusters.kind import KindCluster
    from harness.run.pods.nodes import RealNodes

    if not isinstance(cluster.cluster, KindCluster):
        pytest.fail("real kubelets are only on --cluster kind", pytrace=False)
    return RealNodes(cluster.cluster.workers)


def _asked(request: pytest.FixtureRequest, state: RunState, param: str, build: str) -> list:
    """The run's scenarios (in catalogue order) that this session's tests ask of ``build``."""
    ids = {s.id for s in selected(request.session.items, param, build)}
    return [s for s in state.scenarios if s.id in ids]


@pytest.fixture(scope="session")
def batch(request: pytest.FixtureRequest, kit_run: RunState, build: str, run_id: str):
    """The target's scenarios, run side by side; on the kit's local clusters, started at collection."""
    from harness.run.pods.batch import Batch

    state, opts = kit_run, kit_run.options
    early = state.batches
    if early is not None and build in early.batches:
        # Started at collection, on the run's own clusters; here we only wait for it.
        try:
            b = early.batches[build].result()
        except KitError as e:
            pytest.fail(f"cluster not available: {e}", pytrace=False)
    else:
        c: ClusterUnderTest = request.getfixturevalue("cluster")
        b = Batch(_asked(request, state, "scenario", build), c.kube, c.local, split_target(build)[0], run_id,
                  request.getfixturevalue("node_source"), opts.repeat,
                  stop_at_first_failure=opts.stop_at_first_failure, artifacts=opts.artifacts,
                  timelines=opts.timelines)
        b.run()
    yield b
    state.preemptions += [dict(rec, nodes="kwok") for r in b.results.values() for rec in r.timings]
    if b.results:
        longest = max(b.results.values(), key=lambda r: r.seconds)
        state.timing_lines.append(f"[{build}] {len(b.results)} scenarios in {b.wall:.1f} s wall time; "
                                  f"longest: {longest.scenario.id} {longest.seconds:.1f} s")
        state.longest = max(state.longest, longest.seconds)


@pytest.fixture(scope="session")
def real_batch(request: pytest.FixtureRequest, kit_run: RunState, build: str, run_id: str, real_nodes):
    """(kind) the real-kubelet scenarios of the target, one at a time on the lent workers."""
    from harness.run.pods.batch import Batch

    state, opts = kit_run, kit_run.options
    c: ClusterUnderTest = request.getfixturevalue("cluster")
    # A run id of its own: the kwok batch's namespaces of the same scenarios may still be going.
    b = Batch(_asked(request, state, "real_scenario", build), c.kube, c.local, split_target(build)[0],
              run_id + "r", real_nodes, stop_at_first_failure=opts.stop_at_first_failure,
              artifacts=opts.artifacts / "real-kubelets", timelines=opts.timelines)
    b.run()
    state.preemptions += [dict(rec, nodes="real") for r in b.results.values() for rec in r.timings]
    state.timing_lines.append(f"[{build}] {len(b.results)} scenarios on real kubelets in {b.wall:.1f} s wall time")
    return b


@pytest.fixture(scope="session")
def karmada_plane(kit_run: RunState):
    """The run's one Karmada control plane (its API server and members: the kit's local clusters)."""
    with held(kit_run, "karmada") as plane:
        yield plane
