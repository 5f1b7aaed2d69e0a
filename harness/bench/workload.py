"""What the benchmark puts in its cluster: N kwok nodes of one slot each, every slot taken by one
low-priority pod, and a wave of M high-priority preemptors that each need one slot.

Every node is alike and holds exactly one pod of the one low class, so the model's answer for each
preemptor is simple and independent of the build: one victim, of lower priority, on any node
(``check`` holds the outcome to that). Sizes grow in one cluster: after a wave the preemptors are
deleted, the freed slots are filled again, and nodes and pods are added up to the next size.

Thousands of objects are created concurrently by a small thread pool, with request bodies as plain
dicts and responses left unparsed (the Python client's model classes cost about a millisecond an
object each way). Waits list once per poll from the API server's watch cache (resourceVersion=0)
and read the JSON directly, instead of one read per object.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Iterable

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from harness.errors import KitError
from harness.host import lifecycle
from harness.host.console import log
from harness.host.wait import NotYet, wait_for
from harness.kube import KIT_LABEL, PAUSE_IMAGE, SLOT, Kube

NAMESPACE = "bench"
ROLE = "priority-conformance.x-k8s.io/bench-role"  # low | high
LOW_CLASS, HIGH_CLASS = "bench-low", "bench-high"
LOW_VALUE, HIGH_VALUE = 100, 1000
WORKERS = 8  # concurrent requests: enough to keep the API server busy, few enough for two cores


def node_name(i: int) -> str:
    return f"bench-n{i:05d}"


def pod_body(name: str, role: str, priority_class: str, grace: int, run_id: str) -> dict:
    """A pod that needs one slot on one of this run's nodes."""
    one = {SLOT: "1"}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {ROLE: role, KIT_LABEL: run_id}},
        "spec": {
            "priorityClassName": priority_class,
            "terminationGracePeriodSeconds": grace,
            "nodeSelector": {KIT_LABEL: run_id},
            "containers": [{"name": "c", "image": PAUSE_IMAGE, "resources": {"requests": one, "limits": one}}],
        },
    }


def running(pod: dict) -> bool:
    """A pod as the API's JSON gives it: bound, Running, and not being deleted."""
    return (bool((pod.get("spec") or {}).get("nodeName")) and (pod.get("status") or {}).get("phase") == "Running"
            and not (pod.get("metadata") or {}).get("deletionTimestamp"))


def node_ready(node: dict) -> bool:
    """Ready, and without the taints the control plane puts on a node it has not seen Ready yet."""
    conds = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []}
    return conds.get("Ready") == "True" and not (node.get("spec") or {}).get("taints")


def api_error(e: Exception) -> str:
    if isinstance(e, ApiException):
        try:
            message = json.loads(e.body or "{}").get("message")
        except ValueError:
            message = None
        return f"{e.status} {e.reason}: {message or e.body}"
    return f"{type(e).__name__}: {e}"


def concurrently(work: Callable, items: Iterable, what: str, workers: int = WORKERS) -> None:
    """``work(item)`` for every item on a small pool; the first failure stops the rest and is raised
    as a KitError naming ``what``. A stop request (Ctrl-C, SIGTERM) cancels what has not started."""
    def guarded(item):
        lifecycle.check()
        work(item)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bench")
    try:
        futures = [pool.submit(guarded, item) for item in items]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f.exception() for f in done if f.exception() is not None]
        if failed:
            raise KitError(f"creating {what}: {api_error(failed[0])}")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class Workload:
    """This run's objects in one cluster, and how many of each exist so far."""

    kube: Kube
    run_id: str
    grace: int = 1  # the low pods' termination grace period: victims stay Terminating this long
    workers: int = WORKERS
    nodes: int = 0
    lows: int = 0  # low pods ever created (their names count on)
    waves: int = 0

    def prepare(self) -> None:
        self.kube.create_namespace(NAMESPACE, self.run_id)
        for name, value in ((LOW_CLASS, LOW_VALUE), (HIGH_CLASS, HIGH_VALUE)):
            self.kube.scheduling.create_priority_class(client.V1PriorityClass(
                metadata=client.V1ObjectMeta(name=name, labels={KIT_LABEL: self.run_id}), value=value,
                description="priority-conformance preemption benchmark"))

    # -- listing, cheaply ------------------------------------------------------------

    def _items(self, call: Callable, *args, **kwargs) -> list[dict]:
        resp = call(*args, resource_version="0", _preload_content=False, _request_timeout=60, **kwargs)
        try:
            return json.loads(resp.data).get("items") or []
        finally:
            resp.release_conn()

    def node_items(self) -> list[dict]:
        return self._items(self.kube.core.list_node, label_selector=f"{KIT_LABEL}={self.run_id}")

    def pod_items(self, role: str) -> list[dict]:
        return self._items(self.kube.core.list_namespaced_pod, NAMESPACE, label_selector=f"{ROLE}={role}")

    # -- growing -----------------------------------------------------------------------

    def grow(self, count: int, timeout: float) -> float:
        """Nodes up to ``count``, all Ready and untainted; the seconds it took."""
        t0 = time.monotonic()
        new = range(self.nodes, count)
        concurrently(lambda i: self.kube.create_node(node_name(i), 1, self.run_id, wait=False), new,
                     f"{len(new)} nodes", self.workers)
        self.nodes = max(self.nodes, count)

        def all_ready():
            ready = sum(1 for n in self.node_items() if node_ready(n))
            if ready < self.nodes:
                raise NotYet(f"{ready} of {self.nodes} nodes Ready and untainted")

        wait_for(all_ready, timeout, f"{self.nodes} nodes to become Ready", interval=1.0)
        return time.monotonic() - t0

    def fill(self, timeout: float) -> float:
        """A low pod running on every node; the seconds it took."""
        t0 = time.monotonic()
        alive = [p for p in self.pod_items("low") if not p["metadata"].get("deletionTimestamp")]
        need = self.nodes - len(alive)
        if need > 0:
            start = self.lows
            self.lows += need
            body = lambda i: pod_body(f"low-{i:05d}", "low", LOW_CLASS, self.grace, self.run_id)  # noqa: E731
            concurrently(lambda i: self._create_pod(body(i)), range(start, start + need), f"{need} low pods",
                         self.workers)

        def all_running():
            up = sum(1 for p in self.pod_items("low") if running(p))
            if up < self.nodes:
                raise NotYet(f"{up} of {self.nodes} low pods running")

        wait_for(all_running, timeout, f"a low-priority pod running on each of {self.nodes} nodes", interval=1.0)
        return time.monotonic() - t0

    def _create_pod(self, body: dict) -> None:
        resp = self.kube.core.create_namespaced_pod(NAMESPACE, body, _preload_content=False, _request_timeout=60)
        try:
            resp.data  # read to the end, so the connection goes back to the pool clean
        finally:
            resp.release_conn()

    # -- the wave ----------------------------------------------------------------------

    def wave(self, count: int) -> list[str]:
        """Create ``count`` preemptors at once; their names."""
        self.waves += 1
        names = [f"high-{self.waves}-{j:04d}" for j in range(count)]
        concurrently(lambda n: self._create_pod(pod_body(n, "high", HIGH_CLASS, 0, self.run_id)), names,
                     f"{count} preemptors", self.workers)
        return names

    def reset(self, timeout: float) -> None:
        """Delete every preemptor at once and wait until they are gone: their slots are free again."""
        self.kube.core.delete_collection_namespaced_pod(NAMESPACE, label_selector=f"{ROLE}=high",
                                                        grace_period_seconds=0)

        def gone():
            left = len(self.pod_items("high"))
            if left:
                raise NotYet(f"{left} preemptors still there")

        wait_for(gone, timeout, "the wave's preemptors to be deleted", interval=0.5)


def fill_timeout(nodes: int) -> float:
    """Generous on two cores: about 10 objects a second, plus two minutes (the first run's 50 a
    second timed out at 1,000 nodes: 855 Ready after 80 s)."""
    return 120 + nodes / 10


def report_progress(target: str, what: str, seconds: float) -> None:
    log(f"[{target}] {what} in {seconds:.1f} s")
