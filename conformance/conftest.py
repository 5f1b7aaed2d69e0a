"""pytest hooks and fixtures for the conformance suite.

The suite needs a cluster running the scheduler under test. By default it
starts one itself (the embedded local cluster: real control plane, kwok
nodes) and removes it at the end. Options choose the scheduler build, a
user's own scheduler binary or config, or an existing cluster.

A missing cluster is a failure, never a silent skip: only ``--no-cluster``
skips the cluster tests, and then pytest reports them as skipped.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from harness import lifecycle
from harness.cluster import BUILDS, ClusterOptions, LocalCluster
from harness.errors import KitError
from harness.kube import Kube


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("priority-conformance")
    g.addoption("--scheduler", default="plugins",
                help="scheduler build(s) under test, comma-separated: plugins (scheduler-plugins with "
                     "PreemptionToleration, default) and/or upstream (kube-scheduler with DefaultPreemption)")
    g.addoption("--scheduler-binary", type=Path, default=None,
                help="run this kube-scheduler binary instead of the kit's build (its semantics: --scheduler)")
    g.addoption("--scheduler-config", type=Path, default=None,
                help="KubeSchedulerConfiguration for the scheduler instead of the kit's")
    g.addoption("--keep-cluster", action="store_true",
                help="leave the local cluster running at the end and print its kubeconfig")
    g.addoption("--kubeconfig", type=Path, default=None,
                help="use the existing cluster this kubeconfig points at (explicit opt-in; nothing is started)")
    g.addoption("--cluster", choices=["local", "kind"], default="local",
                help="where to run: the embedded local cluster (default) or a kind cluster (see README)")
    g.addoption("--kind-binary", default=None,
                help="with --cluster kind: the kind binary to use (default: kind on PATH; nothing is downloaded)")
    g.addoption("--scheduler-image", default=None,
                help="with --cluster kind: the kube-scheduler image under test, already on this Docker host")
    g.addoption("--repeat", type=int, default=1, metavar="N",
                help="run each selected scenario N times side by side (to reproduce a rare failure); "
                     "each copy is a test of its own")
    g.addoption("--scheduler-verbosity", type=int, default=None, metavar="V",
                help="the local cluster's kube-scheduler logs at -v=V (its log lines land in a failing "
                     "scenario's artifacts); 4 shows each scheduling attempt, 5 the queue's moves")
    g.addoption("--artifacts", type=Path, default=Path("artifacts"), metavar="DIR",
                help="where failing scenarios leave their pods, events and scheduler log lines (default: artifacts)")
    g.addoption("--scenarios", type=Path, action="append", default=None, metavar="PATH",
                help="run these scenario files or folders instead of the kit's catalogue (repeatable; "
                     "add --scenarios scenarios to run the catalogue too)")
    g.addoption("--no-cluster", action="store_true",
                help="skip every test that needs a cluster (they are reported as skipped, not passed)")


def _builds(config: pytest.Config) -> list[str]:
    builds = [b.strip() for b in config.getoption("--scheduler").split(",") if b.strip()]
    bad = [b for b in builds if b not in BUILDS]
    if bad or not builds:
        raise pytest.UsageError(f"--scheduler: unknown build {bad}: choose from {', '.join(BUILDS)}")
    if config.getoption("--kubeconfig") and len(builds) > 1:
        raise pytest.UsageError("--kubeconfig runs one existing cluster: give a single --scheduler")
    return builds


def pytest_configure(config: pytest.Config) -> None:
    # SIGTERM and SIGHUP tear down like Ctrl-C, and Ctrl-C works even if inherited as ignored.
    lifecycle.install_signal_handlers()
    _builds(config)
    # A bad scenario file stops the run before anything starts, with its file and field.
    from harness.scenario import ScenarioError, load_sources

    try:
        config._scenarios = load_sources(config.getoption("--scenarios"))
    except ScenarioError as e:
        raise pytest.UsageError(f"invalid scenario: {e}") from None
    for opt in ("--scheduler-binary", "--scheduler-config", "--kubeconfig"):
        p = config.getoption(opt)
        if p is not None and not p.is_file():
            raise pytest.UsageError(f"{opt}: file not found: {p}")


def _modules_needed(config: pytest.Config) -> tuple[str, ...]:
    """The Go modules the local clusters of this run will start binaries from."""
    if (config.getoption("--no-cluster") or config.getoption("--kubeconfig")
            or config.getoption("--cluster") != "local"):
        return ()
    modules = ["etcd", "kwok", "kubernetes"]
    if "plugins" in _builds(config) and config.getoption("--scheduler-binary") is None:
        modules.append("scheduler-plugins")
    return tuple(modules)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Build everything before the first test, once, with its progress on the terminal.

    Building inside a test would hide the progress in captured output and let
    two tests (or a test's subprocess) start the same build; the build lock
    in ``toolchain`` keeps other processes out too.
    """
    modules = _modules_needed(session.config)
    if not modules:
        return
    from harness import toolchain

    capman = session.config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        try:
            toolchain.ensure_all(modules)
        except KitError as e:
            raise pytest.UsageError(f"cannot build the control plane: {e}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "build" in metafunc.fixturenames:
        metafunc.parametrize("build", _builds(metafunc.config), scope="session")
    if "copy" in metafunc.fixturenames:
        n = metafunc.config.getoption("--repeat")
        if n < 1:
            raise pytest.UsageError("--repeat: give a number of copies, 1 or more")
        if n > 1:  # one copy keeps the plain test ids
            metafunc.parametrize("copy", range(n), ids=[f"copy{i}" for i in range(n)])
    if "scenario" in metafunc.fixturenames:
        # One test per scenario, marked with its areas so that -m selects by area.
        metafunc.parametrize("scenario", [
            pytest.param(s, id=s.id, marks=[pytest.mark.cluster, *(getattr(pytest.mark, a) for a in s.areas)])
            for s in metafunc.config._scenarios])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--no-cluster"):
        return
    skip = pytest.mark.skip(reason="--no-cluster was given: cluster tests were not run")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def copy() -> int:
    """Which copy of a scenario a test reports (--repeat); the only one otherwise."""
    return 0


@pytest.fixture(scope="session")
def run_id() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest, build: str):
    """A ready cluster for one scheduler build; torn down at the end, whatever happens."""
    config = request.config
    kubeconfig = config.getoption("--kubeconfig")
    if kubeconfig is not None:
        kube = Kube(kubeconfig)
        _or_fail(kube.check_reachable)
        yield kube, None
        kube.close()
        return
    if config.getoption("--cluster") == "kind":
        from harness import kind

        problem = None
        try:
            with kind.cluster_for(config, build) as kube:
                yield kube, None
        except KitError as e:
            problem = str(e)
        if problem:
            pytest.fail(f"kind cluster not available: {problem}", pytrace=False)
        return
    options = ClusterOptions(
        build=build,
        scheduler_binary=config.getoption("--scheduler-binary"),
        scheduler_config=config.getoption("--scheduler-config"),
        scheduler_verbosity=config.getoption("--scheduler-verbosity"),
        name=f"prio-{build}-{os.getpid()}",
    )
    local = LocalCluster(options)
    _or_fail(local.up)
    kube = Kube(local.kubeconfig)
    try:
        yield kube, local
    finally:
        kube.close()
        if config.getoption("--keep-cluster") and not lifecycle.stopping():
            local.keep()
            print(f"\nkept the {build} cluster: KUBECONFIG={local.kubeconfig}; "
                  f"stop it with: KWOK_WORKDIR={local.workdir} kwokctl --name {local.name} delete cluster")
        else:
            local.down()


@pytest.fixture(scope="session")
def kube(cluster) -> Kube:
    return cluster[0]


@pytest.fixture(scope="session")
def node_source(request: pytest.FixtureRequest, kube: Kube):
    """kwok nodes made per scenario, or (kind) the real workers, lent one scenario at a time."""
    from harness.runner import KwokNodes, RealNodes

    if request.config.getoption("--cluster") == "kind":
        workers = [n.metadata.name for n in kube.core.list_node().items
                   if "node-role.kubernetes.io/control-plane" not in (n.metadata.labels or {})]
        return RealNodes(workers)
    return KwokNodes()


@pytest.fixture(scope="session")
def local_cluster(cluster) -> LocalCluster | None:
    return cluster[1]


def _or_fail(step) -> None:
    try:
        step()
    except KitError as e:
        pytest.fail(f"cluster not available: {e}", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """A scenario test's duration (JUnit's time) is its scenario's, not the shared batch's."""
    outcome = yield
    report = outcome.get_result()
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "scenario" not in params:
        return
    if report.when == "setup":
        report.duration = 0.0  # the batch of every scenario runs inside the first one's setup
    elif report.when == "call":
        batch = item.funcargs.get("batch")
        result = batch.results.get((params["scenario"].id, params.get("copy", 0))) if batch is not None else None
        if result is not None:
            report.duration = result.seconds


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    for line in getattr(config, "_scenario_timing", []):
        terminalreporter.write_line(line)
