"""A real local control plane, run by kwokctl's binary runtime from binaries the kit built.

etcd, kube-apiserver, kube-controller-manager, the kube-scheduler under test
and the kwok controller run as local processes in a private work directory.
Everything the cluster leaves on disk lives there, so teardown is: ask
kwokctl to stop it, kill anything it missed (by the pid files it keeps), and
remove the directory.

The adapter decides when things happen; ``config`` renders what the cluster starts with and
``kwokctl`` drives kwokctl and reads the directory it keeps.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import yaml

from harness import flush, gates, targets
from harness.build import pins, toolchain
from harness.clusters import kwokctl
from harness.clusters.config import CONTROL_PLANE_ENV, STAGES, kwokctl_config, scheduler_config, with_pki
from harness.clusters.kwokctl import Kwokctl
from harness.clusters.link import Link
from harness.clusters.standby import Standby
from harness.errors import KitError
from harness.host import lifecycle, ports, probes, slots
from harness.host.cache import kept_logs_dir
from harness.targets import BUILDS, DEFAULT_BUILD

# Still importable from here, where callers found them: harness.targets and harness.clusters.config hold them.
split_target, slug = targets.split_target, targets.slug
__all__ = ["BUILDS", "STAGES", "ClusterOptions", "LocalCluster", "binaries", "kwokctl_config", "scheduler_config",
           "slug", "split_target"]


@dataclass
class ClusterOptions:
    build: str = DEFAULT_BUILD  # which scheduler build (harness.targets.BUILDS)
    release: str = ""  # the Kubernetes release of the whole control plane; default: pins.default_release()
    scheduler_binary: Path | None = None  # a user's own kube-scheduler
    scheduler_config: Path | None = None  # a user's own KubeSchedulerConfiguration
    name: str = ""
    label: str = ""  # what messages call it (the run's target); default: its build
    workdir: Path | None = None  # default: a fresh temporary directory
    # 180 s: under a kind run, an explorer and a kill matrix at once (load 15 to 20 on 2 cores) a
    # fault scenario's own cluster once took over 90 s, its controller manager exiting twice on
    # the API server's slow post-start hooks; a broken component still fails within it, by name.
    ready_timeout: float = 180.0
    attempts: int = 3  # starts on fresh ports after a port turned out to be taken
    scheduler_verbosity: int | None = None  # the scheduler's -v, for investigations
    # The scheduler's flush interval (harness.flush): the kit's short one unless told; None: the
    # release's own (the flag not given).
    flush_interval: timedelta | None = flush.SHORT
    # For a control plane that is not a pod cluster (Karmada's host): components kwokctl leaves
    # out, and flags added to the ones it runs.
    disable: tuple[str, ...] = ()
    extra_args: dict[str, dict[str, str]] = field(default_factory=dict)
    gates: gates.Settings = field(default_factory=gates.Settings)  # feature gates and runtime-config
    # Where a failed start leaves its component logs; default: the cache's log folder. A run with
    # an artifacts folder keeps them there, so they travel with its results (a CI upload, a
    # campaign pod's /results) instead of staying on a machine that may be gone.
    failure_logs: Path | None = None

    def __post_init__(self) -> None:
        if self.build not in BUILDS:
            raise KitError(f"unknown scheduler build {self.build!r}: choose one of {', '.join(BUILDS)}")
        self.release = self.release or pins.default_release()
        if self.release not in pins.releases():
            raise KitError(f"Kubernetes release {self.release} is not one the kit can build: choose from "
                           f"{', '.join(pins.releases())}")
        if self.scheduler_binary is None and not targets.builds_on(self.build, self.release):
            raise KitError(f"{targets.not_built(self.build, self.release)}: "
                           f"the {self.build} build runs on {', '.join(targets.releases_of(self.build))}")
        for what, p in (("scheduler binary", self.scheduler_binary), ("scheduler config", self.scheduler_config)):
            if p is not None and not Path(p).is_file():
                raise KitError(f"{what} not found: {p}")


def binaries(options: ClusterOptions) -> dict[str, Path]:
    """Every binary the cluster runs, built for its release; ``kube-scheduler`` is the one under test."""
    own = options.scheduler_binary is not None
    bins = toolchain.ensure_all(targets.modules(options.build, own), options.release)
    bins["kube-scheduler"] = (Path(options.scheduler_binary).resolve() if own
                              else targets.scheduler_binary(options.build, bins))
    return bins


def has_default_route(route: str, route6: str) -> bool:
    """Whether /proc/net/route (or ipv6_route) lists a default route."""
    # As kube-apiserver reads them (apimachinery's ChooseHostInterface): not on loopback, and an
    # IPv6 entry flagged RTF_REJECT (0x200, "unreachable", which every IPv6 host has on lo) is none.
    v4 = any(len(f) > 1 and f[0] != "lo" and f[1] == "00000000"
             for f in (line.split() for line in route.splitlines()[1:]))
    v6 = any(len(f) >= 10 and f[9] != "lo" and set(f[0]) == {"0"} and f[1] == "00" and not int(f[8], 16) & 0x200
             for f in (line.split() for line in route6.splitlines()))
    return v4 or v6


def advertise_address() -> str | None:
    """The address kube-apiserver must be told to advertise, or None to let it choose.

    It picks the interface of the default route, and without one it refuses to start ("no
    default routes found"): so it was in the pods of a campaign's Indexed Job on kind. The local
    cluster is reached on loopback only, so the host's own address is enough."""
    def read(path: str) -> str:
        try:
            return Path(path).read_text()
        except OSError:
            return ""
    if has_default_route(read("/proc/net/route"), read("/proc/net/ipv6_route")):
        return None
    try:
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        address = ""
    return address if address and not address.startswith("127.") else "127.0.0.1"


def with_gates(extra_args: dict[str, dict[str, str]], settings: gates.Settings) -> dict[str, dict[str, str]]:
    """Component flags with the gates and runtime-config added (joined to any the flags already set)."""
    out = {name: dict(args) for name, args in extra_args.items()}
    for component, flags in settings.flags().items():
        mine = out.setdefault(component, {})
        for flag, value in flags.items():
            mine[flag] = f"{mine[flag]},{value}" if mine.get(flag) else value
    return out


@dataclass
class LocalCluster:
    options: ClusterOptions = field(default_factory=ClusterOptions)
    workdir: Path | None = None
    kubeconfig: Path | None = None
    timings: dict[str, float] = field(default_factory=dict)
    kwokctl_path: Path | None = None  # the kwokctl that started it, and must stop it
    # Kept (--keep-cluster, `cluster up`): its later down() must leave it running.
    handed_over: bool = field(default=False, init=False, repr=False)

    @classmethod
    def kept(cls, name: str, workdir: Path, kwokctl_path: Path | None = None) -> LocalCluster:
        """A cluster an earlier process started and kept (`./kit cluster up`), to inspect or stop."""
        return cls(ClusterOptions(name=name, workdir=workdir), workdir=workdir, kwokctl_path=kwokctl_path)

    @property
    def name(self) -> str:
        return self.options.name or f"prio-{os.getpid()}"

    @property
    def _kwokctl(self) -> Kwokctl:
        assert self.workdir is not None
        return Kwokctl(self.workdir, self.name, self.kwokctl_path)

    @property
    def cluster_dir(self) -> Path:
        return self._kwokctl.cluster_dir

    @property
    def logs_dir(self) -> Path:
        return self._kwokctl.logs_dir

    def log_path(self, component: str) -> Path:
        return self._kwokctl.log_path(component)

    def logs_dir_of(self, workdir: Path) -> Path:
        return Kwokctl(workdir, self.name).logs_dir

    def restart_scheduler(self, graceful: bool) -> None:
        """The scheduler under test killed (or stopped) and started again, ready once more (alive and
        listening on its port) before this returns: a fault step (``restartScheduler``)."""
        self._kwokctl.restart("kube-scheduler", graceful)
        self._wait_scheduler("after its restart")

    def fresh_scheduler(self) -> None:
        """One scheduler as ``up`` started it, for the next scenario on this cluster: a fault step
        may have restarted, paused or replaced it, set a standby beside it or routed it through a
        proxy. Ending those and starting the scheduler anew costs a second; a new cluster, about
        five seconds of both cores."""
        with Standby(self._kwokctl, self.kubeconfig) as standby:
            standby.disarm()
        Link(self._kwokctl).disarm()
        self._kwokctl.restore_files()
        if self._kwokctl.alive("kube-scheduler"):
            self.restart_scheduler(graceful=False)
            return
        self._kwokctl.restart_exited("kube-scheduler")  # killed by a failover
        self._wait_scheduler("after a failover")

    def _wait_scheduler(self, when: str) -> None:
        port = self.ports["kubeSchedulerPort"]
        end = time.monotonic() + self.options.ready_timeout
        while not (self._kwokctl.alive("kube-scheduler") and probes.listening(port)):
            if time.monotonic() > end:
                raise KitError(f"kube-scheduler did not become ready {when}",
                               logs=self._kwokctl.logs_of("kube-scheduler"))
            lifecycle.pause(0.2)

    def restart_apiserver(self, graceful: bool) -> None:
        """The API server killed (or stopped) and started again on the same etcd, and every component
        ready once more (the API answers; the others still run, started again if they exited) before
        this returns: a fault step (``restartApiserver``)."""
        self._kwokctl.restart("kube-apiserver", graceful)
        kwokctl.wait_ready(self._kwokctl, self.kubeconfig, self.ports, self.options.ready_timeout)

    def arm_failover(self) -> None:
        """Leader election on and a second scheduler waiting for the lease (harness.clusters.standby)."""
        with Standby(self._kwokctl, self.kubeconfig) as standby:
            standby.arm()

    def fail_over(self) -> str:
        """The leading scheduler killed; returns once the standby leads: a fault step (``failover``)."""
        with Standby(self._kwokctl, self.kubeconfig) as standby:
            return standby.fail_over()

    def take_lease(self) -> tuple[str, bool]:
        """The leader's Lease taken by another holder; returns once the standby leads, and whether
        the old leader stayed (``failover: takeLease``)."""
        with Standby(self._kwokctl, self.kubeconfig) as standby:
            return standby.take_lease()

    def arm_link(self) -> None:
        """The scheduler's connection to the API server routed through a proxy the kit can cut
        (harness.clusters.link), and the scheduler started again with it."""
        Link(self._kwokctl).arm()
        self.restart_scheduler(graceful=True)

    def disconnect_scheduler(self, seconds: float) -> str:
        """The scheduler's connection to the API server cut for ``seconds``: a fault step."""
        return Link(self._kwokctl).cut(seconds)

    def pause_scheduler(self, seconds: float) -> None:
        """The scheduler under test frozen for ``seconds`` (SIGSTOP, then SIGCONT): a fault step."""
        # After a failover the scheduler that runs is the standby.
        self._kwokctl.hold(Standby(self._kwokctl, self.kubeconfig).leader(), seconds)

    def process_alive(self, component: str) -> bool:
        return self._kwokctl.alive(component)

    def pids(self) -> dict[str, int]:
        return self._kwokctl.pids() if self.workdir is not None else {}

    def _keep_logs(self) -> tuple[Path, Path]:
        """Copy the component logs (and kwokctl's output) out of the work directory."""
        assert self.workdir is not None
        dest = kept_logs_dir(self.name, self.options.failure_logs)
        dest.mkdir(parents=True, exist_ok=True)
        if self.logs_dir.exists():
            shutil.copytree(self.logs_dir, dest, dirs_exist_ok=True)
        for extra in (kwokctl.CREATE_LOG, kwokctl.CONFIG):
            if (self.workdir / extra).exists():
                shutil.copy(self.workdir / extra, dest / extra)
        return self.workdir, dest

    # -- lifecycle --------------------------------------------------------------

    def up(self) -> Path:
        started = time.monotonic()
        bins = binaries(self.options)
        self.timings["build"] = time.monotonic() - started
        lacking = self.unavailable(bins)
        if lacking:
            raise gates.Unavailable(lacking)
        self.kwokctl_path = bins["kwokctl"]
        lifecycle.reap_orphans()
        self.workdir = Path(self.options.workdir or tempfile.mkdtemp(prefix=lifecycle.WORKDIR_PREFIX))
        self.workdir.mkdir(parents=True, exist_ok=True)
        lifecycle.write_owner(self.workdir)
        self._watchdog = lifecycle.start_watchdog(self.workdir)
        t0 = time.monotonic()
        try:
            with slots.start_slot():
                self.timings["slot"] = time.monotonic() - t0
                for attempt in range(1, self.options.attempts + 1):
                    try:
                        self._create(bins)
                        kwokctl.wait_ready(self._kwokctl, self.kubeconfig, self.ports, self.options.ready_timeout,
                                           self.options.disable)
                        break
                    except KitError:
                        taken = self._kwokctl.port_taken()
                        if not taken or attempt == self.options.attempts:
                            raise
                        # Someone outside the kit took a port between choice and bind: new ports, once more.
                        self._kwokctl.stop()
        except KitError as e:
            # Nothing may stay behind, but the logs the message points to must:
            # they move to the cache's log folder first.
            workdir, kept = self._keep_logs()
            self.down()
            raise e.relocated(self.logs_dir_of(workdir), kept) from None
        except BaseException:
            # Ctrl-C or SIGTERM half-way: nothing may stay behind.
            self.down()
            raise
        self.timings["up"] = time.monotonic() - t0 - self.timings.get("slot", 0.0)  # the start itself
        self.flush = self._printed_flush()
        return self.kubeconfig  # type: ignore[return-value]

    def unavailable(self, bins: dict[str, Path] | None = None) -> str:
        """Why this cluster cannot start with the gates it is asked for ("" when it can): a gate its
        release's components do not offer. Known from the binaries alone, before anything starts."""
        bins = bins if bins is not None else binaries(self.options)
        lacking = gates.missing(self.options.gates.at(self.options.release),
                                {c: bins[c] for c in gates.COMPONENTS if c in bins})
        if not lacking:
            return ""
        return (f"Kubernetes {self.options.release} has no feature gate {', '.join(lacking)} "
                "(the component's --help lists the gates it offers)")

    def _printed_flush(self) -> timedelta:
        """The flush interval to judge by: the one the kit gave, as the scheduler printed it at start;
        the release's own default where the kit gave none (whatever the build's own default is)."""
        if "kube-scheduler" in self.options.disable:
            return flush.RELEASE_DEFAULT
        for _ in range(50):  # its FLAG lines come first, but the log is written as it starts
            seen = flush.printed(self.log_path("kube-scheduler"))
            if seen is not None:
                if self.options.flush_interval is None:
                    # Asked for the release's own: the release's default is the specification, and a
                    # build whose own default differs is judged against it (and fails where it shows).
                    self.flush_printed = seen
                    return flush.RELEASE_DEFAULT
                if seen != self.options.flush_interval:
                    raise KitError(f"{self.options.label or self.options.build}: the kube-scheduler runs with a "
                                   f"flush interval of {seen} although the kit gave "
                                   f"--{flush.FLAG}={self.options.flush_interval}")
                return seen
            time.sleep(0.1)
        return flush.RELEASE_DEFAULT

    def _extra_args(self) -> dict[str, dict[str, str]]:
        out = {name: dict(args) for name, args in self.options.extra_args.items()}
        if "kube-scheduler" not in self.options.disable:
            out.setdefault("kube-scheduler", {}).update(
                flush.scheduler_flags(self.options.flush_interval, self.options.scheduler_verbosity))
        address = advertise_address()
        if address:
            out.setdefault("kube-apiserver", {}).setdefault("advertise-address", address)
        return out

    def _create(self, bins: dict[str, Path]) -> None:
        assert self.workdir is not None
        sched_cfg = self.options.scheduler_config
        if sched_cfg is None:
            sched_cfg = self.workdir / "scheduler-config.yaml"
            sched_cfg.write_text(yaml.safe_dump(scheduler_config(self.options.build)))
        ports.release(str(self.workdir))
        self.ports = ports.reserve(str(self.workdir))
        conf = kwokctl_config(bins, Path(sched_cfg).resolve(), self.workdir / "cache", self.ports,
                              None, self.options.release, self.options.disable,
                              with_pki(with_gates(self._extra_args(), self.options.gates.at(self.options.release)), self.cluster_dir / "pki"),
                              envs=CONTROL_PLANE_ENV)
        self._kwokctl.create(conf, timeout=self.options.ready_timeout + 30)
        self.kubeconfig = self._kwokctl.kubeconfig(self.workdir / "kubeconfig.yaml")

    def _end_watchdog(self) -> None:
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.terminate()
            watchdog.wait()
            self._watchdog = None

    def down(self) -> None:
        """Stop every process and remove every file the cluster made. Safe to call twice; after
        keep() it leaves the cluster running."""
        if self.workdir is None or self.handed_over:
            return
        t0 = time.monotonic()
        self._kwokctl.stop()
        ports.release(str(self.workdir))
        Standby(self._kwokctl, self.kubeconfig).release()
        Link(self._kwokctl).release()
        if self.options.workdir is None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        else:
            for f in (lifecycle.OWNER_FILE, lifecycle.KEEP_FILE):
                (self.workdir / f).unlink(missing_ok=True)
        self._end_watchdog()  # its cluster is gone; nothing left to watch
        self.workdir = None
        self.timings["down"] = time.monotonic() - t0

    def keep(self) -> str:
        """Leave the cluster running after this process ends (--keep-cluster, `cluster up`)."""
        assert self.workdir is not None
        lifecycle.keep(self.workdir)
        self._end_watchdog()
        self.handed_over = True
        return (f"kept the {self.options.label or self.options.build} cluster: KUBECONFIG={self.kubeconfig}; "
                f"stop it with: KWOK_WORKDIR={self.workdir} kwokctl --name {self.name} delete cluster")

    def __enter__(self) -> LocalCluster:
        self.up()
        return self

    def __exit__(self, *exc) -> None:
        self.down()
