"""Which tests a run has: one per scenario and target, marked by area; the other system's deselected.

Deselected tests were not asked for (another system, real kubelets off kind, the fault tests'
own clusters on a cluster the kit did not start); with --no-cluster the cluster tests are
skipped, so pytest reports them as not run rather than passed.
"""

from __future__ import annotations

import pytest

from conformance.plugin.state import run_state


def _marked(scenarios, marks) -> list:
    return [pytest.param(s, id=s.id, marks=[pytest.mark.cluster, *marks(s)]) for s in scenarios]


def _areas(s) -> list:
    # Marked with its areas so that -m selects by area.
    return [getattr(pytest.mark, a) for a in s.areas]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_state(metafunc.config)
    if "build" in metafunc.fixturenames:
        metafunc.parametrize("build", state.targets, scope="session")
    if "copy" in metafunc.fixturenames:
        n = state.options.repeat
        if n < 1:
            raise pytest.UsageError("--repeat: give a number of copies, 1 or more")
        if n > 1:  # one copy keeps the plain test ids
            metafunc.parametrize("copy", range(n), ids=[f"copy{i}" for i in range(n)])
    if "binding_scenario" in metafunc.fixturenames:
        metafunc.parametrize("binding_scenario", _marked(state.binding_scenarios, lambda s: [pytest.mark.karmada]))
    if "real_scenario" in metafunc.fixturenames:
        from harness.clusters.kind import WORKERS
        from harness.run.pods.placement import on_real_kubelets

        metafunc.parametrize("real_scenario", _marked([s for s in state.scenarios if on_real_kubelets(s, WORKERS)],
                                                      _areas))
    if "scenario" in metafunc.fixturenames:
        metafunc.parametrize("scenario", _marked(state.scenarios, lambda s: [*_areas(s), *_kubelet(s)]))


def _kubelet(s) -> list:
    # Node pressure needs a kubelet's eviction manager, which kwok nodes lack: on kind such a
    # scenario runs among the real-kubelet tests; elsewhere it is skipped, saying so.
    return [pytest.mark.needs_kubelet] if s.needs_kubelet else []


def wanted(item: pytest.Item, karmada: bool, kind: bool, other_cluster: bool) -> bool:
    """Whether a run asked for the test: its own system's, real kubelets only on kind, and the
    fault tests' own local clusters only in a run that starts local clusters."""
    return ((item.get_closest_marker("karmada") is not None) == karmada
            and (kind or item.get_closest_marker("real_kubelets") is None)
            and not (kind and item.get_closest_marker("needs_kubelet") is not None
                     and item.get_closest_marker("real_kubelets") is None)
            and not (other_cluster and item.get_closest_marker("local_clusters") is not None))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    opts = run_state(config).options
    other_cluster = opts.kind or opts.kubeconfig is not None
    keep = [i for i in items if wanted(i, opts.karmada, opts.kind, other_cluster)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
    if not opts.kind:
        kubelet = pytest.mark.skip(reason="node pressure needs real kubelets, which kwok nodes are not: "
                                          "run it with --cluster kind")
        for item in items:
            if item.get_closest_marker("needs_kubelet") is not None:
                item.add_marker(kubelet)
    if not opts.no_cluster:
        return
    skip = pytest.mark.skip(reason="--no-cluster was given: cluster tests were not run")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)
