"""The run's clusters and batches: built before the first test, started at collection, gone at the end.

The run's clusters are one collection of whatever kind its options choose (``clusters``). On
the local cluster (the default) every target's scenarios start in the background as soon as
the tests are collected (``Batches``), while other tests (faults, smoke) run; the scenario
tests then only wait for their batch.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from harness.host import lifecycle
from harness.errors import KitError
from harness.kube import Kube
from harness import targets
from harness.targets import split_target
from conformance.plugin.clusters import RunClusters, for_run
from conformance.plugin.state import RUN, RunOptions, RunState, run_state

BATCHES_AT_ONCE = 2  # targets (build@release) running their scenarios at the same time


class Batches:
    """Each target's scenarios on the run's own local clusters, in the background from the
    moment tests are collected, while other tests (faults, smoke) run."""

    def __init__(self, options: RunOptions, run_id: str, clusters: RunClusters):
        self.opts, self.run_id, self.clusters = options, run_id, clusters
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="clusters")
        self.batches: dict[str, Future] = {}  # by target: its Batch, once run
        self.running: dict = {}  # by target: its Batch from the moment it starts (for the matrix, -x)
        self._ending = threading.Event()
        self.started = time.monotonic()
        self._peak = 0
        self._sample = lifecycle.RssSampler()
        self._done = threading.Event()
        self._drained = threading.Event()  # every batch has ended
        threading.Thread(target=self._watch_memory, name="memory", daemon=True).start()

    def _watch_memory(self) -> None:
        while not self._done.wait(1):
            self._peak = max(self._peak, self._rss())

    def _rss(self) -> int:
        return self._sample([c.workdir for c in list(self.clusters.made) if c.workdir is not None])

    def peak_rss(self) -> int:
        return max(self._peak, self._rss())

    def _run_batch(self, target: str, scenarios: list):
        from harness.run.pods.batch import Batch
        from harness.run.pods.nodes import KwokNodes

        local = self.clusters.get(target)
        kube = Kube(local.kubeconfig)
        try:
            b = self.running[target] = Batch(
                scenarios, kube, local, split_target(target)[0], self.run_id, KwokNodes(), self.opts.repeat,
                stop_at_first_failure=self.opts.stop_at_first_failure, artifacts=self.opts.artifacts,
                alone_cluster=lambda suffix, needs: self.clusters.extra(target, suffix, needs),
                release=local.options.release, timelines=self.opts.timelines,
                batches_at_once=min(BATCHES_AT_ONCE, len(self.batches) or 1))
            if self._ending.is_set():
                b.cancel()
            b.run()
            return b
        finally:
            kube.close()

    def start(self, wanted: dict[str, list]) -> None:
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

    def stop(self) -> None:
        # Tests that ended early (-x, an interrupt) leave batches running: their verdicts are
        # no longer wanted, and every scenario stops at its next poll.
        self._ending.set()
        for b in list(self.running.values()):
            b.cancel()
        if self.batches:
            self._drained.wait(30)

    def done(self) -> None:
        """Its clusters are gone: nothing left to measure or run."""
        self._done.set()
        self._pool.shutdown(wait=False, cancel_futures=True)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # SIGTERM and SIGHUP tear down like Ctrl-C, and Ctrl-C works even if inherited as ignored.
    lifecycle.install_signal_handlers()


def modules_needed(state: RunState) -> dict[str | None, tuple[str, ...]]:
    """The components, by release, that the local clusters of this run will start binaries from."""
    opts = state.options
    if opts.karmada and not opts.no_cluster:
        # Karmada's API server and its members are the kit's own local clusters.
        return {opts.k8s_version: (*targets.CONTROL_PLANE, "karmada")}
    if not opts.local_mode:
        return {}
    out: dict[str | None, dict[str, None]] = {}
    for target in state.targets:
        build, release = split_target(target)
        out.setdefault(release, {}).update(dict.fromkeys(targets.modules(build, opts.scheduler_binary is not None)))
    return {r: tuple(m) for r, m in out.items()}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Build everything before the first test, once, with its progress on the terminal.

    Building inside a test would hide the progress in captured output and let
    two tests (or a test's subprocess) start the same build; the build lock
    in ``toolchain`` keeps other processes out too.
    """
    config = session.config
    state = run_state(config)
    opts = state.options
    needed = modules_needed(state)
    kind_image = opts.kind and not opts.kind_node_image and not opts.no_cluster
    if not (needed or kind_image) or opts.collect_only:
        return
    from harness.build import toolchain

    with building(config, "the kind node image" if kind_image else "the control plane"):
        for release, modules in needed.items():
            toolchain.ensure_all(modules, release)
        if kind_image:
            from harness.build import node_image

            node_image.ensure()


@contextmanager
def building(config: pytest.Config, what: str):
    """A build's progress on the terminal (not captured), and its failure one clear usage error."""
    capman = config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        try:
            yield
        except KitError as e:
            raise pytest.UsageError(f"cannot build {what}: {e}") from None


def selected(items: list[pytest.Item], param: str, build: str) -> list:
    """The scenarios the session's tests ask of ``build`` through ``param``, in collection order."""
    out: list = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if param in params and params.get("build") == build and params[param] not in out:
            out.append(params[param])
    return out


def pytest_collection_finish(session: pytest.Session) -> None:
    """Make the run's clusters; on the kit's own local clusters, start every build's, and its
    scenarios, as soon as the tests are known."""
    state = run_state(session.config)
    if state.options.collect_only:
        return
    state.clusters = for_run(state)
    if not state.options.local_mode:
        return
    state.batches = Batches(state.options, state.run_id, state.clusters)
    wanted = {t: selected(session.items, "scenario", t) for t in state.targets}
    if any(getattr(s, "needs_link", False) for ss in wanted.values() for s in ss):
        build_link(session)
    state.batches.start({t: s for t, s in wanted.items() if s})


def build_link(session: pytest.Session) -> None:
    """The proxy a scenario cutting the scheduler's connection needs, built only when one is
    selected (it is known once the tests are), before any batch starts."""
    from harness.build import pins, toolchain

    with building(session.config, "toxiproxy, which a selected scenario's disconnectScheduler step needs"):
        toolchain.ensure_module(pins.wrapper("toxiproxy"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(RUN, None)
    if state is None:
        return
    if state.batches is not None:
        state.batches.stop()
    if state.clusters is not None:
        state.clusters.end_all()
    if state.batches is not None:
        state.batches.done()
