"""Karmada installed on its host: the host cluster's options (the front proxy an aggregated API
server needs), Karmada's namespaces and CRDs, and the components that serve its APIs — the
aggregated API server, the webhook and the controller manager — started in the order each needs
the one before. The CRDs and the webhook configuration are read from the pinned Karmada module
in the Go module cache, never copied into the kit.
"""

from __future__ import annotations

import base64
import os
import subprocess
import time
from pathlib import Path

import yaml

from harness.build import pins, toolchain
from harness.clusters.karmada.components import Components
from harness.clusters.karmada.kubectl import Kubectl
from harness.clusters.karmada.options import CONTROLLER_MANAGER_GATES, KarmadaOptions, gate_flag
from harness.clusters.local import ClusterOptions, LocalCluster
from harness.errors import KitError
from harness.host import probes

KWOK_ADMIN = "kwok-admin"  # the common name of kwokctl's one client certificate
KARMADA_NAMESPACES = ("karmada-system", "karmada-cluster")


def module_dir() -> Path:
    """Where the Go module cache holds the pinned Karmada module: its CRDs and webhook
    configuration are read from there, never copied into the kit."""
    go = toolchain.go_binary()
    out = subprocess.run([go, "list", "-m", "-f", "{{.Dir}}", "github.com/karmada-io/karmada"],
                         cwd=pins.GOMOD_DIR / "karmada", capture_output=True, text=True,
                         env={**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=readonly"})
    path = Path(out.stdout.strip())
    if out.returncode != 0 or not (path / "charts").is_dir():
        raise KitError(f"the Karmada module is not in the Go module cache ({out.stderr.strip() or path}); "
                       f"building it (./kit build --karmada) downloads it")
    return path


def host_options(name: str, options: KarmadaOptions) -> ClusterOptions:
    """The host: a local cluster without scheduler or kwok, whose API server is Karmada's."""
    pki = "{pki}"
    return ClusterOptions(
        build="upstream", release=options.release, name=name, label="Karmada host",
        ready_timeout=options.ready_timeout, failure_logs=options.failure_logs,
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
    )


def aggregated_api(port: int) -> str:
    """kube-apiserver finds an aggregated server through a Service; an ExternalName one names the
    loopback address the process listens on."""
    return yaml.safe_dump_all([
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
                              "port": port}}},
    ])


def install(host: LocalCluster, kubectl: Kubectl, components: Components, source: Path,
            timings: dict[str, float]) -> None:
    """Everything but the scheduler, on a host that is up; ``timings["crds"]`` says how long the CRDs took."""
    assert host.workdir is not None
    pki = host.cluster_dir / "pki"
    ca = (pki / "ca.crt").read_bytes()
    ca_b64 = base64.b64encode(ca).decode()
    etcd = f"http://127.0.0.1:{host.ports['etcdPort']}"
    kc = str(kubectl.kubeconfig)
    ports = components.ports

    t0 = time.monotonic()
    ns = "".join(f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {n}\n---\n" for n in KARMADA_NAMESPACES)
    kubectl("apply", "-f", "-", stdin=ns)
    # Only the bases: the patches add a conversion webhook for versions no scenario uses.
    kubectl("create", "-R", "-f", str(source / "charts/karmada/_crds/bases"))
    timings["crds"] = time.monotonic() - t0

    agg = ports["aggregatedApiserver"]
    components.start("karmada-aggregated-apiserver", [
        f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
        f"--etcd-servers={etcd}", "--etcd-prefix=/karmada-aggregated",
        "--bind-address=127.0.0.1", f"--secure-port={agg}",
        f"--tls-cert-file={pki / 'admin.crt'}", f"--tls-private-key-file={pki / 'admin.key'}",
        "--audit-log-path=-", "--audit-log-maxage=0", "--audit-log-maxbackup=0",
    ])
    kubectl("apply", "-f", "-", stdin=aggregated_api(agg))
    components.wait("karmada-aggregated-apiserver", lambda: kubectl("get", "clusters.cluster.karmada.io") is not None)

    components.start("karmada-webhook", [
        f"--kubeconfig={kc}", "--bind-address=127.0.0.1", f"--secure-port={ports['webhook']}",
        f"--cert-dir={pki}", "--tls-cert-file-name=admin.crt", "--tls-private-key-file-name=admin.key",
        "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{ports['webhookHealth']}",
    ])
    components.wait("karmada-webhook", lambda: probes.listening(ports["webhook"]))
    hooks = (source / "artifacts/deploy/webhook-configuration.yaml").read_text()
    hooks = hooks.replace("{{caBundle}}", ca_b64).replace(
        "https://karmada-webhook.karmada-system.svc:443/", f"https://127.0.0.1:{ports['webhook']}/")
    kubectl("apply", "-f", "-", stdin=hooks)

    components.start("karmada-controller-manager", [
        f"--kubeconfig={kc}", "--leader-elect=false", gate_flag(CONTROLLER_MANAGER_GATES),
        # Scenarios change member capacity and read it back: 2 s, not the default 10 s.
        "--cluster-status-update-frequency=2s",
        "--metrics-bind-address=0",
        f"--health-probe-bind-address=127.0.0.1:{ports['controllerManagerHealth']}",
    ])
    components.wait("karmada-controller-manager", lambda: probes.healthy(ports["controllerManagerHealth"]))
