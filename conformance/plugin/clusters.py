"""The run's clusters: one collection, whatever their kind.

A run uses one kind of cluster, chosen once from its options (``for_run``): the kit's local
clusters (the default), a kind cluster per target (--cluster kind), the cluster --kubeconfig
names, or the Karmada plane (--system karmada). Each is a ``harness.clusters.base.Cluster``, so
the fixtures and the batches ask for a target's cluster one way, and the run ends each one way.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

from harness import gates
from harness.clusters import base
from harness.clusters.base import Cluster
from harness.targets import slug, split_target

# (target, suffix, gates over the run's) -> a cluster of the run's kind, nothing started yet.
# Only the local kind makes further clusters of a target (a suffix, gates): the others ignore both.
Make = Callable[[str, str, "gates.Settings | None"], Cluster]


@dataclass
class RunClusters:
    """Each target's cluster, brought up once by whoever asks first (the others wait for it),
    and at the end kept (--keep-cluster) or taken down."""

    make: Make
    what: str  # how a cluster that did not come up is named: "<what> not available: ..."
    keep: bool  # --keep-cluster
    # The run's own local clusters serve the batches started at collection and stay up until the
    # session ends; any other kind ends with the fixture that asked for it, so that a run of two
    # builds on kind has one kind cluster at a time.
    held: bool = False
    noted: Callable[[str, Cluster], None] = lambda target, cluster: None  # what the run records once one is up
    made: list[Cluster] = field(default_factory=list)  # every cluster of the run, those of one scenario too
    came_up: dict[str, Cluster] = field(default_factory=dict)  # by target, ended or not: the summary's timings
    _up: dict[str, Future] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def get(self, target: str) -> Cluster:
        """``target``'s cluster, up; KitError (or whatever stopped it) if it did not come up."""
        with self._lock:
            mine = target not in self._up
            if mine:
                self._up[target] = Future()
            f = self._up[target]
        if mine:
            try:
                cluster = self.extra(target)
                cluster.up()
            except BaseException as e:  # up() removed what it had started
                f.set_exception(e)
            else:
                self.came_up[target] = cluster
                f.set_result(cluster)
                self.noted(target, cluster)
        return f.result()

    def extra(self, target: str, suffix: str = "", needs: gates.Settings | None = None) -> Cluster:
        """A further cluster of ``target`` (for one scenario, with the gates it needs over the
        run's); the caller brings it up and down."""
        cluster = self.make(target, suffix, needs)
        self.made.append(cluster)
        return cluster

    def release(self, target: str) -> None:
        """The fixture that asked for ``target``'s cluster is done with it."""
        if not self.held:
            self.end(target)

    def end(self, target: str) -> None:
        f = self._up.pop(target, None)
        try:
            cluster = f.result() if f is not None else None
        except BaseException:
            return  # up() removed what it had started
        if cluster is not None:
            line = base.end(cluster, self.keep)
            if line:
                print("\n" + line)

    def end_all(self) -> None:
        for target in list(self._up):
            self.end(target)


def for_run(state) -> RunClusters:
    """The run's clusters, of the kind its options choose."""
    opts = state.options
    if opts.karmada:
        return RunClusters(lambda target, *_: karmada_plane(state), "Karmada control plane",
                           # The plane has never been kept: --keep-cluster is the pod clusters'.
                           keep=False, noted=lambda target, plane: setattr(state, "karmada_timings", plane.timings))
    if opts.kubeconfig is not None:
        from harness.clusters.existing import ExistingCluster

        return RunClusters(lambda target, *_: ExistingCluster(opts.kubeconfig), "cluster", opts.keep_cluster)
    if opts.kind:
        return RunClusters(lambda target, *_: kind_cluster(state, target), "kind cluster", opts.keep_cluster,
                           noted=lambda target, c: state.timing_lines.append(
                               f"[{target}] kind cluster {c.name}: created in {c.timings['create']:.1f} s, "
                               f"ready (CNI, scheduler, kwok) in {c.timings['ready']:.1f} s"))
    return RunClusters(lambda target, suffix, needs: local_cluster(opts, target, suffix, needs), "cluster",
                       opts.keep_cluster, held=True)


def local_cluster(opts, target: str, suffix: str = "", needs: gates.Settings | None = None):
    from harness.clusters.local import ClusterOptions, LocalCluster

    build, release = split_target(target)
    options = ClusterOptions(build=build, release=release or "", scheduler_binary=opts.scheduler_binary,
                             scheduler_config=opts.scheduler_config, scheduler_verbosity=opts.scheduler_verbosity,
                             gates=opts.gates, failure_logs=opts.artifacts.resolve() / "cluster-logs", label=target,
                             flush_interval=opts.flush,
                             name=f"prio-{slug(target)}-{os.getpid()}" + (f"-{suffix}" if suffix else ""))
    if needs:
        options.gates = options.gates.merged(needs)
    return LocalCluster(options)


def kind_cluster(state, target: str):
    from harness.clusters.kind import KindCluster

    opts = state.options
    return KindCluster(target, state.kind_binary, image=opts.kind_node_image, scheduler_image=opts.scheduler_image,
                       scheduler_binary=opts.scheduler_binary, kubelet_binary=opts.kubelet_binary)


def karmada_plane(state):
    """The run's one Karmada control plane (its API server and members: the kit's local clusters)."""
    from harness.clusters.karmada import KarmadaOptions, KarmadaPlane

    opts = state.options
    wanted = max((len(s.members) for s in state.binding_scenarios), default=1)
    return KarmadaPlane(KarmadaOptions(
        members=tuple(f"m{i + 1}" for i in range(wanted)),
        release=opts.k8s_version or "",
        scheduler_binary=opts.karmada_scheduler_binary,
        scheduler_gates=state.karmada_gates,
        scheduler_verbosity=opts.scheduler_verbosity,
        failure_logs=opts.artifacts.resolve() / "cluster-logs"))
