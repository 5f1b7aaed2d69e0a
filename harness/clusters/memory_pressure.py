"""Memory pressure on a kind worker: the kubelet's threshold moved just above what is free.

Not a filler, as for disk (pressure.py): on a cgroup v1 host the kubelet of a kind node reads
the host's memory (its capacity from /proc/meminfo, the working set of the root cgroup), so what
is free moves with everything the machine runs, and reaching the default threshold (100Mi) would
mean filling a shared machine. So the kit reads ``memory.available`` as the kubelet reports it,
sets ``evictionHard: memory.available`` above it by the shortfall the model's ranking calls for,
restarts the kubelet, and puts the configuration back afterwards. The pods' own memory (each
holds a memory-backed emptyDir) is exact; the host's drift between the reading and the
kubelet's next pass is what the margin (half the last victim's memory) absorbs.

``enforceNodeAllocatable`` goes off for the step: the kubelet copies a hard memory threshold to
the pods' allocatable signal (eviction/helpers.go addAllocatableThresholds) and subtracts it from
their allocatable, which under a threshold near the host's size is far below the threshold, so
every pod would be evicted.
"""

from __future__ import annotations

import subprocess

import yaml

from harness.clusters.pressure import summary
from harness.errors import KitError
from harness.host.wait import NotYet, wait_for
from harness.kube import Kube

KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
MEMORY_PRESSURE_TAINT = "node.kubernetes.io/memory-pressure"
# Half the last victim's memory must cover the host's drift over a kubelet pass or two.
MIN_MARGIN = 128 << 20


def squeezed(config: dict, threshold: int) -> dict:
    """The kubelet configuration under which ``threshold`` bytes free is memory pressure."""
    out = dict(config)
    out["evictionHard"] = {**(config.get("evictionHard") or {}), "memory.available": str(threshold)}
    out["enforceNodeAllocatable"] = ["none"]
    return out


def _docker(node: str, args: list[str], what: str, stdin: str | None = None) -> str:
    done = subprocess.run(["docker", "exec", "-i", node, *args], input=stdin, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise KitError(f"{what} on kind node {node} failed: {(done.stderr or done.stdout).strip()[-400:]}")
    return done.stdout


def _restart_kubelet(kube: Kube, node: str, config: str, what: str) -> None:
    """Write the kubelet's configuration and restart it; until it serves stats again."""
    _docker(node, ["sh", "-ec", f"cat > {KUBELET_CONFIG}.new && mv {KUBELET_CONFIG}.new {KUBELET_CONFIG} && "
                   "systemctl restart kubelet"], what, stdin=config)

    def serving():
        try:
            summary(kube, node)["node"]["memory"]["availableBytes"]
        except Exception as e:  # restarting: refused, or no stats yet
            raise NotYet(f"the kubelet does not serve stats yet ({type(e).__name__})") from None
    wait_for(serving, 120, f"the kubelet of {node} to serve stats after {what}", interval=1)


def wait_for_memory(kube: Kube, node: str, namespace: str, held: dict[str, int], timeout: float = 120) -> None:
    """Until the kubelet's stats show each pod, with a working set at least what it holds."""
    def shown():
        pods = {p["podRef"]["name"]: p for p in summary(kube, node).get("pods", [])
                if p["podRef"]["namespace"] == namespace}
        for name, want in held.items():
            ws = ((pods.get(name) or {}).get("memory") or {}).get("workingSetBytes")
            if ws is None:
                raise NotYet(f"pod {name} has no memory stats yet")
            if ws < want:
                raise NotYet(f"pod {name}'s working set shows {ws >> 20}Mi of {want >> 20}Mi")
    wait_for(shown, timeout, f"the kubelet of {node} to report the scenario's memory use", interval=1)


def kubelet_config(node: str) -> str:
    """The kubelet's configuration as it is: what ``relieve`` puts back."""
    return _docker(node, ["cat", KUBELET_CONFIG], "reading the kubelet's configuration")


def squeeze(kube: Kube, node: str, original: str, shortfall: int) -> None:
    """Put ``node`` ``shortfall`` bytes below its kubelet's memory threshold."""
    free = summary(kube, node)["node"]["memory"]["availableBytes"]
    config = yaml.safe_dump(squeezed(yaml.safe_load(original), free + shortfall))
    _restart_kubelet(kube, node, config, "moving its memory threshold")


def relieve(kube: Kube, node: str, original: str, timeout: float = 120) -> None:
    """Put the kubelet's configuration back; until the node shows no memory pressure (condition
    and taint; the condition stays evictionPressureTransitionPeriod after relief)."""
    _restart_kubelet(kube, node, original, "putting its configuration back")

    def calm():
        n = kube.core.read_node(node)
        if any(c.type == "MemoryPressure" and c.status == "True" for c in (n.status.conditions or [])):
            raise NotYet("MemoryPressure still True")
        if any(t.key == MEMORY_PRESSURE_TAINT for t in (n.spec.taints or [])):
            raise NotYet("still tainted memory-pressure")
    wait_for(calm, timeout, f"kind node {node} to recover from memory pressure", interval=1)


__all__ = ["kubelet_config", "squeeze", "squeezed", "relieve", "wait_for_memory", "MIN_MARGIN"]
