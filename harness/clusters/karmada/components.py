"""Karmada's own processes: each started from the kit's build with a log of its own, waited for
against a deadline, stopped together at the end; karmada-scheduler restarted with the feature
gates a scenario asks for; and the slices of their logs that belong to one scenario.

Every process runs in its own session (a terminal's Ctrl-C reaches the kit, which then stops
them in order) and names the host's work directory on its command line, so the host's
teardown, its watchdog and the orphan reaper end them with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.clusters.karmada.options import KarmadaOptions, gate_flag
from harness.host import lifecycle, probes
from harness.errors import KitError

COMPONENTS = ("karmada-aggregated-apiserver", "karmada-webhook", "karmada-controller-manager", "karmada-scheduler")
PORT_NAMES = ("aggregatedApiserver", "webhook", "webhookHealth", "controllerManagerHealth", "schedulerHealth")
SCHEDULER = "karmada-scheduler"


@dataclass
class Components:
    bins: dict[str, Path]  # the kit's Karmada build
    logs: Path  # one <component>.log each
    ports: dict[str, int]  # PORT_NAMES, reserved for this plane
    options: KarmadaOptions
    _procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def log_path(self, component: str) -> Path:
        return self.logs / f"{component}.log"

    def start(self, component: str, args: list[str]) -> None:
        binary = self.bins[component]
        if component == SCHEDULER and self.options.scheduler_binary is not None:
            binary = self.options.scheduler_binary
        log = open(self.log_path(component), "ab")
        log.write(f"$ {binary} {' '.join(args)}\n".encode())
        log.flush()
        # Its own session: a terminal's Ctrl-C reaches the kit, which then stops it in order.
        self._procs[component] = subprocess.Popen([str(binary), *args], stdout=log, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def wait(self, component: str, check, timeout: float | None = None) -> None:
        """Until ``check()`` holds; a component that exits meanwhile, or the deadline, is an error
        naming its log. ``component`` may name something no process of ours serves (a member)."""
        deadline = time.monotonic() + (timeout or self.options.ready_timeout)
        proc = self._procs.get(component)
        last = ""
        while True:
            try:
                if check():
                    return
            except Exception as e:  # not ready yet; the deadline bounds this
                last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            if proc is not None and proc.poll() is not None:
                raise KitError(f"{component} exited (code {proc.returncode}) while starting",
                               logs=[self.log_path(component)], detail=probes.log_tail(self.log_path(component)))
            if time.monotonic() > deadline:
                raise KitError(f"{component} did not become ready within {timeout or self.options.ready_timeout:.0f} s"
                               f"{f' ({last})' if last else ''}", logs=[self.log_path(component)])
            lifecycle.pause(0.3)

    def stop_all(self) -> None:
        procs = list(self._procs.values())
        self._procs.clear()
        lifecycle.stop_processes([p.pid for p in procs])
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)

    # -- the scheduler, restarted per scenario ------------------------------------

    def restart_scheduler(self, kubeconfig: Path, gates: dict[str, bool]) -> None:
        self.stop_scheduler()
        v = self.options.scheduler_verbosity
        self.start(SCHEDULER, [
            f"--kubeconfig={kubeconfig}", "--leader-elect=false", gate_flag(gates),
            "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{self.ports['schedulerHealth']}",
            *([f"--v={v}"] if v is not None else [])])
        self.wait(SCHEDULER, lambda: probes.healthy(self.ports["schedulerHealth"]))

    def stop_scheduler(self) -> None:
        proc = self._procs.pop(SCHEDULER, None)
        if proc is not None:
            lifecycle.stop_processes([proc.pid])
            proc.wait()

    def scheduler_running(self) -> bool:
        proc = self._procs.get(SCHEDULER)
        return proc is not None and proc.poll() is None

    # -- one scenario's lines -------------------------------------------------------

    def log_marks(self) -> dict[str, int]:
        """Where each component's log ends now: a scenario's own lines are what comes after."""
        return {c: self.log_path(c).stat().st_size if self.log_path(c).exists() else 0 for c in COMPONENTS}

    def logs_since(self, marks: dict[str, int]) -> dict[str, bytes]:
        out = {}
        for c, at in marks.items():
            try:
                with open(self.log_path(c), "rb") as f:
                    f.seek(at)
                    out[c] = f.read()
            except OSError:
                continue
        return out
