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
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.host import lifecycle
from harness.clusters.local import BUILDS, ClusterOptions, LocalCluster, slug, split_target
from harness.errors import KitError
from harness.kube import Kube


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("priority-conformance")
    g.addoption("--scheduler", default="plugins",
                help="scheduler build(s) under test, comma-separated: plugins (scheduler-plugins with "
                     "PreemptionToleration, default) and/or upstream (kube-scheduler with DefaultPreemption)")
    g.addoption("--k8s-version", default=None, metavar="RELEASE",
                help="Kubernetes release(s) of the whole local control plane, comma-separated (1.35,1.37) or "
                     "all; each build runs on each release where it builds (default: the newest release on "
                     "which both builds run). With several, the run ends with a scenario x release table")
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
                help="with --cluster kind: the kind binary to use (default: the kit's build of the pinned kind)")
    g.addoption("--kind-node-image", default=None, metavar="IMAGE",
                help="with --cluster kind: the node image, already on this Docker host (default: the kit's "
                     "offline build of its own release, `./kit kind-image`)")
    g.addoption("--scheduler-image", default=None,
                help="with --cluster kind: the kube-scheduler image under test, already on this Docker host "
                     "(default: the node image's own for upstream, the kit's scheduler-plugins build for plugins)")
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
    g.addoption("--system", choices=["pods", "karmada"], default="pods",
                help="what is under test: pods (kube-scheduler builds, default) or karmada (binding priority: "
                     "karmada-controller-manager and karmada-scheduler on a local Karmada control plane)")
    g.addoption("--karmada-scheduler-binary", type=Path, default=None,
                help="with --system karmada: run this karmada-scheduler binary instead of the kit's build")
    g.addoption("--karmada-scheduler-gates", default=None, metavar="GATE=BOOL,...",
                help="with --system karmada: feature gates of karmada-scheduler over the kit's and the "
                     "scenario's (PriorityBasedScheduling=false runs a misconfigured scheduler the suite must catch)")


def _builds(config: pytest.Config) -> list[str]:
    """The targets under test: a build, or build@release when --k8s-version is given."""
    builds = [b.strip() for b in config.getoption("--scheduler").split(",") if b.strip()]
    bad = [b for b in builds if b not in BUILDS]
    if bad or not builds:
        raise pytest.UsageError(f"--scheduler: unknown build {bad}: choose from {', '.join(BUILDS)}")
    if config.getoption("--kubeconfig") and len(builds) > 1:
        raise pytest.UsageError("--kubeconfig runs one existing cluster: give a single --scheduler")
    wanted = config.getoption("--k8s-version")
    if wanted is None:
        return builds
    if config.getoption("--kubeconfig") or config.getoption("--cluster") != "local":
        raise pytest.UsageError("--k8s-version chooses the release of the local cluster the kit starts; "
                                "an existing or kind cluster runs the release it runs")
    from harness.build import toolchain

    known = toolchain.releases()
    chosen = known if wanted.strip() == "all" else [r.strip() for r in wanted.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in known]
    if unknown or not chosen:
        raise pytest.UsageError(f"--k8s-version: no release {', '.join(unknown) or repr(wanted)}: "
                                f"choose from {', '.join(known)} or all")
    own_binary = config.getoption("--scheduler-binary") is not None
    targets = [f"{b}@{r}" for r in chosen for b in builds
               if b != "plugins" or own_binary or toolchain.has_plugins(r)]
    if not targets:
        raise pytest.UsageError(f"--k8s-version {wanted}: no scheduler-plugins release builds on it; "
                                f"the plugins build runs on {', '.join(r for r in known if toolchain.has_plugins(r))}")
    return targets


def _karmada(config: pytest.Config) -> bool:
    return config.getoption("--system") == "karmada"


def pytest_configure(config: pytest.Config) -> None:
    # SIGTERM and SIGHUP tear down like Ctrl-C, and Ctrl-C works even if inherited as ignored.
    lifecycle.install_signal_handlers()
    _builds(config)
    # A bad scenario file stops the run before anything starts, with its file and field.
    from harness.formats.pods import ScenarioError, load_sources

    config._scenarios, config._binding_scenarios = [], []
    try:
        if _karmada(config):
            from harness.formats.bindings import load_sources as load_binding_sources

            config._binding_scenarios = load_binding_sources(config.getoption("--scenarios"))
        else:
            config._scenarios = load_sources(config.getoption("--scenarios"))
    except ScenarioError as e:
        raise pytest.UsageError(f"invalid scenario: {e}") from None
    if _karmada(config):
        from harness.clusters.karmada import parse_gates

        if config.getoption("--cluster") != "local" or config.getoption("--kubeconfig"):
            raise pytest.UsageError("--system karmada runs on the local Karmada control plane the kit starts; "
                                    "--cluster kind and --kubeconfig are for pod scheduling")
        from harness.build import toolchain

        release = config.getoption("--k8s-version")
        if release is not None and release not in toolchain.releases():
            raise pytest.UsageError(f"--k8s-version: with --system karmada, one release of "
                                    f"{', '.join(toolchain.releases())} for its API server and members")
        try:
            config._karmada_gates = parse_gates(config.getoption("--karmada-scheduler-gates") or "")
        except KitError as e:
            raise pytest.UsageError(f"--karmada-scheduler-gates: {e}") from None
    if config.getoption("--cluster") == "kind" and not (config.getoption("--no-cluster")
                                                         or config.getoption("collectonly")):
        # A Docker host that cannot run kind is one error before anything is built.
        from harness.clusters.kind import preflight
        from harness.build.node_image import image_exists

        try:
            config._kind_binary = preflight(config.getoption("--kind-binary"))
        except KitError as e:
            raise pytest.UsageError(str(e)) from None
        if config.getoption("--kind-node-image") and not image_exists(config.getoption("--kind-node-image")):
            raise pytest.UsageError(f"--kind-node-image {config.getoption('--kind-node-image')}: no such image "
                                    "on this Docker host (the kit pulls nothing)")
    if config.getoption("--cluster") == "kind" and config.getoption("--scheduler-config"):
        raise pytest.UsageError("--scheduler-config is for the local cluster: on kind the kit mounts its own "
                                "configuration of each build (see kind-config.yaml)")
    for opt in ("--scheduler-binary", "--scheduler-config", "--kubeconfig", "--karmada-scheduler-binary"):
        p = config.getoption(opt)
        if p is not None and not p.is_file():
            raise pytest.UsageError(f"{opt}: file not found: {p}")


def _modules_needed(config: pytest.Config) -> dict[str | None, tuple[str, ...]]:
    """The components, by release, that the local clusters of this run will start binaries from."""
    if _karmada(config) and not config.getoption("--no-cluster"):
        # Karmada's API server and its members are the kit's own local clusters.
        release = config.getoption("--k8s-version")
        return {release: ("etcd", "kwok", "kubernetes", "karmada")}
    if not _local_mode(config):
        return {}
    out: dict[str | None, list[str]] = {}
    for target in _builds(config):
        build, release = split_target(target)
        modules = out.setdefault(release, ["etcd", "kwok", "kubernetes"])
        if build == "plugins" and config.getoption("--scheduler-binary") is None and "scheduler-plugins" not in modules:
            modules.append("scheduler-plugins")
    return {r: tuple(m) for r, m in out.items()}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Build everything before the first test, once, with its progress on the terminal.

    Building inside a test would hide the progress in captured output and let
    two tests (or a test's subprocess) start the same build; the build lock
    in ``toolchain`` keeps other processes out too.
    """
    config = session.config
    needed = _modules_needed(config)
    kind_image = (config.getoption("--cluster") == "kind" and not config.getoption("--kind-node-image")
                  and not config.getoption("--no-cluster"))
    if not (needed or kind_image) or config.getoption("collectonly"):
        return
    from harness.build import toolchain

    capman = config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        try:
            for release, modules in needed.items():
                toolchain.ensure_all(modules, release)
            if kind_image:
                from harness.build import node_image

                node_image.ensure()
        except KitError as e:
            what = "the kind node image" if kind_image else "the control plane"
            raise pytest.UsageError(f"cannot build {what}: {e}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "build" in metafunc.fixturenames:
        metafunc.parametrize("build", _builds(metafunc.config), scope="session")
    if "copy" in metafunc.fixturenames:
        n = metafunc.config.getoption("--repeat")
        if n < 1:
            raise pytest.UsageError("--repeat: give a number of copies, 1 or more")
        if n > 1:  # one copy keeps the plain test ids
            metafunc.parametrize("copy", range(n), ids=[f"copy{i}" for i in range(n)])
    if "binding_scenario" in metafunc.fixturenames:
        metafunc.parametrize("binding_scenario", [
            pytest.param(s, id=s.id, marks=[pytest.mark.cluster, pytest.mark.karmada])
            for s in metafunc.config._binding_scenarios])
    if "real_scenario" in metafunc.fixturenames:
        from harness.clusters.kind import WORKERS
        from harness.run.placement import on_real_kubelets

        metafunc.parametrize("real_scenario", [
            pytest.param(s, id=s.id, marks=[pytest.mark.cluster, *(getattr(pytest.mark, a) for a in s.areas)])
            for s in metafunc.config._scenarios if on_real_kubelets(s, WORKERS)])
    if "scenario" in metafunc.fixturenames:
        # One test per scenario, marked with its areas so that -m selects by area.
        metafunc.parametrize("scenario", [
            pytest.param(s, id=s.id, marks=[pytest.mark.cluster, *(getattr(pytest.mark, a) for a in s.areas)])
            for s in metafunc.config._scenarios])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # One system per run: the other system's tests are deselected (not skipped: they were not asked for).
    karmada = _karmada(config)
    kind = config.getoption("--cluster") == "kind"
    other_cluster = kind or config.getoption("--kubeconfig") is not None
    # Real kubelets are only on kind, and the fault tests' own local clusters only in a run that
    # starts local clusters: elsewhere those tests were not asked for either.
    keep = [i for i in items if (i.get_closest_marker("karmada") is not None) == karmada
            and (kind or i.get_closest_marker("real_kubelets") is None)
            and not (other_cluster and i.get_closest_marker("local_clusters") is not None)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
    if not config.getoption("--no-cluster"):
        return
    skip = pytest.mark.skip(reason="--no-cluster was given: cluster tests were not run")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)


BATCHES_AT_ONCE = 2  # targets (build@release) running their scenarios at the same time


class LocalClusters:
    """The run's local clusters: one per build, started together, each build's scenarios run in
    the background from the moment tests are collected, while other tests (faults, smoke) run."""

    def __init__(self, config: pytest.Config, run_id: str):
        self.config, self.run_id = config, run_id
        self._lock = threading.Lock()
        self._clusters: dict[str, Future] = {}
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="clusters")
        self.batches: dict[str, Future] = {}
        self._batch_objects: dict = {}
        self._ending = threading.Event()
        self.started = time.monotonic()
        self._peak = 0
        self._made: list[LocalCluster] = []  # every cluster of this run, for the memory figure
        self._done = threading.Event()
        self._drained = threading.Event()  # every batch has ended
        threading.Thread(target=self._watch_memory, name="memory", daemon=True).start()

    def _watch_memory(self) -> None:
        while not self._done.wait(1):
            self._peak = max(self._peak, self._rss())

    def _rss(self) -> int:
        return lifecycle.rss_of_kit([c.workdir for c in list(self._made) if c.workdir is not None])

    def peak_rss(self) -> int:
        return max(self._peak, self._rss())

    def options(self, target: str, suffix: str = "") -> ClusterOptions:
        c = self.config
        build, release = split_target(target)
        return ClusterOptions(build=build, release=release or "", scheduler_binary=c.getoption("--scheduler-binary"),
                              scheduler_config=c.getoption("--scheduler-config"),
                              scheduler_verbosity=c.getoption("--scheduler-verbosity"),
                              name=f"prio-{slug(target)}-{os.getpid()}" + (f"-{suffix}" if suffix else ""))

    def _up(self, build: str) -> LocalCluster:
        local = LocalCluster(self.options(build))
        self._made.append(local)
        local.up()
        return local

    def get(self, build: str) -> LocalCluster:
        with self._lock:
            if build not in self._clusters:
                self._clusters[build] = self._pool.submit(self._up, build)
        return self._clusters[build].result()

    def own(self, build: str, suffix: str) -> LocalCluster:
        """A further cluster of the build for one scenario; the caller brings it up and down."""
        local = LocalCluster(self.options(build, suffix))
        self._made.append(local)
        return local

    def _run_batch(self, target: str, scenarios: list):
        from harness.run.batch import Batch
        from harness.run.pods.nodes import KwokNodes

        local = self.get(target)
        kube = Kube(local.kubeconfig)
        try:
            b = self._batch_objects[target] = Batch(
                scenarios, kube, local, split_target(target)[0], self.run_id, KwokNodes(),
                self.config.getoption("--repeat"),
                stop_at_first_failure=self.config.getoption("maxfail") == 1,
                artifacts=self.config.getoption("--artifacts"),
                alone_cluster=lambda suffix: self.own(target, suffix),
                release=local.options.release)
            if self._ending.is_set():
                b.cancel()
            b.run()
            return b
        finally:
            kube.close()

    def start_batches(self, wanted: dict[str, list]) -> None:
        """Each target's scenarios, in the background, at most ``BATCHES_AT_ONCE`` at a time in
        release order (more at once starve each other of CPU on a small machine, and a starved
        scheduler fails timing-sensitive scenarios); by default that is both builds together."""
        order = list(wanted)
        for target in order:
            self.batches[target] = Future()

        def drive() -> None:
            try:
                for i in range(0, len(order), BATCHES_AT_ONCE):
                    turn = order[i:i + BATCHES_AT_ONCE]
                    if self._ending.is_set():
                        for t in turn:
                            self.batches[t].set_exception(KitError("the run was stopped before this target's turn"))
                        continue
                    running = {t: self._pool.submit(self._run_batch, t, wanted[t]) for t in turn}
                    for t, f in running.items():
                        try:
                            self.batches[t].set_result(f.result())
                        except BaseException as e:
                            self.batches[t].set_exception(e)
            finally:
                self._drained.set()

        threading.Thread(target=drive, name="batches", daemon=True).start()

    def down_all(self) -> None:
        # Tests that ended early (-x, an interrupt) leave batches running: their verdicts are
        # no longer wanted, and every scenario stops at its next poll.
        self._ending.set()
        for b in list(self._batch_objects.values()):
            b.cancel()
        if self.batches:
            self._drained.wait(30)
        for build, f in self._clusters.items():
            try:
                local = f.result()
            except BaseException:
                continue  # up() removed what it had started
            if self.config.getoption("--keep-cluster") and not lifecycle.stopping():
                local.keep()
                print(f"\nkept the {build} cluster: KUBECONFIG={local.kubeconfig}; "
                      f"stop it with: KWOK_WORKDIR={local.workdir} kwokctl --name {local.name} delete cluster")
            else:
                local.down()
        self._done.set()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _local_mode(config: pytest.Config) -> bool:
    """Whether this run starts local pod-scheduling clusters (a Karmada run starts its own plane)."""
    return not (config.getoption("--no-cluster") or config.getoption("--kubeconfig")
                or config.getoption("--cluster") != "local" or _karmada(config))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start every build's cluster, and its scenarios, as soon as the tests are known."""
    config = session.config
    if not _local_mode(config) or config.getoption("collectonly"):
        return
    config._run_id = uuid.uuid4().hex[:6]
    clusters = config._local_clusters = LocalClusters(config, config._run_id)
    wanted: dict[str, list] = {}
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "scenario" in params and "build" in params:
            ids = wanted.setdefault(params["build"], [])
            if params["scenario"] not in ids:
                ids.append(params["scenario"])
    clusters.start_batches({t: wanted[t] for t in _builds(config) if t in wanted})


def pytest_sessionfinish(session: pytest.Session) -> None:
    clusters = getattr(session.config, "_local_clusters", None)
    if clusters is not None:
        clusters.down_all()


@pytest.fixture
def copy() -> int:
    """Which copy of a scenario a test reports (--repeat); the only one otherwise."""
    return 0


@pytest.fixture(scope="session")
def run_id(request: pytest.FixtureRequest) -> str:
    return getattr(request.config, "_run_id", None) or uuid.uuid4().hex[:6]


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
        from harness.clusters import kind

        problem = None
        try:
            with kind.cluster_for(config, build, config._kind_binary) as run:
                config._kind_runs = {**getattr(config, "_kind_runs", {}), build: run}
                config._scenario_timing = getattr(config, "_scenario_timing", []) + [
                    f"[{build}] kind cluster {run.name}: created in {run.timings['create']:.1f} s, "
                    f"ready (CNI, scheduler, kwok) in {run.timings['ready']:.1f} s"]
                yield run.kube, None
        except KitError as e:
            problem = str(e)
        if problem:
            pytest.fail(f"kind cluster not available: {problem}", pytrace=False)
        return
    # The local clusters are the run's, started at collection and stopped at session end.
    try:
        local = config._local_clusters.get(build)
    except KitError as e:
        pytest.fail(f"cluster not available: {e}", pytrace=False)
    kube = Kube(local.kubeconfig)
    try:
        yield kube, local
    finally:
        kube.close()


@pytest.fixture(scope="session")
def kube(cluster) -> Kube:
    return cluster[0]


@pytest.fixture(scope="session")
def node_source(kube: Kube):
    """kwok nodes made per scenario (on kind too: the kit runs a kwok controller there)."""
    from harness.run.pods.nodes import KwokNodes

    return KwokNodes()


@pytest.fixture(scope="session")
def real_nodes(request: pytest.FixtureRequest, build: str, kube: Kube):
    """(kind) the cluster's workers, with real kubelets, lent to one scenario at a time."""
    from harness.run.pods.nodes import RealNodes

    run = getattr(request.config, "_kind_runs", {}).get(build)
    if run is None:
        pytest.fail("real kubelets are only on --cluster kind", pytrace=False)
    return RealNodes(run.workers)


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


def _cell(result, batch) -> str:
    from harness.run.verdict import failed

    if result is None:
        return "-"
    if result.cancelled:
        return "stopped"
    if failed(result, batch.build, batch.release):
        return "FAIL"
    if not result.scenario.applies_to(batch.build, batch.release):
        return "differs"  # specified for another build or release, and it does differ: as expected
    return "fault" if result.known_faults else "pass"


def release_matrix(batches: dict) -> list[str]:
    """Scenario x (build@release): pass, FAIL, fault (a known scheduler race, outcome as
    specified), differs (specified for another build or release, as expected); then each column's
    wall time."""
    targets = list(batches)
    ids = sorted({sid for b in batches.values() for sid, _ in b.results})
    width = max([len(i) for i in ids] + [8])
    cols = [max(len(t), 7) for t in targets]
    lines = [" ".join([f"{'scenario':<{width}}"] + [f"{t:<{w}}" for t, w in zip(targets, cols)])]
    for sid in ids:
        cells = [_cell(batches[t].results.get((sid, 0)), batches[t]) for t in targets]
        lines.append(" ".join([f"{sid:<{width}}"] + [f"{c:<{w}}" for c, w in zip(cells, cols)]))
    lines.append(" ".join([f"{'wall time':<{width}}"] + [f"{batches[t].wall / 60:.1f} min".ljust(w)
                                                          for t, w in zip(targets, cols)]))
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    for line in getattr(config, "_scenario_timing", []):
        terminalreporter.write_line(line)
    timings = getattr(config, "_karmada_timings", None)
    if timings:
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items() if k != "down")
        terminalreporter.write_line(f"[karmada] control plane: {parts}; scenarios one after another: "
                                    f"{getattr(config, '_karmada_seconds', 0.0):.1f} s")
    clusters = getattr(config, "_local_clusters", None)
    if clusters is not None and config.getoption("--k8s-version") and clusters._batch_objects:
        lines = release_matrix({t: clusters._batch_objects[t] for t in _builds(config)
                                if t in clusters._batch_objects})
        terminalreporter.write_sep("=", "scenario x release")
        for line in lines:
            terminalreporter.write_line(line)
        out = config.getoption("--artifacts")
        out.mkdir(parents=True, exist_ok=True)
        (out / "release-matrix.txt").write_text("\n".join(lines) + "\n")
        terminalreporter.write_line(f"(also in {out / 'release-matrix.txt'})")
    longest = getattr(config, "_longest", 0.0)
    if clusters is not None and longest:
        wall = time.monotonic() - clusters.started
        terminalreporter.write_line(
            f"[run] {wall:.1f} s from collection to the end, {wall / longest:.2f}x the longest scenario "
            f"({longest:.1f} s); peak memory of the kit and its clusters {clusters.peak_rss() / 2**30:.1f} GiB")
