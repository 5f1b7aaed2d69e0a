"""A second kube-scheduler for a local cluster, for leader failover: both run with leader election,
the one kwokctl started leads, the other waits for the lease. ``Standby.arm`` sets it up (once, on
a cluster of one scenario's own); ``Standby.fail_over`` kills the leader and returns once the other
leads.

kwokctl runs one scheduler with the kit's configuration (``leaderElect: false``); a failover needs
leader election on both, so the cluster's copy of that configuration is rewritten and the first
scheduler restarted with it before the second starts with the same command line on a port of its
own. Lease timings are the kit's, shorter than the release's defaults (15 s, 10 s, 2 s): the rule
under test is what the new leader does, not how long the old lease lasts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.clusters.kwokctl import Kwokctl
from harness.errors import KitError
from harness.host import lifecycle, ports, probes

PRIMARY, STANDBY = "kube-scheduler", "kube-scheduler-standby"
# kube-scheduler's validation wants leaseDuration > renewDeadline > retryPeriod * 1.2.
LEASE = {"leaseDuration": "4s", "renewDeadline": "3s", "retryPeriod": "1s"}
LEASE_SECONDS = 4.0
LEASE_NAMESPACE, LEASE_NAME = "kube-system", "kube-scheduler"  # the scheduler's default lock
BOUND = 60.0  # seconds for a process to lead, or to start waiting


@dataclass
class Standby:
    kwokctl: Kwokctl
    kubeconfig: Path

    def holder(self) -> str:
        """Who holds the scheduler's lease (client-go's identity: host name and a per-process uuid), or ""."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        from harness.kube import api_client

        api = api_client(self.kubeconfig)
        try:
            lease = client.CoordinationV1Api(api).read_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE)
            return lease.spec.holder_identity or ""
        except ApiException as e:
            if e.status == 404:
                return ""
            raise
        finally:
            api.close()

    @property
    def port_key(self) -> str:
        return f"{self.kwokctl.workdir}-standby"

    def arm(self) -> None:
        """Leader election on, the first scheduler leading, the second waiting."""
        pid = self.kwokctl.pids().get(PRIMARY)
        if pid is None or not self.kwokctl.alive(PRIMARY):
            raise KitError("kube-scheduler is not running, so no standby can be set beside it")
        argv = _cmdline(pid)
        config = next((Path(a.split("=", 1)[1]) for a in argv if a.startswith("--config=")), None)
        if config is None or not config.is_file():
            raise KitError("kube-scheduler runs without a --config file, so leader election cannot be turned on")
        conf = yaml.safe_load(config.read_text())
        conf["leaderElection"] = {"leaderElect": True, **LEASE}
        config.write_text(yaml.safe_dump(conf))
        self.kwokctl.restart(PRIMARY, graceful=True)
        self._wait(lambda: bool(self.holder()), "kube-scheduler to take the lease")
        leader = self.holder()
        port = ports.reserve(self.port_key, names=("kubeSchedulerPort",))["kubeSchedulerPort"]
        argv = [a if not a.startswith("--secure-port=") else f"--secure-port={port}" for a in _cmdline(self._pid())]
        log = self.kwokctl.log_path(STANDBY)
        with open(log, "ab") as out:
            child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        # Beside kwokctl's own pid files: the cluster's stop ends it with the rest.
        self.kwokctl.pid_file(STANDBY).write_text(str(child.pid))
        # Listening means it has started; the lease stays the first one's, who renews it.
        self._wait(lambda: lifecycle.alive(child.pid) and probes.listening(port), "the standby kube-scheduler to listen",
                   logs=[log])
        if self.holder() != leader:
            raise KitError("the standby kube-scheduler took the lease from the running one", logs=[log])

    def fail_over(self) -> str:
        """SIGKILL the leader (it does not come back) and return once the standby leads: who led, who
        leads, and how long the lease took to change hands."""
        pid, leader = self._pid(), self.holder()
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        self._wait(lambda: not lifecycle.alive(pid), "the leading kube-scheduler to exit", reap=pid)
        self.kwokctl.pid_file(PRIMARY).unlink(missing_ok=True)  # kwokctl must not start it again
        self._wait(lambda: self.holder() not in ("", leader), "the standby kube-scheduler to take the lease",
                   logs=[self.kwokctl.log_path(STANDBY)])
        return f"lease holder {leader} killed; {self.holder()} leads {time.monotonic() - killed:.1f} s later"

    def leader(self) -> str:
        """The component that schedules now: the first scheduler, or after a failover the standby."""
        return STANDBY if not self.kwokctl.alive(PRIMARY) and self.kwokctl.alive(STANDBY) else PRIMARY

    def release(self) -> None:
        ports.release(self.port_key)

    def _pid(self) -> int:
        pid = self.kwokctl.pids().get(PRIMARY)
        if pid is None or not self.kwokctl.alive(PRIMARY):
            raise KitError("the leading kube-scheduler is not running")
        return pid

    def _wait(self, done, what: str, logs: list[Path] | None = None, reap: int | None = None) -> None:
        end = time.monotonic() + BOUND
        while not done():
            if reap is not None:
                try:
                    os.waitpid(reap, os.WNOHANG)
                except ChildProcessError:
                    pass
            if time.monotonic() > end:
                raise KitError(f"timed out after {BOUND:.0f} s waiting for {what}", logs=logs or [self.kwokctl.logs_dir])
            lifecycle.pause(0.1)


def _cmdline(pid: int) -> list[str]:
    return [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]


__all__ = ["LEASE_SECONDS", "Standby"]
