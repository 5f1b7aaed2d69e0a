"""Memory pressure on a kind worker: the kubelet's threshold moved near what is free, then a filler.

Not a filler alone, as for disk (pressure.py): the kubelet of a kind node takes its capacity from
the host's /proc/meminfo, so what it sees free is nearly the host's memory, and reaching the
default threshold (100Mi) would mean filling the machine. So the kit reads ``memory.available``
as the kubelet reports it, sets ``evictionHard: memory.available`` HEADROOM below it (no pressure
yet) and restarts the kubelet; then it fills a tmpfs in the node container, outside every pod,
until the node is short by what the model's ranking calls for. The configuration goes back after.

Why in that order: a restarted kubelet admits its running pods again, and under memory pressure
its eviction admission refuses BestEffort pods ("The node had condition: [MemoryPressure]"), as
a first version of this module that restarted the kubelet already under pressure showed. And the
hard threshold is subtracted from the node's allocatable memory, which the re-admission checks
the pods' requests against: HEADROOM leaves them room.

``enforceNodeAllocatable`` goes off for the step: the kubelet copies a hard memory threshold to
the pods' allocatable signal (eviction/helpers.go addAllocatableThresholds), which under a
threshold near the host's size would evict every pod.
"""

from __future__ import annotations

from typing import Callable

import yaml

from harness.clusters import kubelet
from harness.clusters.pressure import mebibytes, node_exec, summary, wait_calm, wait_for_pods
from harness.errors import KitError
from harness.kube import Kube

FILLER_DIR = "/run/prioritykit-memory"  # a tmpfs of the node container's own: gone with it
HEADROOM = 512 << 20  # free above the moved threshold while the kubelet restarts
MEMORY_PRESSURE_TAINT = "node.kubernetes.io/memory-pressure"
# Half the last victim's memory must cover the host's drift over a kubelet pass or two.
MIN_MARGIN = 128 << 20


def squeezed(config: dict, threshold: int) -> dict:
    """The kubelet configuration under which ``threshold`` bytes free is memory pressure."""
    return {**kubelet.with_threshold(config, "memory.available", str(threshold)), "enforceNodeAllocatable": ["none"]}


def wait_for_memory(kube: Kube, node: str, namespace: str, held: dict[str, int], timeout: float = 120) -> None:
    """Until the kubelet's stats show each pod with a working set at least what it holds."""
    wait_for_pods(kube, node, namespace, held, lambda pod: (pod.get("memory") or {}).get("workingSetBytes"),
                  "memory use", mebibytes, timeout)


def available(kube: Kube, node: str) -> int:
    return summary(kube, node)["node"]["memory"]["availableBytes"]


def squeeze(kube: Kube, node: str, original: str, shortfall: int, stats_shown: Callable[[], None]) -> None:
    """Put ``node`` ``shortfall`` bytes below its kubelet's memory threshold; ``stats_shown`` waits
    until the restarted kubelet's stats show the pods again (a pod without stats ranks first)."""
    threshold = available(kube, node) - HEADROOM
    kubelet.restart(kube, node, yaml.safe_dump(squeezed(yaml.safe_load(original), threshold)),
                    "moving its memory threshold")
    stats_shown()
    size = available(kube, node) - threshold + shortfall
    if size <= shortfall:
        raise KitError(f"kind node {node} came back from the kubelet's restart already short of memory")
    node_exec(node, f"mkdir -p {FILLER_DIR} && mount -t tmpfs -o size={size + (64 << 20)} tmpfs {FILLER_DIR} "
              f"&& dd if=/dev/zero of={FILLER_DIR}/fill bs=1M count={size >> 20} 2>/dev/null",
              "filling memory outside the pods")


def relieve(kube: Kube, node: str, original: str, timeout: float = 120) -> None:
    """Remove the filler and put the kubelet's configuration back; until the node shows no memory
    pressure."""
    node_exec(node, f"umount {FILLER_DIR} 2>/dev/null || true; rmdir {FILLER_DIR} 2>/dev/null || true",
              "removing the memory filler")
    kubelet.restart(kube, node, original, "putting its configuration back")
    wait_calm(kube, node, "MemoryPressure", MEMORY_PRESSURE_TAINT, timeout)


__all__ = ["squeeze", "squeezed", "relieve", "wait_for_memory", "MIN_MARGIN"]
