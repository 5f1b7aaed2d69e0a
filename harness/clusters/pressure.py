"""Node pressure on a kind worker: a node filesystem of fixed size, and a filler that starves it.

The kubelet evicts for disk pressure when its node filesystem (the one holding
/var/lib/kubelet) has less free than ``evictionHard: nodefs.available`` (kind-config.yaml).
On a stock kind worker that filesystem is the host's own disk, whose free space moves with
whatever else the machine does. So each worker gets a filesystem of its own, of fixed size:
an ext4 image file in the node container's /var (it goes with the container), loop-mounted
at /var/lib/kubelet before any pod runs there. Then the only writers are the scenario's pods
(their emptyDirs) and the kit's filler, and a pressure step is exact: wait until the kubelet's
stats show every pod's writes, read what is free, and fill it to the threshold less the
shortfall the model's ranking calls for (``starve``). A side effect the kit wants: the images
are now on another filesystem (a dedicated imagefs), so disk pressure on the node filesystem
ranks pods by their logs and emptyDirs alone, and never garbage-collects the images the kit
loaded (there is no registry to pull them back from).
"""

from __future__ import annotations

import json
import subprocess
from typing import Callable

import yaml

from harness.errors import KitError
from harness.host.wait import NotYet, wait_for
from harness.kube import Kube

KUBELET_DIR = "/var/lib/kubelet"
IMAGE = "/var/prioritykit-nodefs.img"  # inside the node container: removed with it
NODEFS_SIZE = 4 << 30  # a sparse file: the host's disk holds only what is written
FILLER = f"{KUBELET_DIR}/prioritykit-filler"
DISK_PRESSURE_TAINT = "node.kubernetes.io/disk-pressure"


def threshold(kind_config: dict) -> int:
    """The ``nodefs.available`` hard eviction threshold kind-config.yaml gives every kubelet, in bytes."""
    from kubernetes.utils import parse_quantity

    for patch in kind_config.get("kubeadmConfigPatches", []):
        doc = yaml.safe_load(patch)
        if doc.get("kind") == "KubeletConfiguration":
            return int(parse_quantity(doc["evictionHard"]["nodefs.available"]))
    raise KitError("kind-config.yaml: no KubeletConfiguration patch with evictionHard nodefs.available")


def node_exec(node: str, script: str, what: str, timeout: float = 120, stdin: str | None = None) -> str:
    """``script`` run by sh -e in the kind node container (``stdin`` its input); its output."""
    attach = ["-i"] if stdin is not None else []  # docker reads no input it is not asked to
    done = subprocess.run(["docker", "exec", *attach, node, "sh", "-ec", script], input=stdin, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise KitError(f"{what} on kind node {node} failed: {(done.stderr or done.stdout).strip()[-400:]}")
    return done.stdout


def give_own_filesystem(node: str) -> None:
    """Move the worker's /var/lib/kubelet onto a fixed-size filesystem; its kubelet restarts on it.

    Done once, right after the cluster is created, while no pod runs on the worker."""
    node_exec(node, f"""
        systemctl stop kubelet
        truncate -s {NODEFS_SIZE} {IMAGE}
        mkfs.ext4 -q -F -m 0 {IMAGE}
        mkdir -p /mnt/prioritykit-nodefs
        mount -o loop {IMAGE} /mnt/prioritykit-nodefs
        cp -a {KUBELET_DIR}/. /mnt/prioritykit-nodefs/
        umount /mnt/prioritykit-nodefs
        rmdir /mnt/prioritykit-nodefs
        mount -o loop {IMAGE} {KUBELET_DIR}
        systemctl start kubelet
    """, "giving the kubelet a node filesystem of its own")


def summary(kube: Kube, node: str) -> dict:
    """The kubelet's stats summary (what its eviction manager reads), through the API server."""
    raw = kube.core.connect_get_node_proxy_with_path(node, "stats/summary", _preload_content=False)
    return json.loads(raw.data)


def mebibytes(n: int) -> str:
    return f"{n >> 20}Mi"


def wait_for_pods(kube: Kube, node: str, namespace: str, held: dict[str, int], measure: Callable[[dict], int | None],
                  what: str, show: Callable[[int], str] = str, timeout: float = 120) -> None:
    """Until the kubelet's stats show each pod of ``held`` (a pod with no stats would rank first)
    with ``measure`` of its stats (None: not measured yet) at least the amount it holds of
    ``what``. The same wait for every pressure step: disk, memory, PIDs."""
    def shown():
        pods = {p["podRef"]["name"]: p for p in summary(kube, node).get("pods", [])
                if p["podRef"]["namespace"] == namespace}
        for name, want in held.items():
            got = measure(pods[name]) if name in pods else None
            if got is None:
                raise NotYet(f"pod {name} has no {what} in the kubelet's stats yet")
            if got < want:
                raise NotYet(f"pod {name} shows {show(got)} of {show(want)} of {what}")
    wait_for(shown, timeout, f"the kubelet of {node} to report the scenario's {what}", interval=1)


def wait_for_writes(kube: Kube, node: str, namespace: str, writes: dict[str, int], timeout: float = 120) -> None:
    """Until each pod's emptyDir is at least as large as it writes (volume stats are refreshed
    every volumeStatsAggPeriod, kind-config.yaml)."""
    wait_for_pods(kube, node, namespace, writes, lambda pod: sum(
        v.get("usedBytes", 0) for v in pod.get("volume", []) if v.get("name") == "data"), "disk use", mebibytes, timeout)


def available(node: str) -> int:
    """Bytes free on the node filesystem now (statfs, as the kubelet's own observation)."""
    return int(node_exec(node, f"df -B1 --output=avail {KUBELET_DIR} | tail -1", "reading free space").strip())


def starve(node: str, limit: int, shortfall: int) -> int:
    """Fill the node filesystem until ``shortfall`` bytes below the eviction threshold ``limit``;
    the filler's size."""
    size = available(node) - limit + shortfall
    if size <= 0:
        raise KitError(f"kind node {node} is already short of disk before the pressure step")
    node_exec(node, f"fallocate -l {size} {FILLER}", "filling the node filesystem")
    return size


def relieve(kube: Kube, node: str, timeout: float = 90) -> None:
    """Remove the filler and wait until the node shows no disk pressure."""
    node_exec(node, f"rm -f {FILLER}", "removing the filler")
    wait_calm(kube, node, "DiskPressure", DISK_PRESSURE_TAINT, timeout)


def wait_calm(kube: Kube, node: str, condition: str, taint: str, timeout: float) -> None:
    """Until the node shows neither the pressure ``condition`` nor its ``taint``: the kubelet keeps
    the condition for evictionPressureTransitionPeriod after relief."""
    def calm():
        n = kube.core.read_node(node)
        if any(c.type == condition and c.status == "True" for c in (n.status.conditions or [])):
            raise NotYet(f"{condition} still True")
        if any(t.key == taint for t in (n.spec.taints or [])):
            raise NotYet(f"still tainted {taint}")
    wait_for(calm, timeout, f"kind node {node} to recover from {condition}", interval=1)


__all__ = ["give_own_filesystem", "mebibytes", "wait_for_pods", "wait_for_writes", "starve", "relieve", "summary", "threshold", "FILLER",
           "node_exec", "wait_calm"]
