"""A cluster the kit did not start (--kubeconfig): the cluster adapter (``harness.clusters.base``)
over what it is pointed at. Bringing it up is finding it reachable; the kit made nothing of it,
so there is nothing to keep or take down, and no log of it on this machine."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.kube import Kube


@dataclass
class ExistingCluster:
    given: Path  # its kubeconfig, as the user named it
    timings: dict[str, float] = field(default_factory=dict)
    workdir: Path | None = None
    reached: bool = field(default=False, init=False)

    @property
    def name(self) -> str:
        return str(self.given)

    @property
    def kubeconfig(self) -> Path | None:
        return self.given if self.reached else None

    def up(self) -> Path:
        kube = Kube(self.given)
        try:
            kube.check_reachable()
        finally:
            kube.close()
        self.reached = True
        return self.given

    def log_path(self, component: str) -> Path | None:
        return None

    def keep(self) -> str:
        return ""

    def down(self) -> None:
        self.reached = False


__all__ = ["ExistingCluster"]
