"""The runner image into a kind cluster's nodes, and out again afterwards.

No registry is reachable, so the pods' image (``imagePullPolicy: Never``) must already be in
each node's containerd. On a kind cluster of this Docker host, ``kind load docker-image`` (the
kit's own kind build) puts it there. Only the nodes a shard may run on get it, and only those
that lacked it lose it again at the end: a campaign leaves the nodes as it found them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.errors import KitError
from harness.kube import KWOK_ANNOTATION

KIND_CLUSTER_LABEL = "io.x-k8s.kind.cluster"  # kind's label on each node's container


def schedulable(nodes) -> list[str]:
    """The nodes a shard's pod may land on: no kwok node (no kubelet runs there), none that
    repels every pod (a control plane's NoSchedule taint, a cordon)."""
    out = []
    for n in nodes:
        if (n.metadata.annotations or {}).get(KWOK_ANNOTATION) or (n.metadata.labels or {}).get("type") == "kwok":
            continue
        if n.spec.unschedulable or any(t.effect in ("NoSchedule", "NoExecute") for t in n.spec.taints or []):
            continue
        out.append(n.metadata.name)
    return sorted(out)


def _docker(args: list[str], what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise KitError(f"{what} needs Docker: no `docker` command on PATH") from None


def kind_cluster_of(nodes: list[str]) -> str:
    """The kind cluster these nodes belong to, from their containers on this Docker host."""
    names = set()
    for node in nodes:
        out = _docker(["inspect", "-f", f'{{{{index .Config.Labels "{KIND_CLUSTER_LABEL}"}}}}', node],
                      "loading the runner image into the nodes")
        if out.returncode != 0 or not out.stdout.strip():
            raise KitError(f"node {node} is not a kind node container on this Docker host, so the kit cannot load "
                           "the runner image into it: put the image into the cluster's nodes yourself (`./kit "
                           "runner-image --save FILE`) and run again with --image TAG --no-load")
        names.add(out.stdout.strip())
    if len(names) != 1:
        raise KitError(f"the nodes {', '.join(nodes)} belong to kind clusters {sorted(names)}, not one")
    return names.pop()


def refs(image: str) -> set[str]:
    """The names containerd may list the image under: Docker's short name is docker.io's."""
    out = {image}
    first = image.split("/", 1)[0]
    if "/" not in image or ("." not in first and ":" not in first and first != "localhost"):
        out.add(f"docker.io/{image if '/' in image else 'library/' + image}")
    return out


def has_image(node: str, image: str) -> bool:
    out = _docker(["exec", node, "ctr", "--namespace=k8s.io", "images", "list", "-q"], "reading a node's images")
    return out.returncode == 0 and bool(refs(image) & set(out.stdout.split()))


def remove_command(node: str, image: str) -> list[str]:
    # containerd keeps an image loaded by kind under its full name (docker.io/... for Docker's short one).
    ref = next((r for r in sorted(refs(image)) if r.startswith("docker.io/")), image)
    return ["docker", "exec", node, "ctr", "--namespace=k8s.io", "images", "rm", ref]


def lacking(nodes: list[str], image: str) -> list[str]:
    """The nodes without ``image``: the ones to load it into, and to take it out of afterwards."""
    return [n for n in nodes if not has_image(n, image)]


def load(kind: Path, cluster: str, nodes: list[str], image: str) -> None:
    if not nodes:
        return
    out = subprocess.run([str(kind), "load", "docker-image", image, "--name", cluster, "--nodes", ",".join(nodes)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise KitError(f"kind could not load {image} into {', '.join(nodes)}: "
                       + (out.stderr.strip().splitlines() or ["no output"])[-1])


def unload(nodes: list[str], image: str) -> list[str]:
    """Remove ``image`` from ``nodes``; the nodes where that failed."""
    failed = []
    for node in nodes:
        out = subprocess.run(remove_command(node, image), capture_output=True, text=True)
        if out.returncode != 0 and has_image(node, image):
            failed.append(node)
    return failed
