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
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.host import lifecycle, ports, probes
from harness.build import toolchain
from harness.clusters.local import ClusterOptions, LocalCluster
from harness.errors import KitError

KWOK_ADMIN = "kwok-admin"  # the common name of kwokctl's one client certificate
KARMADA_NAMESPACES = ("karmada-system", "karmada-cluster")
COMPONENTS = ("karmada-aggregated-apiserver", "karmada-webhook", "karmada-controller-manager", "karmada-scheduler")
PORT_NAMES = ("aggregatedApiserver", "webhook", "webhookHealth", "controllerManagerHealth", "schedulerHealth")

# The gate under test, on in the controller manager (bindings get a priority) and, unless a
# scenario turns it off, in the scheduler (the priority queue). The other two keep the model
# simple and make "room for exactly one" mean one: without overcommit protection two bindings
# popped back to back both see the room a status refresh ago; without the customized resource
# models the estimate is cluster-wide sums only.
CONTROLLER_MANAGER_GATES = {"PriorityBasedScheduling": True, "CustomizedClusterResourceModeling": False}
SCHEDULER_GATES = {"PriorityBasedScheduling": True, "SchedulingOvercommitProtection": True,
                   "CustomizedClusterResourceModeling": False}


def gate_flag(gates: dict[str, bool]) -> str:
    return "--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))


def parse_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as karmada-scheduler's --feature-gates takes it; which gates exist is its to say."""
    gates = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not name or value.lower() not in ("true", "false"):
            raise KitError(f"{item!r}: expected GATE=true or GATE=false")
        gates[name] = value.lower() == "true"
    return gates


def module_dir() -> Path:
    """Where the Go module cache holds the pinned Karmada module: its CRDs and webhook
    configuration are read from there, never copied into the kit."""
    go = toolchain.go_binary()
    out = subprocess.run([go, "list", "-m", "-f", "{{.Dir}}", "github.com/karmada-io/karmada"],
                         cwd=toolchain.GOMOD_DIR / "karmada", capture_output=True, text=True,
                         env={**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=readonly"})
    path = Path(out.stdout.strip())
    if out.returncode != 0 or not (path / "charts").is_dir():
        raise KitError(f"the Karmada module is not in the Go module cache ({out.stderr.strip() or path}); "
                       f"building it (./kit build --karmada) downloads it")
    return path


@dataclass
class KarmadaOptions:
    members: tuple[str, ...] = ("m1", "m2", "m3")
    release: str = ""  # of the host and member control planes; default: the kit's default release
    ready_timeout: float = 120.0
    name: str = ""
    scheduler_binary: Path | None = None  # a user's karmada-scheduler instead of the kit's build
    scheduler_gates: dict[str, bool] = field(default_factory=dict)  # over the kit's and every scenario's
    scheduler_verbosity: int | None = None  # karmada-scheduler's -v (4 shows each attempt)


@dataclass
class KarmadaPlane:
    options: KarmadaOptions = field(default_factory=KarmadaOptions)
    host: LocalCluster | None = None
    members: dict[str, LocalCluster] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    scheduler_gates: dict[str, bool] = field(default_factory=lambda: dict(SCHEDULER_GATES))
    _procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.options.name or f"karmada-{os.getpid()}"

    @property
    def kubeconfig(self) -> Path:
        assert self.host is not None and self.host.kubeconfig is not None
        return self.host.kubeconfig

    @property
    def dir(self) -> Path:
        assert self.host is not None and self.host.workdir is not None
        return self.host.workdir / "karmada"

    def _keep_logs(self) -> Path:
        dest = toolchain.cache_root() / "logs" / f"{self.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        if self.host is not None and self.host.workdir is not None and (self.dir / "logs").exists():
            shutil.copytree(self.dir / "logs", dest, dirs_exist_ok=True)
        return dest

    def log_path(self, component: str) -> Path:
        return self.dir / "logs" / f"{component}.log"

    # -- lifecycle --------------------------------------------------------------

    def up(self) -> Path:
        started = time.monotonic()
        self.bins = toolchain.ensure_module(toolchain.wrapper("karmada"))
        self.kubectl = toolchain.ensure_all(("kubernetes",), self.options.release or None)["kubectl"]
        self.source = module_dir()
        self.timings["build"] = time.monotonic() - started
        try:
            self._host_up()
            self._karmada_up()
            self._members_up()
        except KitError as e:
            # Nothing may stay behind, but the logs the message points to must.
            logs = str(self.dir / "logs") if self.host is not None and self.host.workdir is not None else None
            kept = self._keep_logs()
            self.down()
            raise KitError(str(e).replace(logs, str(kept)) if logs else str(e)) from None
        except BaseException:
            self.down()
            raise
        self.timings["up"] = time.monotonic() - started - self.timings["build"]
        return self.kubeconfig

    def _host_up(self) -> None:
        pki = "{pki}"
        self.host = LocalCluster(ClusterOptions(
            build="upstream", release=self.options.release, name=self.name,
            ready_timeout=self.options.ready_timeout,
            disable=("kube-scheduler", "kwok-controller"),
            extra_args={
                # The front proxy: the aggregated API server trusts requests kube-apiserver
                # forwards only if kube-apiserver says which CA signs its proxy certificate.
                "kube-apiserver": {
                    "requestheader-client-ca-file": f"{pki}/ca.crt",
                    # One certificate serves every kwokctl component; only its name may proxy.
                    "requestheader-allowed-names": KWOK_ADMIN,
                    "requestheader-username-headers": "X-Remote-User",
                    "requestheader-group-headers": "X-Remote-Group",
                    "requestheader-extra-headers-prefix": "X-Remote-Extra-",
                },
                "kube-controller-manager": {
                    "controllers": "namespace,garbagecollector,serviceaccount-token,serviceaccount",
                },
            },
        ))
        self.host.up()

    def _kubectl(self, *args: str, stdin: str | None = None, kubeconfig: Path | None = None) -> str:
        cmd = [str(self.kubectl), "--kubeconfig", str(kubeconfig or self.kubeconfig), *args]
        out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise KitError(f"`kubectl {' '.join(args)}` failed on the Karmada API server: {out.stderr.strip()[-800:]}")
        return out.stdout

    def _karmada_up(self) -> None:
        assert self.host is not None and self.host.workdir is not None
        (self.dir / "logs").mkdir(parents=True, exist_ok=True)
        self.ports = ports.reserve(str(self.dir), names=PORT_NAMES)
        pki = self.host.cluster_dir / "pki"
        ca = (pki / "ca.crt").read_bytes()
        ca_b64 = base64.b64encode(ca).decode()
        etcd = f"http://127.0.0.1:{self.host.ports['etcdPort']}"
        kc = str(self.kubeconfig)

        t0 = time.monotonic()
        ns = "".join(f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {n}\n---\n" for n in KARMADA_NAMESPACES)
        self._kubectl("apply", "-f", "-", stdin=ns)
        # Only the bases: the patches add a conversion webhook for versions no scenario uses.
        self._kubectl("create", "-R", "-f", str(self.source / "charts/karmada/_crds/bases"))
        self.timings["crds"] = time.monotonic() - t0

        agg = self.ports["aggregatedApiserver"]
        self._start("karmada-aggregated-apiserver", [
            f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
            f"--etcd-servers={etcd}", "--etcd-prefix=/karmada-aggregated",
            "--bind-address=127.0.0.1", f"--secure-port={agg}",
            f"--tls-cert-file={pki / 'admin.crt'}", f"--tls-private-key-file={pki / 'admin.key'}",
            "--audit-log-path=-", "--audit-log-maxage=0", "--audit-log-maxbackup=0",
        ])
        # kube-apiserver finds an aggregated server through a Service; an ExternalName one
        # names the loopback address the process listens on.
        self._kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": "karmada-aggregated-apiserver", "namespace": "karmada-system"},
             "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
             "metadata": {"name": "v1alpha1.cluster.karmada.io"},
             # kube-apiserver checks the serving certificate against the Service's DNS name, which
             # kwokctl's one certificate does not carry; the hop is loopback only.
             "spec": {"group": "cluster.karmada.io", "version": "v1alpha1", "insecureSkipTLSVerify": True,
                      "groupPriorityMinimum": 2000, "versionPriority": 10,
                      "service": {"name": "karmada-aggregated-apiserver", "namespace": "karmada-system",
                                  "port": agg}}},
        ]))
        self._wait("karmada-aggregated-apiserver", lambda: self._kubectl("get", "clusters.cluster.karmada.io") is not None)

        self._start("karmada-webhook", [
            f"--kubeconfig={kc}", "--bind-address=127.0.0.1", f"--secure-port={self.ports['webhook']}",
            f"--cert-dir={pki}", "--tls-cert-file-name=admin.crt", "--tls-private-key-file-name=admin.key",
            "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{self.ports['webhookHealth']}",
        ])
        self._wait("karmada-webhook", lambda: probes.listening(self.ports["webhook"]))
        hooks = (self.source / "artifacts/deploy/webhook-configuration.yaml").read_text()
        hooks = hooks.replace("{{caBundle}}", ca_b64).replace(
            "https://karmada-webhook.karmada-system.svc:443/", f"https://127.0.0.1:{self.ports['webhook']}/")
        self._kubectl("apply", "-f", "-", stdin=hooks)

        self._start("karmada-controller-manager", [
            f"--kubeconfig={kc}", "--leader-elect=false", gate_flag(CONTROLLER_MANAGER_GATES),
            # Scenarios change member capacity and read it back: 2 s, not the default 10 s.
            "--cluster-status-update-frequency=2s",
            "--metrics-bind-address=0",
            f"--health-probe-bind-address=127.0.0.1:{self.ports['controllerManagerHealth']}",
        ])
        self._wait("karmada-controller-manager", lambda: probes.healthy(self.ports["controllerManagerHealth"]))
        self.start_scheduler({})
        self.timings["karmada"] = time.monotonic() - t0

    def _scheduler_args(self) -> list[str]:
        v = self.options.scheduler_verbosity
        return [f"--kubeconfig={self.kubeconfig}", "--leader-elect=false", gate_flag(self.scheduler_gates),
                "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{self.ports['schedulerHealth']}",
                *([f"--v={v}"] if v is not None else [])]

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

    def start_scheduler(self, gates: dict[str, bool] | None = None) -> None:
        """(Re)start karmada-scheduler; with ``gates``, with those feature gates over the kit's
        (and the run's own over both)."""
        if gates is not None:
            self.scheduler_gates = self.gates_for(gates)
        self.stop_scheduler()
        self._start("karmada-scheduler", self._scheduler_args())
        self._wait("karmada-scheduler", lambda: probes.healthy(self.ports["schedulerHealth"]))

    def gates_for(self, scenario_gates: dict[str, bool]) -> dict[str, bool]:
        return {**SCHEDULER_GATES, **scenario_gates, **self.options.scheduler_gates}

    def stop_scheduler(self) -> None:
        proc = self._procs.pop("karmada-scheduler", None)
        if proc is not None:
            lifecycle.stop_processes([proc.pid])
            proc.wait()

    def scheduler_running(self) -> bool:
        proc = self._procs.get("karmada-scheduler")
        return proc is not None and proc.poll() is None

    def _start(self, component: str, args: list[str]) -> None:
        binary = self.bins[component]
        if component == "karmada-scheduler" and self.options.scheduler_binary is not None:
            binary = self.options.scheduler_binary
        log = open(self.log_path(component), "ab")
        log.write(f"$ {binary} {' '.join(args)}\n".encode())
        log.flush()
        # Its own session: a terminal's Ctrl-C reaches the kit, which then stops it in order.
        self._procs[component] = subprocess.Popen([str(binary), *args], stdout=log, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def _wait(self, component: str, check, timeout: float | None = None) -> None:
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
                raise KitError(f"{component} exited (code {proc.returncode}) while starting; its log: "
                               f"{self.log_path(component)}\n{probes.log_tail(self.log_path(component))}")
            if time.monotonic() > deadline:
                raise KitError(f"{component} did not become ready within {timeout or self.options.ready_timeout:.0f} s"
                               f"{f' ({last})' if last else ''}; its log: {self.log_path(component)}")
            lifecycle.pause(0.3)

    # -- members ------------------------------------------------------------------

    def _members_up(self) -> None:
        t0 = time.monotonic()
        for m in self.options.members:
            member = LocalCluster(ClusterOptions(build="upstream", release=self.options.release,
                                                 name=f"{self.name}-{m}", ready_timeout=self.options.ready_timeout))
            self.members[m] = member
            member.up()
            self._join(m, member)
        for m in self.options.members:
            self._wait(f"member cluster {m} (its Cluster object in Karmada)", lambda m=m: self._member_ready(m))
        self.timings["members"] = time.monotonic() - t0

    def _join(self, name: str, member: LocalCluster) -> None:
        """Push mode, as karmadactl join does it: a token of a cluster-admin service account in the
        member, stored in Karmada with the member's CA, and a Cluster pointing at its API server."""
        kc = member.kubeconfig
        assert kc is not None
        sa = yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "karmada", "namespace": "kube-system"}},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "karmada"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
             "subjects": [{"kind": "ServiceAccount", "name": "karmada", "namespace": "kube-system"}]},
        ])
        self._kubectl("apply", "-f", "-", stdin=sa, kubeconfig=kc)
        token = self._kubectl("create", "token", "karmada", "-n", "kube-system", "--duration=24h",
                              kubeconfig=kc).strip()
        conf = yaml.safe_load(kc.read_text())
        cluster = conf["clusters"][0]["cluster"]
        server = cluster["server"]
        ca = (base64.b64decode(cluster["certificate-authority-data"]) if "certificate-authority-data" in cluster
              else Path(cluster["certificate-authority"]).read_bytes())
        self._kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "karmada-cluster"},
             "stringData": {"token": token, "caBundle": ca.decode()}},
            {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
             "spec": {"syncMode": "Push", "apiEndpoint": server,
                      "secretRef": {"namespace": "karmada-cluster", "name": name}}},
        ]))

    def _member_ready(self, name: str) -> bool:
        c = yaml.safe_load(self._kubectl("get", "clusters.cluster.karmada.io", name, "-o", "yaml"))
        ready = any(x["type"] == "Ready" and x["status"] == "True" for x in c.get("status", {}).get("conditions", []))
        return ready and not c["spec"].get("taints") and "resourceSummary" in c.get("status", {})

    def down(self) -> None:
        """Stop every process and remove every file. Safe to call twice."""
        t0 = time.monotonic()
        for m in list(self.members.values()):
            m.down()
        self.members.clear()
        procs = list(self._procs.values())
        self._procs.clear()
        lifecycle.stop_processes([p.pid for p in procs])
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
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

