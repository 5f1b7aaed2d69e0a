"""A real local control plane, run by kwokctl's binary runtime from binaries the kit built.

etcd, kube-apiserver, kube-controller-manager, the kube-scheduler under test
and the kwok controller run as local processes in a private work directory.
Everything the cluster leaves on disk lives there, so teardown is: ask
kwokctl to stop it, kill anything it missed (by the pid files it keeps), and
remove the directory.
"""

from __future__ import annotations

from harness import DATA

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.host import lifecycle, ports, probes
from harness.build import toolchain
from harness.errors import KitError
from harness.targets import BUILDS, DEFAULT_BUILD
from harness import targets

STAGES = DATA / "kwok-stages.yaml"
# Still imported from here by conformance/conftest.py; harness.targets holds them.
split_target, slug = targets.split_target, targets.slug


def scheduler_config(build: str) -> dict:
    """The KubeSchedulerConfiguration for a scheduler build.

    The scheduler-plugins build swaps the PostFilter plugin; everything else
    is the default profile, so the two builds differ only where the specs do.
    """
    profile: dict = {"schedulerName": "default-scheduler"}
    if build == "plugins":
        profile["plugins"] = {
            "postFilter": {
                "enabled": [{"name": "PreemptionToleration"}],
                "disabled": [{"name": "DefaultPreemption"}],
            }
        }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [profile],
    }


def kwokctl_config(bins: dict[str, Path], scheduler_config_path: Path, cache_dir: Path,
                   port_options: dict[str, int] | None = None, scheduler_verbosity: int | None = None,
                   release: str | None = None, disable: tuple[str, ...] = (),
                   extra_args: dict[str, dict[str, str]] | None = None) -> dict:
    """kwokctl's configuration: binary runtime, every component a local binary, nothing downloaded,
    listening on the ports the kit chose (see ``ports``)."""
    extra = {k: dict(v) for k, v in (extra_args or {}).items()}
    if scheduler_verbosity is not None:
        extra.setdefault("kube-scheduler", {})["v"] = str(scheduler_verbosity)
    return {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            "runtime": "binary",
            "kubeVersion": toolchain.versions(release)["kubernetes"],
            "etcdBinary": str(bins["etcd"]),
            "kubeApiserverBinary": str(bins["kube-apiserver"]),
            "kubeControllerManagerBinary": str(bins["kube-controller-manager"]),
            "kubeSchedulerBinary": str(bins["kube-scheduler"]),
            "kubectlBinary": str(bins["kubectl"]),
            "kwokControllerBinary": str(bins["kwok"]),
            "kubeSchedulerConfig": str(scheduler_config_path),
            "kubeAuthorization": True,
            "securePort": True,
            "quietPull": True,
            "cacheDir": str(cache_dir),
            **(port_options or {}),
            **({"disable": list(disable)} if disable else {}),
        },
        **({"componentsPatches": [{"name": name, "extraArgs": [{"key": k, "value": v} for k, v in args.items()]}
                                  for name, args in extra.items()]}
           if extra else {}),
    }


@dataclass
class ClusterOptions:
    build: str = DEFAULT_BUILD  # which scheduler build (harness.targets.BUILDS)
    release: str = ""  # the Kubernetes release of the whole control plane; default: toolchain.default_release()
    scheduler_binary: Path | None = None  # a user's own kube-scheduler
    scheduler_config: Path | None = None  # a user's own KubeSchedulerConfiguration
    name: str = ""
    workdir: Path | None = None  # default: a fresh temporary directory
    ready_timeout: float = 90.0
    attempts: int = 3  # starts on fresh ports after a port turned out to be taken
    scheduler_verbosity: int | None = None  # the scheduler's -v, for investigations
    # For a control plane that is not a pod cluster (Karmada's host): components kwokctl leaves
    # out, and flags added to the ones it runs.
    disable: tuple[str, ...] = ()
    extra_args: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.build not in BUILDS:
            raise KitError(f"unknown scheduler build {self.build!r}: choose one of {', '.join(BUILDS)}")
        self.release = self.release or toolchain.default_release()
        if self.release not in toolchain.releases():
            raise KitError(f"Kubernetes release {self.release} is not one the kit can build: choose from "
                           f"{', '.join(toolchain.releases())}")
        if self.build == "plugins" and self.scheduler_binary is None and not toolchain.has_plugins(self.release):
            raise KitError(f"no scheduler-plugins release builds on Kubernetes {self.release}: "
                           f"the plugins build runs on {', '.join(r for r in toolchain.releases() if toolchain.has_plugins(r))}")
        for what, p in (("scheduler binary", self.scheduler_binary), ("scheduler config", self.scheduler_config)):
            if p is not None and not Path(p).is_file():
                raise KitError(f"{what} not found: {p}")


@dataclass
class LocalCluster:
    options: ClusterOptions = field(default_factory=ClusterOptions)
    workdir: Path | None = None
    kubeconfig: Path | None = None
    timings: dict[str, float] = field(default_factory=dict)
    kwokctl_path: Path | None = None  # the kwokctl that started it, and must stop it

    @classmethod
    def kept(cls, name: str, workdir: Path, kwokctl_path: Path | None = None) -> LocalCluster:
        """A cluster an earlier process started and kept (`./kit cluster up`), to inspect or stop."""
        return cls(ClusterOptions(name=name, workdir=workdir), workdir=workdir, kwokctl_path=kwokctl_path)

    @property
    def name(self) -> str:
        return self.options.name or f"prio-{os.getpid()}"

    @property
    def cluster_dir(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "clusters" / self.name

    @property
    def logs_dir(self) -> Path:
        return self.cluster_dir / "logs"

    def log_path(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"

    def logs_dir_of(self, workdir: Path) -> Path:
        return workdir / "clusters" / self.name / "logs"

    def _keep_logs(self) -> tuple[Path, Path]:
        """Copy the component logs (and kwokctl's output) out of the work directory."""
        assert self.workdir is not None
        dest = toolchain.cache_root() / "logs" / f"{self.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        dest.mkdir(parents=True, exist_ok=True)
        if self.logs_dir.exists():
            shutil.copytree(self.logs_dir, dest, dirs_exist_ok=True)
        for extra in ("kwokctl-create.log", "kwokctl.yaml"):
            if (self.workdir / extra).exists():
                shutil.copy(self.workdir / extra, dest / extra)
        return self.workdir, dest

    # -- binaries ---------------------------------------------------------------

    def _binaries(self) -> dict[str, Path]:
        modules = ["etcd", "kwok", "kubernetes"]
        if self.options.build == "plugins" and self.options.scheduler_binary is None:
            modules.append("scheduler-plugins")
        bins = toolchain.ensure_all(tuple(modules), self.options.release)
        if self.options.scheduler_binary is not None:
            bins["kube-scheduler"] = Path(self.options.scheduler_binary).resolve()
        else:
            bins["kube-scheduler"] = bins[
                "scheduler-plugins/kube-scheduler" if self.options.build == "plugins" else "kubernetes/kube-scheduler"
            ]
        return bins

    def _env(self) -> dict[str, str]:
        assert self.workdir is not None
        # Keep kwokctl's state (certificates, pid files, logs) in our own directory.
        return {**os.environ, "KWOK_WORKDIR": str(self.workdir)}

    def _kwokctl(self, *args: str, timeout: float, log: Path | None = None) -> subprocess.CompletedProcess:
        cmd = [str(self.kwokctl_path), "--name", self.name, *args]
        try:
            out = subprocess.run(cmd, env=self._env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise KitError(f"`{' '.join(cmd[1:])}` did not finish within {timeout:.0f} s; logs: {self.logs_dir}") from e
        if log is not None:
            log.write_text(out.stdout + out.stderr)
        return out

    # -- lifecycle --------------------------------------------------------------

    def up(self) -> Path:
        started = time.monotonic()
        bins = self._binaries()
        self.timings["build"] = time.monotonic() - started
        self.kwokctl_path = bins["kwokctl"]
        lifecycle.reap_orphans()
        self.workdir = Path(self.options.workdir or tempfile.mkdtemp(prefix=lifecycle.WORKDIR_PREFIX))
        self.workdir.mkdir(parents=True, exist_ok=True)
        lifecycle.write_owner(self.workdir)
        self._watchdog = lifecycle.start_watchdog(self.workdir)
        t0 = time.monotonic()
        try:
            for attempt in range(1, self.options.attempts + 1):
                try:
                    self._create(bins)
                    self._wait_ready()
                    break
                except KitError:
                    taken = self._port_taken()
                    if not taken or attempt == self.options.attempts:
                        raise
                    # Someone outside the kit took a port between choice and bind: new ports, once more.
                    self._stop_components()
        except KitError as e:
            # Nothing may stay behind, but the logs the message points to must:
            # they move to the cache's log folder first.
            kept = self._keep_logs()
            self.down()
            raise KitError(str(e).replace(str(self.logs_dir_of(kept[0])), str(kept[1]))) from None
        except BaseException:
            # Ctrl-C or SIGTERM half-way: nothing may stay behind.
            self.down()
            raise
        self.timings["up"] = time.monotonic() - t0
        return self.kubeconfig  # type: ignore[return-value]

    def _port_taken(self) -> str | None:
        """The component log that says a port was taken, if one does."""
        for log in sorted(self.logs_dir.glob("*.log")) if self.workdir else []:
            if ports.BIND_FAILURE in log.read_text(errors="replace"):
                return log.stem
        return None

    def _create(self, bins: dict[str, Path]) -> None:
        assert self.workdir is not None
        sched_cfg = self.options.scheduler_config
        if sched_cfg is None:
            sched_cfg = self.workdir / "scheduler-config.yaml"
            sched_cfg.write_text(yaml.safe_dump(scheduler_config(self.options.build)))
        ports.release(str(self.workdir))
        self.ports = ports.reserve(str(self.workdir))
        conf = kwokctl_config(bins, Path(sched_cfg).resolve(), self.workdir / "cache", self.ports,
                              self.options.scheduler_verbosity, self.options.release, self.options.disable,
                              {name: {k: v.format(pki=self.cluster_dir / "pki") for k, v in args.items()}
                               for name, args in self.options.extra_args.items()})
        config_path = self.workdir / "kwokctl.yaml"
        with open(config_path, "w") as f:
            yaml.safe_dump(conf, f)
            f.write("---\n")
            f.write(STAGES.read_text())
        log = self.workdir / "kwokctl-create.log"
        out = self._kwokctl("create", "cluster", "--config", str(config_path), "--wait", "60s",
                            timeout=self.options.ready_timeout + 30, log=log)
        if out.returncode != 0:
            raise KitError(
                f"kwokctl could not start the cluster (exit {out.returncode}). "
                f"component logs and kwokctl's output: {self.logs_dir}\n{probes.tail(out.stdout + out.stderr)}"
            )
        kc = self.workdir / "kubeconfig.yaml"
        got = self._kwokctl("get", "kubeconfig", timeout=30)
        if got.returncode != 0 or not got.stdout.strip():
            raise KitError(f"kwokctl get kubeconfig failed: {probes.tail(got.stderr)}")
        kc.write_text(got.stdout)
        self.kubeconfig = kc

    def _wait_ready(self) -> None:
        """Bounded wait for what the scenarios rely on, naming the component that is late."""
        from kubernetes import client, config as kconfig

        api = kconfig.new_client_from_config(str(self.kubeconfig))
        core = client.CoreV1Api(api)
        deadline = time.monotonic() + self.options.ready_timeout
        checks = [
            ("kube-apiserver", lambda: core.list_namespace(limit=1) is not None),
            # The service-account token controller runs in kube-controller-manager;
            # pods cannot be created in a namespace before its default account exists.
            ("kube-controller-manager", lambda: core.read_namespaced_service_account("default", "default") is not None),
            # Listening on its own port: a component that lost its port to another dies a moment
            # after it started, so being alive alone says little.
            ("kube-scheduler", lambda: self.process_alive("kube-scheduler") and probes.listening(self.ports["kubeSchedulerPort"])),
            ("kwok-controller", lambda: self.process_alive("kwok-controller") and probes.listening(self.ports["kwokControllerPort"])),
        ]
        checks = [(c, check) for c, check in checks if c not in self.options.disable]
        try:
            for component, check in checks:
                while True:
                    try:
                        if check():
                            break
                    except Exception:  # not ready yet; the deadline bounds this
                        pass
                    exited = (self.cluster_dir / "pids" / f"{component}.pid").exists() and not self.process_alive(component)
                    if exited or time.monotonic() > deadline:
                        why = "it exited" if exited else f"within {self.options.ready_timeout:.0f} s"
                        raise KitError(f"{component} did not become ready ({why}); its log: {self.log_path(component)}")
                    time.sleep(0.2)
        finally:
            api.close()

    def _pid_files(self) -> list[Path]:
        if self.workdir is None:
            return []
        return sorted(self.cluster_dir.glob("pids/*.pid"))

    def process_alive(self, component: str) -> bool:
        pid_file = self.cluster_dir / "pids" / f"{component}.pid"
        if not pid_file.exists():
            return False
        try:
            return lifecycle.alive(int(pid_file.read_text().strip()))
        except ValueError:
            return False

    def pids(self) -> dict[str, int]:
        out = {}
        for f in self._pid_files():
            try:
                out[f.stem] = int(f.read_text().strip())
            except ValueError:
                continue
        return out

    def _stop_components(self) -> None:
        """Stop the cluster's processes and forget its state, keeping the work directory."""
        assert self.workdir is not None
        pids = self.pids()
        if self.kwokctl_path and self.cluster_dir.exists():
            try:
                self._kwokctl("delete", "cluster", timeout=30)
            except KitError:
                pass  # the sweeps below still end the processes
        lifecycle.stop_processes(list(pids.values()))
        # Whatever no pid file lists (a component kwokctl was still starting) names the directory.
        lifecycle.stop_processes(lifecycle.processes_naming(self.workdir))
        shutil.rmtree(self.workdir / "clusters", ignore_errors=True)

    def down(self) -> None:
        """Stop every process and remove every file the cluster made. Safe to call twice."""
        if self.workdir is None:
            return
        t0 = time.monotonic()
        self._stop_components()
        ports.release(str(self.workdir))
        if self.options.workdir is None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        else:
            for f in (lifecycle.OWNER_FILE, lifecycle.KEEP_FILE):
                (self.workdir / f).unlink(missing_ok=True)
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.terminate()  # its cluster is gone; nothing left to watch
            watchdog.wait()
            self._watchdog = None
        self.workdir = None
        self.timings["down"] = time.monotonic() - t0

    def keep(self) -> None:
        """Leave the cluster running after this process ends (--keep-cluster, `cluster up`)."""
        assert self.workdir is not None
        lifecycle.keep(self.workdir)
        if getattr(self, "_watchdog", None) is not None:
            self._watchdog.terminate()
            self._watchdog.wait()
            self._watchdog = None

    def __enter__(self) -> LocalCluster:
        self.up()
        return self

    def __exit__(self, *exc) -> None:
        self.down()

