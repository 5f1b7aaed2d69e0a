"""The shape every kind of cluster has, so that a run asks for one, reads it and ends it the same way.

An adapter (``local.LocalCluster``, ``kind.KindCluster``, ``existing.ExistingCluster``,
``karmada.KarmadaPlane``) is made with its options and nothing started; ``up`` starts it and
answers its kubeconfig, or raises KitError having removed whatever it had started. At the end a
run either takes it ``down`` (all it made goes; twice is harmless) or, with --keep-cluster,
``keep``s it: it then outlives the kit (no watchdog, no reaper) and a later ``down`` leaves it
running, ending only what lives in this process (clients, the kwok controller on kind).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Protocol, TypeVar, runtime_checkable

from harness.host import lifecycle


@runtime_checkable
class Cluster(Protocol):
    """A cluster the kit runs scenarios on (its own, or one it was pointed at)."""

    # Seconds per phase of its bring-up and teardown; "up" is the bring-up a run's summary reports.
    timings: dict[str, float]

    @property
    def name(self) -> str: ...

    @property
    def kubeconfig(self) -> Path | None:
        """Its kubeconfig once up; None before."""

    @property
    def workdir(self) -> Path | None:
        """The folder its processes name on this machine (what the watchdog and reaper go by);
        None for one the kit did not start."""

    def up(self) -> Path:
        """Start it and answer its kubeconfig; on failure nothing it started is left behind."""

    def log_path(self, component: str) -> Path | None:
        """Where ``component`` logs on this machine; None where the kit has no file of it."""

    def keep(self) -> str:
        """Leave it running after the kit ends; the line that tells how to reach and remove it
        ("" when the kit made nothing to keep)."""

    def down(self) -> None:
        """Stop and remove all it made (after ``keep``: only what lives in this process)."""


C = TypeVar("C", bound=Cluster)


def end(cluster: Cluster, keep: bool) -> str:
    """Keep the cluster (``keep``, unless the kit was told to stop) or take it down; the line
    that tells how to reach a kept one, else ""."""
    line = cluster.keep() if keep and not lifecycle.stopping() else ""
    cluster.down()
    return line


@contextmanager
def running(cluster: C, keep: bool = False) -> Iterator[C]:
    """``cluster`` up for the block, and ended (``end``) after it, whatever happens."""
    cluster.up()
    try:
        yield cluster
    finally:
        line = end(cluster, keep)
        if line:
            print("\n" + line)


__all__ = ["Cluster", "end", "running"]
