"""Clusters a scenario has to itself, kept for the next scenario that needs the same settings.

A scenario that must not hear other scenarios' events (``placement.why_alone``) runs on a
cluster of its own. Starting one for each such scenario cost a cluster start and stop apiece,
about 11 s on a 2-core machine, for half the catalogue: most of a run's wall time. A cluster
is quiet again once the last scenario's namespace is gone, with its pods (its nodes and
classes are removed by its own teardown), so it is handed to the next scenario instead. One a
fault scenario ran on is handed on too, once its scheduler is as the cluster's start left it
(``LocalCluster.fresh_scheduler``: the fault may have restarted, paused or replaced it): a new
cluster for each of the catalogue's fault scenarios was most of the starts of a run.
"""

from __future__ import annotations

import threading
from typing import Callable

from harness import gates
from harness.clusters.local import LocalCluster
from harness.host import lifecycle
from harness.kube import Kube


class QuietClusters:
    """At most ``limit`` clusters alive; an idle one of the wanted settings is reused, and an idle
    one of other settings is stopped to make room for a new one."""

    def __init__(self, make: Callable[[str, gates.Settings], LocalCluster], limit: int,
                 settle: Callable[[LocalCluster, str], None] | None = None):
        self.make, self.limit, self.settle = make, limit, settle or namespaces_gone
        self.idle: list[tuple[gates.Settings, LocalCluster]] = []
        self.alive = 0
        self.started = self.served = 0  # clusters made, scenarios given one (for the run's summary)
        self.lock = threading.Lock()

    def take(self, name: str, settings: gates.Settings) -> tuple[LocalCluster, bool]:
        """A cluster with ``settings`` and whether it is up already (a reused one); a new one the
        caller brings up, and gives back or stops. ``gates.Unavailable`` when a new one could not
        start with those settings: found before an idle cluster is stopped to make room for it."""
        stale = None
        with self.lock:
            self.served += 1
            for i, (have, cluster) in enumerate(self.idle):
                if have == settings:
                    del self.idle[i]
                    return cluster, True
        made = self.make(name, settings)
        lacking = made.unavailable()
        if lacking:
            raise gates.Unavailable(lacking)
        with self.lock:
            if self.alive >= self.limit and self.idle:
                stale = self.idle.pop(0)[1]
                self.alive -= 1
            self.alive += 1
            self.started += 1
        if stale is not None:
            stale.down()
        return made, False

    def give_back(self, cluster: LocalCluster, settings: gates.Settings, run_id: str,
                  fresh_scheduler: bool = False) -> None:
        """After a scenario: kept for the next one once its namespace is gone (and, after a fault,
        its scheduler started anew), or stopped."""
        try:
            self.settle(cluster, run_id)
            if fresh_scheduler:
                cluster.fresh_scheduler()
        except Exception:  # not quiet in time, or gone: a new cluster is the safe choice
            self.lost(cluster)
            return
        with self.lock:
            self.idle.append((settings, cluster))

    def lost(self, cluster: LocalCluster) -> None:
        """A cluster that is not to be used again (it did not come up, or its run was cut short)."""
        with self.lock:
            self.alive -= 1
        cluster.down()

    def close(self) -> None:
        """Stop every idle cluster (the batch is over, or stopped)."""
        with self.lock:
            idle, self.idle = self.idle, []
            self.alive -= len(idle)
        for _, cluster in idle:
            cluster.down()


class Room:
    """How many scenarios run on clusters of their own at once: ``first`` while the build's shared
    batch runs, ``then`` once it is done. While the shared cluster holds a dozen scenarios the cores
    are busy; after it, what is left is scenarios alone, which mostly wait on the scheduler's own
    timers (a flush, a backoff, a toleration window), and two at a time left the cores idle for
    most of a run. Starts stay bounded machine-wide by ``harness.host.slots``."""

    def __init__(self, first: int, then: int):
        self.cap, self.then, self.busy = first, then, 0
        self.cond = threading.Condition()

    def widen(self) -> None:
        with self.cond:
            self.cap = self.then
            self.cond.notify_all()

    def enter(self, stopped: Callable[[], bool] = lifecycle.stopping) -> bool:
        """Wait for room; False when ``stopped`` says the run is ending instead (no room is then held)."""
        with self.cond:
            while self.busy >= self.cap:
                if stopped():
                    return False
                self.cond.wait(timeout=1.0)
            self.busy += 1
            return True

    def leave(self) -> None:
        with self.cond:
            self.busy -= 1
            self.cond.notify()


def namespaces_gone(cluster: LocalCluster, run_id: str) -> None:
    """Until the run's namespaces on ``cluster`` are gone, with every pod in them."""
    kube = Kube(cluster.kubeconfig)
    try:
        kube.wait_namespaces_gone(run_id)
    finally:
        kube.close()


__all__ = ["Room", "QuietClusters"]
