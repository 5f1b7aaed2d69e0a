"""A build's scenarios, run side by side: the shared cluster's batch and the ones that need a cluster alone.

Scenarios run concurrently on one cluster, each in its own namespace with its
own nodes. A scenario that needs the cluster to itself (``placement.why_alone``: it
changes cluster-wide state, or its outcome needs a quiet queue) gets a cluster of its
own when the kit can start one (``alone_cluster``), concurrently with the
rest; on a cluster the kit cannot multiply (``--kubeconfig``, kind) such
scenarios run one at a time after the batch, once its namespaces are gone.
Longest first everywhere: a long scenario started last ends a run late.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Callable

from reference.release import DEFAULT_RELEASE

from harness.host import lifecycle, memory
from harness.clusters.local import LocalCluster
from harness import flush, gates
from harness.errors import KitError
from harness.kube import Kube
from harness.run.pods.placement import why_alone
from harness.run.pods.quiet import QuietClusters, Room
from harness.run.pods.nodes import KwokNodes, NodeSource
from harness.run.pods.result import Result
from harness.run.pods.scenario_run import PodRun
from harness.run.pods.verdict import failed
from harness.formats.pods import Scenario

MAX_CONCURRENT = 12  # scenarios at once on the shared cluster
# Clusters of their own at once, per build, while the shared batch runs, and once it is done
# (quiet.Room says why); fewer where the machine's memory does not hold them (alone_rooms). Since
# such clusters are handed on, fault scenarios' too, a run starts about a dozen of them, and what
# the scenarios alone take is their own timers: at 2 and 4 the both-build catalogue took 460 s of
# which half the cores' time was idle, at 4 and 8 it took 305 s (10.4 GiB at the peak). Once the
# control planes ran on one processor each (clusters.config.CONTROL_PLANE_ENV) 4 and 8 left a
# quarter of the cores' time idle (307 s and 314 s); 6 and 10 took 276 s with a tenth idle (12.6
# GiB), and 8 and 12 291 s, the extra clusters' own upkeep eating what they gained.
MAX_ALONE_CLUSTERS = 6
MAX_ALONE_CLUSTERS_AFTER = 10
# What one cluster of a scenario's own holds in memory, with its scenario running: the API server
# about 250 MiB, the controller manager 100, the scheduler 70, etcd 45, kwok's controller 30, and
# their growth with the scenario's objects.
CLUSTER_BYTES = 640 << 20


def alone_rooms(batches_at_once: int, available: int | None = None) -> tuple[int, int]:
    """(while the shared batch runs, after it): how many clusters of their own one build's batch may
    run at once, so that ``batches_at_once`` batches together keep within three quarters of the
    memory the machine has free now (``available``: MemAvailable, read when not given)."""
    if available is None:
        available = memory.available()
    if available is None:
        return MAX_ALONE_CLUSTERS, MAX_ALONE_CLUSTERS_AFTER
    fit = max(1, int(available * 3 / 4 / CLUSTER_BYTES / max(1, batches_at_once)))
    return min(MAX_ALONE_CLUSTERS, fit), min(MAX_ALONE_CLUSTERS_AFTER, fit)


class Batch:
    """Runs the selected scenarios (each ``copies`` times) for one build and keeps their results."""

    def __init__(self, selected: list[Scenario], kube: Kube, local: LocalCluster | None, build: str, run_id: str,
                 nodes: NodeSource, copies: int = 1, stop_at_first_failure: bool = False,
                 artifacts: Path = Path("artifacts"),
                 alone_cluster: Callable[[str, gates.Settings], LocalCluster] | None = None,
                 on_result: Callable[[Result], None] | None = None, release: str | None = None,
                 timelines: bool = False, batches_at_once: int = 1):
        self.selected, self.kube, self.local, self.build, self.run_id = selected, kube, local, build, run_id
        self.nodes, self.copies, self.artifacts = nodes, copies, artifacts
        self.stop_at_first_failure = stop_at_first_failure
        self.alone_cluster = alone_cluster
        self.on_result = on_result  # told of each result as it comes (progress of a long batch)
        self.timelines = timelines  # every run keeps its timeline picture, a pass too (--timelines)
        self.batches_at_once = batches_at_once  # this one's and the others' running beside it
        # The Kubernetes release running, whose behaviour the model predicts: unless named, the API
        # server's, if the model knows it (else the pinned one).
        self.release = release or self._release_of(kube)
        self.results: dict[tuple[str, int], Result] = {}
        self.wall = 0.0
        self._runs: list[PodRun] = []
        self._lock = threading.Lock()

    def _run(self, kubeconfig: Path, s: Scenario, copy: int, log: Path | None,
             cluster: LocalCluster | None = None) -> PodRun:
        # A scenario specified for another build is still run, against its own
        # semantics, so the report shows what this build lacks.
        build, release = s.semantics(self.build, self.release)
        cluster = cluster or self.local
        settings = cluster.options.gates if cluster is not None else gates.Settings()
        r = PodRun(kubeconfig, s, build, self.run_id,
                        self.artifacts, log, label=self.build, nodes=self.nodes, copy=copy, release=release,
                        cluster_release=self.release, timelines=self.timelines, gates=settings.gates,
                        flush=self.flush_of(cluster))
        r.result.gates = settings.describe()
        with self._lock:
            self._runs.append(r)
            if self._stopped:
                r.cancel.set()
        return r

    _stopped = False
    quiet: QuietClusters | None = None  # the clusters scenarios have to themselves, kept between them
    room: Room | None = None  # how many of those run at once

    @staticmethod
    def flush_of(cluster) -> timedelta:
        """The flush interval the cluster's scheduler runs with (the release's own where the kit did
        not start it: a kind control plane's static scheduler, or a cluster it was pointed at)."""
        return getattr(cluster, "flush", None) or flush.RELEASE_DEFAULT

    @staticmethod
    def _release_of(kube: Kube) -> str:
        from reference.release import RELEASES

        try:
            found = kube.release()
        except Exception:
            return DEFAULT_RELEASE
        return found if found in RELEASES else DEFAULT_RELEASE

    def cancel(self) -> None:
        """No verdict is wanted any more (the session is ending): every scenario stops at its next poll."""
        with self._lock:
            self._stopped = True
            for r in self._runs:
                r.cancel.set()

    def _done(self, result: Result, copy: int) -> None:
        with self._lock:
            self.results[result.scenario.id, copy] = result
            if self.on_result is not None:
                self.on_result(result)
        if self.stop_at_first_failure and failed(result, self.build, self.release):
            self.cancel()  # -x: the verdict is in; the others' results are not needed

    def unmet(self, s: Scenario) -> str:
        if s.needs_kubelet and not self.nodes.kubelets:
            return "node pressure needs real kubelets, which kwok nodes are not: run it with --cluster kind"
        if s.faults and self.alone_cluster is None:
            return (f"its {s.faults[0]} step needs a scheduler the kit runs itself (a local cluster of its own); "
                    "on kind or an existing cluster the kit does not own the scheduler's process")
        if s.needs_kwok and not self.nodes.creates:
            return (f"its {s.needs_kwok} needs nodes the kit creates (kwok nodes): kind's workers are "
                    "real machines it only borrows; run it on the local cluster")
        if s.cluster_settings() and self.alone_cluster is None:
            # Gates are set only on clusters the kit starts.
            return f"it needs {s.cluster_settings().describe()}, which the kit sets only on the local clusters it starts"
        return ""

    def run(self) -> None:
        started = time.monotonic()
        log = self.local.log_path("kube-scheduler") if self.local else None
        items = sorted(((s, c) for s in self.selected for c in range(self.copies)), key=lambda sc: -sc[0].least_seconds(self.flush_of(self.local)))
        # What this batch cannot give a scenario is reported as not run, never run to fail (which,
        # with -x, would stop every other scenario of the batch).
        for s, c in items:
            if self.unmet(s):
                self._done(Result(s, self.build, unmet=self.unmet(s)), c)
        items = [(s, c) for s, c in items if not self.unmet(s)]
        quiet = {s.id for s in self.selected if why_alone(s, self.build, self.release)}
        together = [(s, c) for s, c in items if s.id not in quiet]
        alone = [(s, c) for s, c in items if s.id in quiet]
        # Lent real nodes go to one scenario at a time; kwok nodes are made per scenario.
        workers = MAX_CONCURRENT if isinstance(self.nodes, KwokNodes) else 1

        def shared(sc: tuple[Scenario, int]) -> None:
            s, c = sc
            self._done(self._run(self.kube.kubeconfig, s, c, log).run(), c)

        pools = [ThreadPoolExecutor(max_workers=workers)]
        futures = [pools[0].submit(shared, sc) for sc in together]
        if self.alone_cluster is not None and alone:
            first, then = alone_rooms(self.batches_at_once)
            self.quiet = QuietClusters(self.alone_cluster, first)
            self.room = Room(first, then)
            self._widen_after(futures)
            pools.append(ThreadPoolExecutor(max_workers=then))
            futures += [pools[1].submit(self._on_own_cluster, s, c) for s, c in alone]
            alone = []
        try:
            for f in futures:
                f.result()
        finally:
            # Interrupted: the workers see the stop and end on their own; waiting for them
            # here would hold the clusters' teardown until every scenario had finished.
            for p in pools:
                p.shutdown(wait=not lifecycle.stopping(), cancel_futures=True)
            if self.quiet is not None:
                self.quiet.close()
        for s, c in alone:
            # Alone on the shared cluster means no other scenario's events either: not even
            # the pod deletions of namespaces still being torn down.
            self.kube.wait_namespaces_gone(self.run_id)
            self._done(self._run(self.kube.kubeconfig, s, c, log).run(), c)
        self.wall = time.monotonic() - started

    def _widen_after(self, shared: list) -> None:
        """Once every scenario of the shared batch has ended, more scenarios may run alone at once."""
        left = [len(shared)]
        lock = threading.Lock()

        def one_done(_future) -> None:
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                self._widen()

        if not shared:
            self._widen()
        for f in shared:
            f.add_done_callback(one_done)

    def _widen(self) -> None:
        self.quiet.limit = self.room.then
        self.room.widen()

    def _on_own_cluster(self, s: Scenario, copy: int) -> None:
        def stopped() -> bool:
            return self._stopped or lifecycle.stopping()

        entered = self.room.enter(stopped)
        try:
            # Stopped before its turn, or while it waited for room.
            if not entered or stopped():
                self._done(Result(s, self.build, error="the run was stopped", cancelled=self._stopped), copy)
                return
            self._alone(s, copy)
        finally:
            if entered:
                self.room.leave()

    def _alone(self, s: Scenario, copy: int) -> None:
        settings = s.cluster_settings()
        try:
            cluster, up = self.quiet.take(f"{s.id[:20]}-{copy}", settings)
        except gates.Unavailable as e:
            self._done(Result(s, self.build, unmet=str(e)), copy)
            return
        reusable = False
        try:
            if not up:
                try:
                    cluster.up()
                except gates.Unavailable as e:
                    self._done(Result(s, self.build, unmet=str(e)), copy)
                    return
                except KitError as e:
                    self._done(Result(s, self.build, error=f"its own cluster did not come up: {e}"), copy)
                    return
            run = self._run(cluster.kubeconfig, s, copy, cluster.log_path("kube-scheduler"), cluster)
            run.scheduler = cluster  # its own: a fault step may restart it
            result = run.run()
            # A run cut short leaves the cluster in no known state; a fault, in one a fresh
            # scheduler ends.
            reusable = not (result.cancelled or lifecycle.stopping())
            self._done(result, copy)
        finally:
            if reusable:
                self.quiet.give_back(cluster, settings, self.run_id,
                                     fresh_scheduler=bool(s.faults or s.needs_standby or s.needs_link))
            else:
                self.quiet.lost(cluster)
