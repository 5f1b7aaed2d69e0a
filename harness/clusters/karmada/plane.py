"""A real Karmada control plane, locally, from binaries the kit built: no Docker, no images.

Karmada's API server is a kube-apiserver: the host is one of the kit's own
local clusters (kwokctl, binary runtime) with its scheduler and kwok
controller left out, its kube-controller-manager cut down to the controllers
Karmada's own deployment keeps (a deployment controller there would fight
Karmada over Deployment status), and the front-proxy flags an aggregated
API server needs. Around it run Karmada's aggregated API server (it serves
``cluster.karmada.io``, which is no CRD), its webhook (it labels policies and
bindings with the permanent IDs the scheduler filters on), its controller
manager and its scheduler, all built from the pinned Karmada module. Member
clusters are more of the kit's local clusters (kwok nodes, a real
kube-scheduler), joined in Push mode with a service-account token.

Every Karmada process names the host's work directory on its command line, so
the host's teardown, its watchdog and the orphan reaper end them with it.

The plane decides the order; ``install`` (the host and what Karmada puts on it), ``components``
(its processes), ``members`` and ``options`` (the gates) hold the rest.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.build import pins, toolchain
from harness.clusters.karmada import members as membership
from harness.clusters.karmada.components import PORT_NAMES, Components
from harness.clusters.karmada.install import host_options, install, module_dir
from harness.clusters.karmada.kubectl import Kubectl
from harness.clusters.karmada.options import SCHEDULER_GATES, KarmadaOptions, scheduler_gates
from harness.clusters.local import LocalCluster
from harness.errors import KitError
from harness.host import ports
from harness.host.cache import kept_logs_dir


@dataclass
class KarmadaPlane:
    options: KarmadaOptions = field(default_factory=KarmadaOptions)
    host: LocalCluster | None = None
    members: dict[str, LocalCluster] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    scheduler_gates: dict[str, bool] = field(default_factory=lambda: dict(SCHEDULER_GATES))
    components: Components | None = field(default=None, init=False)  # once the host is up
    kubectl: Kubectl | None = field(default=None, init=False)  # on Karmada's API server, once it is up
    # Kept: its later down() must leave Karmada's processes, host and members running.
    handed_over: bool = field(default=False, init=False, repr=False)

    @property
    def name(self) -> str:
        return self.options.name or f"karmada-{os.getpid()}"

    @property
    def kubeconfig(self) -> Path | None:
        return self.host.kubeconfig if self.host is not None else None

    @property
    def workdir(self) -> Path | None:
        """The host's folder: every Karmada process names it (the members have folders of their own)."""
        return self.host.workdir if self.host is not None else None

    @property
    def dir(self) -> Path:
        assert self.host is not None and self.host.workdir is not None
        return self.host.workdir / "karmada"

    def _keep_logs(self) -> Path:
        dest = kept_logs_dir(self.name, self.options.failure_logs)
        if self.host is not None and self.host.workdir is not None and (self.dir / "logs").exists():
            shutil.copytree(self.dir / "logs", dest, dirs_exist_ok=True)
        return dest

    def log_path(self, component: str) -> Path:
        return self.dir / "logs" / f"{component}.log"

    # -- lifecycle --------------------------------------------------------------

    def up(self) -> Path:
        started = time.monotonic()
        self.bins = toolchain.ensure_module(pins.wrapper("karmada"))
        kubectl = toolchain.ensure_all(("kubernetes",), self.options.release or None)["kubectl"]
        self.source = module_dir()
        self.timings["build"] = time.monotonic() - started
        try:
            self.host = LocalCluster(host_options(self.name, self.options))
            self.host.up()
            self.kubectl = Kubectl(kubectl, self.kubeconfig)
            self._karmada_up()
            self._members_up()
        except KitError as e:
            # Nothing may stay behind, but the logs the message points to must.
            logs = self.dir / "logs" if self.host is not None and self.host.workdir is not None else None
            kept = self._keep_logs()
            self.down()
            raise (e.relocated(logs, kept) if logs else e) from None
        except BaseException:
            self.down()
            raise
        self.timings["up"] = time.monotonic() - started - self.timings["build"]
        return self.kubeconfig

    def _karmada_up(self) -> None:
        assert self.host is not None and self.kubectl is not None
        (self.dir / "logs").mkdir(parents=True, exist_ok=True)
        self.ports = ports.reserve(str(self.dir), names=PORT_NAMES)
        self.components = Components(self.bins, self.dir / "logs", self.ports, self.options)
        t0 = time.monotonic()
        install(self.host, self.kubectl, self.components, self.source, self.timings)
        self.start_scheduler({})
        self.timings["karmada"] = time.monotonic() - t0

    def _members_up(self) -> None:
        assert self.components is not None and self.kubectl is not None
        kubectl, t0 = self.kubectl, time.monotonic()
        for m in self.options.members:
            member = LocalCluster(membership.member_options(self.name, m, self.options))
            self.members[m] = member
            member.up()
            membership.join(kubectl, m, member)
        for m in self.options.members:
            self.components.wait(f"member cluster {m} (its Cluster object in Karmada)",
                                 lambda m=m: membership.ready(kubectl, m))
        self.timings["members"] = time.monotonic() - t0

    def keep(self) -> str:
        """Leave the plane running after this process ends. Its host and members are kept local
        clusters; Karmada's own processes are none of theirs, so stopping those is a step of its own."""
        assert self.host is not None
        lines = [f"kept Karmada control plane {self.name}: KUBECONFIG={self.kubeconfig}; its processes are those "
                 f"whose command lines name {self.dir}: stop them before the clusters below",
                 self.host.keep(), *(m.keep() for m in self.members.values())]
        self.handed_over = True
        return "\n".join(lines)

    def down(self) -> None:
        """Stop every process and remove every file. Safe to call twice; after keep() it leaves
        the plane running."""
        if self.handed_over:
            return
        t0 = time.monotonic()
        for m in list(self.members.values()):
            m.down()
        self.members.clear()
        if self.components is not None:
            self.components.stop_all()
            self.components = None
        if self.host is not None and self.host.workdir is not None:
            ports.release(str(self.dir))
            self.host.down()
        self.host = None
        self.timings["down"] = time.monotonic() - t0

    def __enter__(self) -> KarmadaPlane:
        self.up()
        return self

    def __exit__(self, *exc) -> None:
        self.down()

    # -- the scheduler, per scenario --------------------------------------------

    def start_scheduler(self, gates: dict[str, bool] | None = None) -> None:
        """(Re)start karmada-scheduler; with ``gates``, with those feature gates over the kit's
        (and the run's own over both)."""
        if gates is not None:
            self.scheduler_gates = self.gates_for(gates)
        assert self.components is not None
        self.components.restart_scheduler(self.kubeconfig, self.scheduler_gates)

    def gates_for(self, scenario_gates: dict[str, bool]) -> dict[str, bool]:
        return scheduler_gates(scenario_gates, self.options)

    def stop_scheduler(self) -> None:
        if self.components is not None:
            self.components.stop_scheduler()

    def scheduler_running(self) -> bool:
        return self.components is not None and self.components.scheduler_running()

    def log_marks(self) -> dict[str, int]:
        """Where each component's log ends now: a scenario's own lines are what comes after."""
        assert self.components is not None
        return self.components.log_marks()

    def logs_since(self, marks: dict[str, int]) -> dict[str, bytes]:
        assert self.components is not None
        return self.components.logs_since(marks)
