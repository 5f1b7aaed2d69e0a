"""Karmada's member clusters: more of the kit's local clusters (kwok nodes, a real
kube-scheduler), joined in Push mode with a service-account token, and ready once Karmada
reports them Ready, untainted and with a resource summary to schedule by.
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from harness.clusters.karmada.kubectl import Kubectl
from harness.clusters.karmada.options import KarmadaOptions
from harness.clusters.local import ClusterOptions, LocalCluster


def member_options(plane: str, member: str, options: KarmadaOptions) -> ClusterOptions:
    return ClusterOptions(build="upstream", release=options.release, name=f"{plane}-{member}", label=f"member {member}",
                          ready_timeout=options.ready_timeout, failure_logs=options.failure_logs)


def join(kubectl: Kubectl, name: str, member: LocalCluster) -> None:
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
    kubectl("apply", "-f", "-", stdin=sa, kubeconfig=kc)
    token = kubectl("create", "token", "karmada", "-n", "kube-system", "--duration=24h", kubeconfig=kc).strip()
    conf = yaml.safe_load(kc.read_text())
    cluster = conf["clusters"][0]["cluster"]
    server = cluster["server"]
    ca = (base64.b64decode(cluster["certificate-authority-data"]) if "certificate-authority-data" in cluster
          else Path(cluster["certificate-authority"]).read_bytes())
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "karmada-cluster"},
         "stringData": {"token": token, "caBundle": ca.decode()}},
        {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
         "spec": {"syncMode": "Push", "apiEndpoint": server,
                  "secretRef": {"namespace": "karmada-cluster", "name": name}}},
    ]))


def ready(kubectl: Kubectl, name: str) -> bool:
    c = yaml.safe_load(kubectl("get", "clusters.cluster.karmada.io", name, "-o", "yaml"))
    ok = any(x["type"] == "Ready" and x["status"] == "True" for x in c.get("status", {}).get("conditions", []))
    return ok and not c["spec"].get("taints") and "resourceSummary" in c.get("status", {})
