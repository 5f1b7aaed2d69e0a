"""Talking to the cluster under test: create scenario objects, observe what happened.

A thin layer over the official client. Waits are bounded (tenacity) and
poll an observable condition; none is a bare sleep.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kubernetes import client, config as kconfig
from kubernetes.client.exceptions import ApiException
from urllib3.util.retry import Retry

from harness.errors import KitError
from harness.host.wait import NotYet, wait_for

SLOT = "example.com/slot"  # the unit of room on a scenario node (an extended resource)
# The ephemeral storage every node offers pods, as the model counts it: kwok nodes get it, and
# a kind worker's own node filesystem (harness/clusters/pressure.py) leaves pods more.
NODE_STORAGE = 1536 << 20
NODE_MEMORY = 256 << 30  # what a kwok node offers (a kind worker offers the host's memory)
NODE_MILLI_CPU = 32000  # what a kwok node offers unless the scenario says (a kind worker: the host's cores)
QOS_MILLI_CPU = 10  # a Burstable or Guaranteed pod's cpu request when the scenario names none
# What a scenario's pods may hold in memory in all: the host gives it (memory pressure is made by
# moving the kubelet's threshold near what is free, so the machine is never filled:
# harness/clusters/memory_pressure.py).
POD_MEMORY = 2 << 30
POD_PROCESSES = 1000  # the most sleepers a scenario pod runs (harness/clusters/pid_pressure.py)
QOS_MEMORY = 32 << 20  # a Guaranteed pod's memory request and limit when the scenario names none
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # kwok runs no container: any image would do
KIT_LABEL = "priority-conformance.x-k8s.io/run"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"

# The taint a node joins with until it is seen Ready (reference.nodes.NOT_READY, as the API wants it).
NOT_READY = client.V1Taint(key="node.kubernetes.io/not-ready", effect="NoSchedule")

# Answers that mean "not now", not "no": the API server gave up waiting on its storage (504
# Timeout, seen on a loaded 2-core machine), sheds load (429) or is not serving yet (503).
BUSY = (429, 503, 504)
BUSY_BOUND = 120.0  # how long a write keeps being checked and repeated while the API server is busy


def read_retries() -> Retry:
    """Reads are repeated on a busy answer, with backoff (and the server's Retry-After); writes
    are not, here: a write may have landed before its 504, so ``write_once`` checks first."""
    return Retry(total=8, connect=2, read=2, status=8, status_forcelist=BUSY, allowed_methods=("GET", "HEAD"),
                 backoff_factor=0.5, backoff_max=10, respect_retry_after_header=True, raise_on_status=False)


def write_once(write, landed, what: str, bound: float = BUSY_BOUND) -> None:
    """Perform a create or delete once, whatever busy answers the API server gives.

    A 504 says the server stopped waiting, not that the write failed: the kit once took the
    timeout of a pod create that had in fact landed for a failed run. So after a busy answer the
    outcome is read (``landed``: the object exists, or is gone for a delete) before the write is
    repeated; a repeat answered 409 (created meanwhile) or 404 (deleted meanwhile) has landed."""
    try:
        write()
        return
    except ApiException as e:
        if e.status not in BUSY:
            raise
        first = e.status

    def again() -> None:
        if landed():
            return
        try:
            write()
        except ApiException as e:
            if e.status in (404, 409):
                return
            if e.status in BUSY:
                raise NotYet(f"the API server answers {e.status} ({e.reason})") from None
            raise
    wait_for(again, bound, f"{what} (the API server answered {first} at first)", interval=1)


def api_client(kubeconfig: Path) -> client.ApiClient:
    """A client of the cluster ``kubeconfig`` names, whose reads ride out a busy API server."""
    cfg = client.Configuration()
    try:
        kconfig.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    except Exception as e:  # malformed or missing kubeconfig
        raise KitError(f"cannot load kubeconfig {kubeconfig}: {e}") from None
    cfg.retries = read_retries()
    return client.ApiClient(cfg)


@dataclass
class Kube:
    """Clients for one cluster."""

    kubeconfig: Path

    def __post_init__(self) -> None:
        self.api = api_client(self.kubeconfig)
        self.core = client.CoreV1Api(self.api)
        self.batch = client.BatchV1Api(self.api)  # a campaign's Indexed Job (harness/campaign)
        self.scheduling = client.SchedulingV1Api(self.api)
        self.policy = client.PolicyV1Api(self.api)

    def close(self) -> None:
        self.api.close()

    def check_reachable(self) -> None:
        try:
            client.VersionApi(self.api).get_code(_request_timeout=5)
        except Exception as e:
            host = self.api.configuration.host
            raise KitError(f"cluster at {host} (kubeconfig {self.kubeconfig}) is unreachable: {e}") from None

    def release(self) -> str:
        """The API server's Kubernetes release, as "1.35": the model predicts that release's behaviour."""
        info = client.VersionApi(self.api).get_code(_request_timeout=10)
        minor = "".join(ch for ch in (info.minor or "") if ch.isdigit())
        return f"{info.major}.{minor}"

    # -- namespaces ---------------------------------------------------------------

    def create_namespace(self, name: str, run_id: str, labels: dict[str, str] | None = None) -> None:
        write_once(lambda: self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(
            name=name, labels={**(labels or {}), KIT_LABEL: run_id}))), lambda: self.exists(self.core.read_namespace, name),
            f"creating namespace {name}")

        def has_default_account():
            try:
                self.core.read_namespaced_service_account("default", name)
            except ApiException as e:
                if e.status == 404:
                    raise NotYet("no default service account yet") from None
                raise

        wait_for(has_default_account, 30, f"the default service account of namespace {name}")

    def delete_namespace(self, name: str) -> None:
        try:
            write_once(lambda: self.core.delete_namespace(name, grace_period_seconds=0),
                       lambda: not self.exists(self.core.read_namespace, name), f"deleting namespace {name}")
        except ApiException as e:
            if e.status != 404:
                raise

    @staticmethod
    def exists(read, *args) -> bool:
        """Whether ``read(*args)`` finds the object (a terminating one counts: the write landed)."""
        try:
            read(*args)
            return True
        except ApiException as e:
            if e.status == 404:
                return False
            raise

    def wait_namespaces_gone(self, run_id: str, timeout: float = 180) -> None:
        """Until every namespace this run made is gone, with all its pods."""
        def gone():
            left = self.core.list_namespace(label_selector=f"{KIT_LABEL}={run_id}").items
            if left:
                raise NotYet(f"{len(left)} namespace(s) still terminating")
        wait_for(gone, timeout, "earlier scenarios' namespaces to be deleted", interval=0.5)

    # -- nodes --------------------------------------------------------------------

    def create_node(self, name: str, slots: int, run_id: str, labels: dict | None = None, taints: list | None = None,
                    cpu_milli: int | None = None, wait: bool = True) -> None:
        """A kwok node with ``slots`` of room; ``wait``: until it is Ready and untainted (a caller
        creating thousands waits for them all at once instead, with one list).

        It joins tainted not-ready, and the node lifecycle controller takes the taint off once
        kwok reports it Ready: left to the controller, whether the taint is there when the
        scheduler first sees the node is a race, and what a node added wakes differs with it
        (reference/nodes.py add_node models the two events this makes)."""
        capacity = {"cpu": f"{NODE_MILLI_CPU if cpu_milli is None else cpu_milli}m", "memory": str(NODE_MEMORY), "pods": "110",
                    "ephemeral-storage": str(NODE_STORAGE), SLOT: str(slots)}
        node = client.V1Node(
            metadata=client.V1ObjectMeta(
                name=name,
                labels={"kubernetes.io/hostname": name, "type": "kwok", KIT_LABEL: run_id, **(labels or {})},
                annotations={KWOK_ANNOTATION: "fake"},
            ),
            spec=client.V1NodeSpec(taints=[client.V1Taint(**t) for t in (taints or [])] + [NOT_READY]),
            status=client.V1NodeStatus(capacity=capacity, allocatable=capacity),
        )
        self.core.create_node(node)
        if not wait:
            return
        own = {(t["key"], t["effect"]) for t in (taints or [])}

        def ready():
            n = self.core.read_node(name)
            conds = {c.type: c.status for c in (n.status.conditions or [])}
            if conds.get("Ready") != "True":
                raise NotYet("not Ready")
            # Not-ready until the node lifecycle controller has seen it Ready.
            extra = [t.key for t in (n.spec.taints or []) if (t.key, t.effect) not in own]
            if extra:
                raise NotYet(f"still tainted {extra}")

        wait_for(ready, 60, f"node {name} to become Ready and untainted")

    def set_slots(self, node: str, slots: int) -> None:
        """Give a node room as the extended resource, the documented way: a node status patch.

        A kubelet keeps advertised extended resources and derives allocatable; kwok
        nodes have no kubelet, so allocatable is patched too.
        """
        self.core.patch_node_status(node, {"status": {"capacity": {SLOT: str(slots)}, "allocatable": {SLOT: str(slots)}}})

    def clear_slots(self, node: str) -> None:
        path = SLOT.replace("~", "~0").replace("/", "~1")
        ops = [{"op": "remove", "path": f"/status/{field}/{path}"} for field in ("capacity", "allocatable")]
        n = self.core.read_node(node)
        ops = [op for op, have in zip(ops, (n.status.capacity or {}, n.status.allocatable or {})) if SLOT in have]
        if ops:
            self.core.patch_node_status(node, ops)

    # -- observation --------------------------------------------------------------

    def pods(self, namespace: str) -> list[client.V1Pod]:
        return self.core.list_namespaced_pod(namespace).items

    def pod_or_none(self, namespace: str, name: str) -> client.V1Pod | None:
        try:
            return self.core.read_namespaced_pod(name, namespace)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def preempted_events(self, namespace: str) -> list[client.CoreV1Event]:
        """Preempted events, through the core API: the client cannot read events.k8s.io
        events that other components write without an eventTime."""
        return [e for e in self.all_events(namespace) if e.reason == "Preempted"]

    def all_events(self, namespace: str) -> list[client.CoreV1Event]:
        return self.core.list_namespaced_event(namespace).items


def condition(pod: client.V1Pod, type_: str):
    return next((c for c in (pod.status.conditions or []) if c.type == type_), None)


def disrupted_by_preemption(pod: client.V1Pod) -> bool:
    c = condition(pod, "DisruptionTarget")
    return c is not None and c.status == "True" and c.reason == "PreemptionByScheduler"
