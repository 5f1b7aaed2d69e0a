"""Driving kwokctl for one local cluster: the directory it keeps for the cluster (pid files, logs,
certificates), its commands (create, get kubeconfig, delete), and the bounded wait for what it
started. ``LocalCluster`` decides when; this module knows how.
"""

from __future__ import annotations

import os
import signal
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.clusters.config import STAGES
from harness.errors import KitError
from harness.host import lifecycle, ports, probes

# What kwokctl leaves in the work directory besides the cluster's own folder, kept with the logs.
CONFIG = "kwokctl.yaml"
CREATE_LOG = "kwokctl-create.log"
# `kwokctl start cluster` starts what is not running, then waits up to 2 minutes for the API to
# serve /version before it returns (v0.8.0 binary runtime, waitServed), warning if it does not:
# the kit must not give up first. Under a load of 9 to 15 on 2 cores, an API server restarted by a
# fault step outlasted the 90 s the kit gave (explorer draw x61-0408, seed 61, plugins).
START_TIMEOUT = 150.0
# The suffix of a cluster file's first version, kept when a fault's set-up rewrites the file.
ORIGINAL = ".kit-original"


@dataclass(frozen=True)
class Kwokctl:
    """One cluster as kwokctl keeps it, under ``workdir/clusters/<name>``."""

    workdir: Path
    name: str
    binary: Path | None = None  # the kwokctl that started it, and must stop it

    @property
    def cluster_dir(self) -> Path:
        return self.workdir / "clusters" / self.name

    @property
    def logs_dir(self) -> Path:
        return self.cluster_dir / "logs"

    def log_path(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"

    def pid_file(self, component: str) -> Path:
        return self.cluster_dir / "pids" / f"{component}.pid"

    def pids(self) -> dict[str, int]:
        out = {}
        for f in sorted(self.cluster_dir.glob("pids/*.pid")):
            try:
                out[f.stem] = int(f.read_text().strip())
            except ValueError:
                continue
        return out

    def argv(self, component: str) -> list[str]:
        """The running component's command line, or [] if it does not run."""
        pid = self.pids().get(component)
        if pid is None or not self.alive(component):
            return []
        try:
            return [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
        except OSError:
            return []

    def config_file(self, component: str) -> Path | None:
        """The file the running component's --config names (the cluster's own copy), if any."""
        path = next((Path(a.split("=", 1)[1]) for a in self.argv(component) if a.startswith("--config=")), None)
        return path if path is not None and path.is_file() else None

    def alive(self, component: str) -> bool:
        pid_file = self.pid_file(component)
        if not pid_file.exists():
            return False
        try:
            return lifecycle.alive(int(pid_file.read_text().strip()))
        except ValueError:
            return False

    def port_taken(self) -> str | None:
        """The component log that says a port was taken, if one does."""
        for log in sorted(self.logs_dir.glob("*.log")):
            if ports.BIND_FAILURE in log.read_text(errors="replace"):
                return log.stem
        return None

    # -- commands -----------------------------------------------------------------

    def run(self, *args: str, timeout: float, log: Path | None = None) -> subprocess.CompletedProcess:
        cmd = [str(self.binary), "--name", self.name, *args]
        # Keep kwokctl's state (certificates, pid files, logs) in our own directory.
        env = {**os.environ, "KWOK_WORKDIR": str(self.workdir)}
        try:
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise KitError(f"`{' '.join(cmd[1:])}` did not finish within {timeout:.0f} s", logs=[self.logs_dir]) from e
        if log is not None:
            log.write_text(out.stdout + out.stderr)
        return out

    def create(self, conf: dict, timeout: float) -> None:
        """Start the cluster ``conf`` describes, with the kit's kwok stages."""
        config_path = self.workdir / CONFIG
        with open(config_path, "w") as f:
            yaml.safe_dump(conf, f)
            f.write("---\n")
            f.write(STAGES.read_text())
        out = self.run("create", "cluster", "--config", str(config_path), "--wait", "60s",
                       timeout=timeout, log=self.workdir / CREATE_LOG)
        if out.returncode != 0:
            raise KitError(f"kwokctl could not start the cluster (exit {out.returncode}); the folder of component logs "
                           "follows", logs=[self.logs_dir], detail=probes.tail(out.stdout + out.stderr))

    def kubeconfig(self, dest: Path) -> Path:
        got = self.run("get", "kubeconfig", timeout=30)
        if got.returncode != 0 or not got.stdout.strip():
            raise KitError(f"kwokctl get kubeconfig failed: {probes.tail(got.stderr)}")
        dest.write_text(got.stdout)
        return dest

    def previous_log_path(self, component: str) -> Path:
        """Where the log of a component's first run is kept once it was started again."""
        return self.logs_dir / f"{component}.previous.log"

    def logs_of(self, component: str) -> list[Path]:
        """The component's logs that exist, the first run's first."""
        return [p for p in (self.previous_log_path(component), self.log_path(component)) if p.exists()]

    def restart_exited(self, component: str) -> None:
        """Start again a component that exited, keeping its first log as ``<component>.previous.log``
        (kwokctl truncates the log when it starts a component). ``kwokctl start cluster`` starts only
        the components that are not running."""
        log = self.log_path(component)
        if log.exists():
            log.replace(self.previous_log_path(component))
        # As in ``restart``: an exited run not yet reaped answers signal 0, and kwokctl would take
        # it for running and start nothing.
        self.pid_file(component).unlink(missing_ok=True)
        out = self.run("start", "cluster", timeout=START_TIMEOUT)
        if out.returncode != 0:
            raise KitError(f"{component} exited while the cluster started, and kwokctl could not start it again "
                           f"(exit {out.returncode})", logs=self.logs_of(component),
                           detail=probes.tail(out.stdout + out.stderr))

    def restart(self, component: str, graceful: bool, timeout: float = 30.0) -> None:
        """End a running component (SIGTERM, or SIGKILL as a crash does) and start it again, as
        the kubelet restarts a static pod. Its log so far is kept as ``<component>.run<N>.log``
        (kwokctl truncates the log when it starts a component)."""
        pid = self.pids().get(component)
        if pid is None or not self.alive(component):
            raise KitError(f"{component} is not running, so it cannot be restarted", logs=self.logs_of(component))
        _ended(pid, signal.SIGTERM if graceful else signal.SIGKILL, timeout)
        # kwokctl takes a pid that answers signal 0 for a running component, and a zombie does
        # (where nothing reaps orphans): without its pid file it starts the component anew.
        self.pid_file(component).unlink(missing_ok=True)
        log = self.log_path(component)
        if log.exists():
            runs = len(list(self.logs_dir.glob(f"{component}.run*.log")))
            log.replace(self.logs_dir / f"{component}.run{runs + 1}.log")
        out = self.run("start", "cluster", timeout=START_TIMEOUT)
        if out.returncode != 0:
            raise KitError(f"kwokctl could not start {component} again (exit {out.returncode})",
                           logs=self.logs_of(component), detail=probes.tail(out.stdout + out.stderr))

    def hold(self, component: str, seconds: float) -> None:
        """Freeze a running component (SIGSTOP) for ``seconds`` and let it go on (SIGCONT): what
        happens meanwhile waits in its connections and informers. It goes on whatever ends the
        wait (a stop request included); a teardown's SIGKILL ends a frozen one anyway."""
        pid = self.pids().get(component)
        if pid is None or not self.alive(component):
            raise KitError(f"{component} is not running, so it cannot be paused", logs=self.logs_of(component))
        os.kill(pid, signal.SIGSTOP)
        try:
            lifecycle.pause(seconds)
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def rewrite(self, path: Path, text: str) -> None:
        """Write a file of the cluster's anew (a component's configuration), keeping its first
        version for ``restore_files``."""
        kept = path.with_name(path.name + ORIGINAL)
        if not kept.exists():
            shutil.copy2(path, kept)
        path.write_text(text)

    def restore_files(self) -> None:
        """Every file ``rewrite`` changed, back as kwokctl wrote it."""
        for kept in self.cluster_dir.rglob("*" + ORIGINAL):
            kept.replace(kept.with_name(kept.name[: -len(ORIGINAL)]))

    def end(self, component: str, timeout: float = 30.0) -> None:
        """Kill a process the kit started beside kwokctl's (it keeps its pid file here too), and
        forget it; nothing when it does not run."""
        pid = self.pids().get(component)
        if pid is not None and self.alive(component):
            _ended(pid, signal.SIGKILL, timeout)
        self.pid_file(component).unlink(missing_ok=True)

    def stop(self) -> None:
        """Stop the cluster's processes and forget its state, keeping the work directory."""
        pids = self.pids()
        if self.binary and self.cluster_dir.exists():
            try:
                self.run("delete", "cluster", timeout=30)
            except KitError:
                pass  # the sweeps below still end the processes
        lifecycle.stop_processes(list(pids.values()))
        # Whatever no pid file lists (a component kwokctl was still starting) names the directory.
        lifecycle.stop_processes(lifecycle.processes_naming(self.workdir))
        shutil.rmtree(self.workdir / "clusters", ignore_errors=True)


def _ended(pid: int, sig: int, timeout: float) -> None:
    """Send ``sig`` and return once the process has exited, reaping it where it is the kit's own
    child (it would stay a zombie); one that outlasts ``timeout`` is ended the hard way."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    end = time.monotonic() + timeout
    while lifecycle.alive(pid):
        if time.monotonic() > end:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)


def api_healthy(api) -> bool:
    """The API server's /healthz passes: every post-start hook has finished."""
    try:
        return api.call_api(*api.param_serialize("GET", "/healthz", auth_settings=["BearerToken"]),
                            _request_timeout=5).status == 200
    except Exception:  # unhealthy, or not answering: either way not yet
        return False


def health_failures(api) -> str:
    """The checks of the API server's /healthz that fail now (its verbose answer's ``[-]`` lines),
    "none" when it passes, or why it could not be asked: what a late component was waiting on."""
    try:
        got = api.call_api(*api.param_serialize("GET", "/healthz", query_params=[("verbose", "true")],
                                                auth_settings=["BearerToken"]), _request_timeout=5)
        got.read()
        text = got.data.decode(errors="replace") if isinstance(got.data, bytes) else str(got.data)
    except Exception as e:  # not answering is an answer too
        return f"not answering ({type(e).__name__})"
    failing = [line.strip() for line in text.splitlines() if line.startswith("[-]")]
    return ", ".join(failing) if failing else ("none" if got.status == 200 else f"HTTP {got.status}")


def wait_ready(kwokctl: Kwokctl, kubeconfig: Path, listening: dict[str, int], timeout: float,
               disable: tuple[str, ...] = (), restarts: int = 3) -> None:
    """Bounded wait for what the scenarios rely on, naming the component that is late.
    ``listening`` is the cluster's ports (``ports.reserve``); ``disable`` the components it runs without.

    A component that exits while the cluster starts is started again, ``restarts`` times, as the
    kubelet restarts a static pod: kube-controller-manager gives the API server's /healthz 10 s
    (``WaitForAPIServer`` in its start-up) and exits if a post-start hook such as RBAC's bootstrap
    roles is still running, which happens on a loaded machine (three campaign pods beside kind
    on 2 cores). It is started again only once the API server's /healthz passes, within the same
    deadline: under a load of 15 on 2 cores, RBAC's hook outlasted three restarts made at once.
    One whose port was taken is not: ``LocalCluster.up`` picks new ports instead."""
    from kubernetes import client, config as kconfig

    api = kconfig.new_client_from_config(str(kubeconfig))
    core = client.CoreV1Api(api)
    deadline = time.monotonic() + timeout
    checks = [
        ("kube-apiserver", lambda: core.list_namespace(limit=1) is not None),
        # The service-account token controller runs in kube-controller-manager;
        # pods cannot be created in a namespace before its default account exists.
        ("kube-controller-manager", lambda: core.read_namespaced_service_account("default", "default") is not None),
        # Listening on its own port: a component that lost its port to another dies a moment
        # after it started, so being alive alone says little.
        ("kube-scheduler", lambda: kwokctl.alive("kube-scheduler") and probes.listening(listening["kubeSchedulerPort"])),
        ("kwok-controller", lambda: kwokctl.alive("kwok-controller") and probes.listening(listening["kwokControllerPort"])),
    ]
    checks = [(c, check) for c, check in checks if c not in disable]
    left = dict.fromkeys((c for c, _ in checks), restarts)  # restarts left, by component
    dead: dict[str, int] = {}  # the pid a restarted component last exited with
    try:
        for component, check in checks:
            while True:
                try:
                    if check():
                        break
                except Exception:  # not ready yet; the deadline bounds this
                    pass
                pid = kwokctl.pids().get(component)
                # Until the restart's pid is written, the pid file still names the run that exited.
                exited = pid is not None and pid != dead.get(component) and not kwokctl.alive(component)
                if exited and left[component] > 0 and kwokctl.port_taken() is None:
                    # (Not for the API server itself: it is what /healthz would wait on.)
                    if (component != "kube-apiserver" and "kube-apiserver" not in disable and not api_healthy(api)
                            and time.monotonic() < deadline):
                        # Started again now, it would give up on the same slow post-start hook:
                        # wait until the API server is healthy, so each restart counts.
                        time.sleep(0.5)
                        continue
                    left[component] -= 1
                    dead[component] = pid
                    kwokctl.restart_exited(component)
                    continue
                if exited or time.monotonic() > deadline:
                    why = "it exited" if exited else f"within {timeout:.0f} s"
                    if component in dead:
                        why += f", also after it was started again {restarts - left[component]} time(s)"
                    state = "running" if kwokctl.alive(component) else "not running"
                    detail = (f"{component}: {state}; the API server's failing health checks: "
                              f"{health_failures(api) if 'kube-apiserver' not in disable else 'not asked'}")
                    raise KitError(f"{component} did not become ready ({why})",
                                   logs=kwokctl.logs_of(component) or [kwokctl.logs_dir], detail=detail)
                time.sleep(0.2)
    finally:
        api.close()
