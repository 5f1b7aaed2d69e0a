"""Placing a scenario's nodes: where they come from (fresh kwok nodes, or real kind workers lent
one scenario at a time), and the image their pods run."""

from __future__ import annotations

import queue

from kubernetes import client

from harness.errors import KitError
from harness.build.node_image import HOLDOUT_IMAGE
from harness.kube import PAUSE_IMAGE, Kube


class NodeSource:
    """Where a scenario's nodes come from, and the image their pods run."""

    image = PAUSE_IMAGE
    kubelets = False  # whether a real kubelet runs the pods (node pressure needs one)

    def claim(self, kube: Kube, name: str, slots: int, run_id: str, labels: dict, taints: list) -> str: ...

    def release(self, kube: Kube, node: str) -> None: ...

    def starve(self, kube: Kube, node: str, namespace: str, writes: dict[str, int], shortfall: int) -> None:
        """Leave ``node`` ``shortfall`` bytes short of disk, once its kubelet shows the pods' ``writes``."""
        raise KitError("node pressure needs a real kubelet: run this scenario with --cluster kind")


class KwokNodes(NodeSource):
    """Fresh kwok nodes, one per scenario node (the local cluster)."""

    def claim(self, kube, name, slots, run_id, labels, taints):
        kube.create_node(name, slots, run_id, labels=labels, taints=taints)
        return name

    def release(self, kube, node):
        kube.core.delete_node(node)


class RealNodes(NodeSource):
    """Existing nodes (kind workers) lent to one scenario at a time.

    A claimed node gets the scenario's room as the extended resource, its labels
    and taints; release takes them all back off.
    """

    image = HOLDOUT_IMAGE  # a real kubelet runs it: it must outlast SIGTERM, as kwok's pods do
    kubelets = True

    def __init__(self, names: list[str]):
        self.free: queue.Queue[str] = queue.Queue()
        for n in names:
            self.free.put(n)
        self.claimed: dict[str, tuple[dict, list]] = {}
        self.starved: set[str] = set()

    def claim(self, kube, name, slots, run_id, labels, taints):
        try:
            node = self.free.get(timeout=600)
        except Exception:
            raise KitError("no free node for the scenario: the kind cluster has too few workers") from None
        kube.core.patch_node(node, {"metadata": {"labels": labels}, "spec": {"taints": [
            *[taint_dict(t) for t in (kube.core.read_node(node).spec.taints or [])], *taints]}})
        kube.set_slots(node, slots)
        self.claimed[node] = (labels, taints)
        return node

    def starve(self, kube, node, namespace, writes, shortfall):
        from harness.clusters import kind, pressure

        self.starved.add(node)
        pressure.wait_for_writes(kube, node, namespace, writes)
        pressure.starve(node, kind.NODEFS_THRESHOLD, shortfall)

    def release(self, kube, node):
        if node in self.starved:  # the next scenario gets the node back calm
            from harness.clusters import pressure

            self.starved.discard(node)
            pressure.relieve(kube, node)
        labels, taints = self.claimed.pop(node)
        current = kube.core.read_node(node)
        keep = [taint_dict(t) for t in (current.spec.taints or []) if (t.key, t.effect) not in
                {(x["key"], x["effect"]) for x in taints}]
        kube.core.patch_node(node, {"metadata": {"labels": {k: None for k in labels}}, "spec": {"taints": keep or None}})
        kube.clear_slots(node)
        self.free.put(node)



def taint_dict(t: client.V1Taint) -> dict:
    return {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}
