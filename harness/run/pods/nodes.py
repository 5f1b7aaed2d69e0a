"""Placing a scenario's nodes: where they come from (fresh kwok nodes, or real kind workers lent
one scenario at a time), and the image their pods run."""

from __future__ import annotations

import queue

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from harness.errors import KitError
from harness.build.node_image import HOLDOUT_IMAGE
from harness.kube import NODE_MILLI_CPU, PAUSE_IMAGE, Kube


class NodeSource:
    """Where a scenario's nodes come from, the image their pods run, and how a node step changes
    one (label, taint, cordon, room: the same API calls on both kinds of node)."""

    image = PAUSE_IMAGE
    kubelets = False  # whether a real kubelet runs the pods (node pressure needs one)
    creates = False  # whether it makes nodes (a scenario may then add and delete nodes)

    def claim(self, kube: Kube, name: str, slots: int, run_id: str, labels: dict, taints: list,
              milli_cpu: int = NODE_MILLI_CPU) -> str: ...

    def release(self, kube: Kube, node: str) -> None: ...

    def remove(self, kube: Kube, node: str) -> None:
        raise KitError("deleteNode needs nodes the kit creates (kwok nodes on the local cluster)")

    def starve(self, kube: Kube, node: str, namespace: str, resource: str, held: dict[str, int],
               shortfall: int) -> None:
        """Leave ``node`` ``shortfall`` bytes short of ``resource`` (disk or memory), once its
        kubelet shows what the pods hold of it (``held``)."""
        raise KitError("node pressure needs a real kubelet: run this scenario with --cluster kind")

    def label(self, kube: Kube, node: str, labels: dict[str, str | None]) -> None:
        kube.core.patch_node(node, {"metadata": {"labels": labels}})

    def set_taints(self, kube: Kube, node: str, add: list[dict], remove: set[tuple[str, str]]) -> None:
        """Add and remove taints by (key, effect), keeping every other taint: the node lifecycle
        controller writes its own (the unschedulable taint of a cordoned node), so the list is
        replaced only at the version read (a conflict reads again)."""
        def change() -> None:
            n = kube.core.read_node(node)
            gone = remove | {(t["key"], t["effect"]) for t in add}
            keep = [taint_dict(t) for t in (n.spec.taints or []) if (t.key, t.effect) not in gone]
            kube.core.patch_node(node, {"metadata": {"resourceVersion": n.metadata.resource_version},
                                        "spec": {"taints": keep + add or None}})
        retry_conflicts(change)

    def cordon(self, kube: Kube, node: str, unschedulable: bool) -> None:
        kube.core.patch_node(node, {"spec": {"unschedulable": unschedulable or None}})

    def resize(self, kube: Kube, node: str, slots: int) -> None:
        kube.set_slots(node, slots)


class KwokNodes(NodeSource):
    """Fresh kwok nodes, one per scenario node (the local cluster)."""

    creates = True

    def claim(self, kube, name, slots, run_id, labels, taints, milli_cpu=NODE_MILLI_CPU):
        kube.create_node(name, slots, run_id, labels=labels, taints=taints, cpu_milli=milli_cpu)
        return name

    def release(self, kube, node):
        kube.core.delete_node(node)

    def remove(self, kube, node):
        kube.core.delete_node(node)


class RealNodes(NodeSource):
    """Existing nodes (kind workers) lent to one scenario at a time.

    A claimed node gets the scenario's room as the extended resource, its labels and taints;
    release gives the node back as it was lent: the labels and taints the scenario set or took
    away (by its nodes or its node steps) restored, uncordoned, its room taken off.
    """

    image = HOLDOUT_IMAGE  # a real kubelet runs it: it must outlast SIGTERM, as kwok's pods do
    kubelets = True

    def __init__(self, names: list[str]):
        self.free: queue.Queue[str] = queue.Queue()
        for n in names:
            self.free.put(n)
        # node -> (its labels as lent, its taints as lent)
        self.lent: dict[str, tuple[dict[str, str], list[dict]]] = {}
        # node -> the resource it was starved of, and for memory the kubelet configuration to put back
        self.starved: dict[str, tuple[str, str]] = {}

    def claim(self, kube, name, slots, run_id, labels, taints, milli_cpu=NODE_MILLI_CPU):
        # A worker's cpu is its host's: a scenario that sets milliCPU runs on kwok nodes only
        # (Scenario.needs_kwok).
        try:
            node = self.free.get(timeout=600)
        except Exception:
            raise KitError("no free node for the scenario: the kind cluster has too few workers") from None
        n = kube.core.read_node(node)
        self.lent[node] = (dict(n.metadata.labels or {}), [taint_dict(t) for t in (n.spec.taints or [])])
        self.label(kube, node, labels)
        self.set_taints(kube, node, taints, set())
        kube.set_slots(node, slots)
        return node

    def starve(self, kube, node, namespace, resource, held, shortfall):
        from harness.clusters import kind, kubelet, pressure

        squeezer = _squeezer(resource)
        if squeezer is None:  # disk: the worker's own filesystem filled, no kubelet setting moved
            self.starved[node] = (resource, "")
            pressure.wait_for_writes(kube, node, namespace, held)
            pressure.starve(node, kind.NODEFS_THRESHOLD, shortfall)
            return
        wait_held, module = squeezer
        wait_held(kube, node, namespace, held)
        self.starved[node] = (resource, kubelet.config(node))
        module.squeeze(kube, node, self.starved[node][1], shortfall, lambda: wait_held(kube, node, namespace, held))

    def release(self, kube, node):
        if node in self.starved:  # the next scenario gets the node back calm
            from harness.clusters import pressure

            resource, original = self.starved.pop(node)
            squeezer = _squeezer(resource)
            if squeezer is None:
                pressure.relieve(kube, node)
            elif original:
                squeezer[1].relieve(kube, node, original)
        labels, taints = self.lent.pop(node)
        now = kube.core.read_node(node)
        current = dict(now.metadata.labels or {})
        # The kubelet and the controllers keep their own labels and taints up to date; only what
        # differs from the node as lent, in keys the scenario could have touched, is put back.
        changes = {k: labels.get(k) for k in set(current) | set(labels) if current.get(k) != labels.get(k)
                   and not k.startswith(("node.kubernetes.io/", "beta.kubernetes.io/"))}
        if changes:
            self.label(kube, node, changes)
        lent = {(t["key"], t["effect"]) for t in taints}
        self.set_taints(kube, node, [t for t in taints if not t["key"].startswith("node.kubernetes.io/")],
                        {(t.key, t.effect) for t in (now.spec.taints or []) if (t.key, t.effect) not in lent
                         and not t.key.startswith("node.kubernetes.io/")})
        self.cordon(kube, node, False)
        kube.clear_slots(node)
        self.free.put(node)


def retry_conflicts(call, attempts: int = 5) -> None:
    """Run a read-modify-write ``call`` again when another writer changed the object meanwhile."""
    for i in range(attempts):
        try:
            return call()
        except ApiException as e:
            if e.status != 409 or i == attempts - 1:
                raise


def taint_dict(t: client.V1Taint) -> dict:
    return {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}


def _squeezer(resource: str):
    """For a resource whose pressure moves the kubelet's threshold (harness/clusters: memory,
    pids), the wait until its stats show what the pods hold, and the module that squeezes and
    relieves; None for disk."""
    from harness.clusters import memory_pressure, pid_pressure

    return {"memory": (memory_pressure.wait_for_memory, memory_pressure),
            "pids": (pid_pressure.wait_for_processes, pid_pressure)}.get(resource)
