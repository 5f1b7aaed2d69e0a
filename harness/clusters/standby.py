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
from dataclasses import dataclass, field
from datetime import datetime, timezone
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
TAKER = "prioritykit"  # who takes the lease from a live leader (failover: takeLease)
# A leader whose lease was taken fails its next renewal (within retryPeriod) and gives up after
# renewDeadline: 4 s; the bound leaves room for a loaded machine.
STOP_BOUND = 20.0


@dataclass
class Standby:
    kwokctl: Kwokctl
    kubeconfig: Path
    # One connection for the Lease reads and writes of one operation (closed at its end, ``with``):
    # a client per poll cost a TLS handshake every 0.1 s on both sides while a lease changed hands.
    _api: object = field(default=None, init=False, repr=False, compare=False)

    def _leases(self):
        """The Lease API over this operation's one connection."""
        from kubernetes import client

        from harness.kube import api_client

        if self._api is None:
            self._api = api_client(self.kubeconfig)
        return client.CoordinationV1Api(self._api)

    def holder(self) -> str:
        """Who holds the scheduler's lease (client-go's identity: host name and a per-process uuid), or ""."""
        from kubernetes.client.exceptions import ApiException

        try:
            lease = self._leases().read_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE)
            return lease.spec.holder_identity or ""
        except ApiException as e:
            if e.status == 404:
                return ""
            raise

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None

    def __enter__(self) -> "Standby":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    @property
    def port_key(self) -> str:
        return f"{self.kwokctl.workdir}-standby"

    def arm(self) -> None:
        """Leader election on, the first scheduler leading, the second waiting."""
        if not self.kwokctl.alive(PRIMARY):
            raise KitError("kube-scheduler is not running, so no standby can be set beside it")
        config = self.kwokctl.config_file(PRIMARY)
        if config is None:
            raise KitError("kube-scheduler runs without a --config file, so leader election cannot be turned on")
        conf = yaml.safe_load(config.read_text())
        conf["leaderElection"] = {"leaderElect": True, **LEASE}
        self.kwokctl.rewrite(config, yaml.safe_dump(conf))
        self.kwokctl.restart(PRIMARY, graceful=True)
        self._wait(lambda: bool(self.holder()), "kube-scheduler to take the lease")
        leader = self.holder()
        port = ports.reserve(self.port_key, names=("kubeSchedulerPort",))["kubeSchedulerPort"]
        argv = [a if not a.startswith("--secure-port=") else f"--secure-port={port}" for a in self.kwokctl.argv(PRIMARY)]
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

    def take_lease(self) -> tuple[str, bool]:
        """The Lease rewritten to name another holder (the kit, for LEASE_SECONDS) while the leader
        runs, as an administrator's or a stuck client's write would: the leader fails its next
        renewal and must stop within its renew deadline (kube-scheduler exits on losing its lease,
        ``cmd/kube-scheduler/app/server.go`` OnStoppedLeading); the standby takes the lease once
        the kit's runs out. What happened, for the step's record, and whether the old leader stayed
        (then the kit ends it, and the run fails on it)."""
        from kubernetes.client.exceptions import ApiException

        pid, leader = self._pid(), self.holder()
        leases = self._leases()
        for attempt in range(5):
            lease = leases.read_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE)
            now = datetime.now(timezone.utc)
            lease.spec.holder_identity, lease.spec.acquire_time, lease.spec.renew_time = TAKER, now, now
            lease.spec.lease_duration_seconds = int(LEASE_SECONDS)
            lease.spec.lease_transitions = (lease.spec.lease_transitions or 0) + 1
            try:
                # With the version read: refused (409) if the leader renewed in between; read again then.
                leases.replace_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE, lease)
                break
            except ApiException as e:
                if e.status != 409 or attempt == 4:
                    raise KitError(f"could not take the scheduler's lease: {e.status} {e.reason}") from None
        taken = time.monotonic()
        stayed = not self._until(lambda: not lifecycle.alive(pid), STOP_BOUND, reap=pid)
        if stayed:
            os.kill(pid, signal.SIGKILL)
            self._wait(lambda: not lifecycle.alive(pid), "the kube-scheduler that lost its lease to exit", reap=pid)
        stopped = time.monotonic() - taken
        self.kwokctl.pid_file(PRIMARY).unlink(missing_ok=True)  # kwokctl must not start it again
        self._wait(lambda: self.holder() not in ("", leader, TAKER), "the standby kube-scheduler to take the lease",
                   logs=[self.kwokctl.log_path(STANDBY)])
        how = (f"still ran {STOP_BOUND:.0f} s later, and the kit killed it" if stayed
               else f"exited {stopped:.1f} s later")
        return (f"lease of {leader} taken by {TAKER}; the old leader {how}; {self.holder()} leads "
                f"{time.monotonic() - taken:.1f} s after the take"), stayed

    def leader(self) -> str:
        """The component that schedules now: the first scheduler, or after a failover the standby."""
        return STANDBY if not self.kwokctl.alive(PRIMARY) and self.kwokctl.alive(STANDBY) else PRIMARY

    def disarm(self) -> None:
        """The standby ended and the lease gone, so that the next arm starts from no holder (a
        cluster handed on to another scenario; the caller restores the configuration and starts
        the first scheduler anew)."""
        from kubernetes.client.exceptions import ApiException

        self.kwokctl.end(STANDBY)
        self.release()
        try:
            self._leases().delete_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE)
        except ApiException as e:
            if e.status != 404:
                raise KitError(f"could not delete the scheduler's lease: {e.status} {e.reason}") from None

    def release(self) -> None:
        ports.release(self.port_key)

    def _pid(self) -> int:
        pid = self.kwokctl.pids().get(PRIMARY)
        if pid is None or not self.kwokctl.alive(PRIMARY):
            raise KitError("the leading kube-scheduler is not running")
        return pid

    def _wait(self, done, what: str, logs: list[Path] | None = None, reap: int | None = None) -> None:
        if not self._until(done, BOUND, reap):
            raise KitError(f"timed out after {BOUND:.0f} s waiting for {what}", logs=logs or [self.kwokctl.logs_dir])

    @staticmethod
    def _until(done, bound: float, reap: int | None = None) -> bool:
        """Whether ``done`` came true within ``bound`` seconds, reaping ``reap`` meanwhile (a child
        of this process that exits stays a zombie, alive to signal 0, until reaped)."""
        end = time.monotonic() + bound
        while not done():
            if reap is not None:
                try:
                    os.waitpid(reap, os.WNOHANG)
                except ChildProcessError:
                    pass
            if time.monotonic() > end:
                return False
            lifecycle.pause(0.1)
        return True


__all__ = ["LEASE_SECONDS", "Standby"]
