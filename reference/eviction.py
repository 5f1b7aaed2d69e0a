"""The kubelet's node-pressure eviction: which pod goes first when a node runs short of a resource.

Independent of scheduling (seed 004, "Interactions of Pod priority and QoS"). Read from
k8s.io/kubernetes v1.35.8 ``pkg/kubelet/eviction``; the ranking is the same in v1.34.4,
v1.36.4 and v1.37.2 (``helpers.go`` is byte-identical from 1.35 on, and differs in 1.34 only in
logging).

Where the seed and the code differ, the code wins (docs/semantics.md, "Kubelet eviction"):
- the order is: usage over requests first, then LOWER priority, then the larger usage minus
  request (a difference, not a ratio); the Korean seed leaves the priority step out;
- a pod within its requests is not exempt, only ranked after every pod over them; the only
  pods never evicted are critical ones (static, mirror, or priority >= 2,000,000,000), and they
  are skipped in favour of the next pod in the ranking;
- PIDs have no requests step: lower priority first, then more processes;
- QoS class is not consulted (it shows only through requests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from .objects import Pod

# pkg/apis/scheduling/types.go SystemCriticalPriority: system-cluster-critical and above.
SYSTEM_CRITICAL_PRIORITY = 2 * 1_000_000_000

Resource = Literal["memory", "ephemeral-storage", "pids"]

# What a pressure eviction leaves on the pod (managerImpl.evictPod, evictionMessage).
REASON = "Evicted"
DISRUPTION_REASON = "TerminationByKubelet"
NODE_CONDITION = {"memory": "MemoryPressure", "ephemeral-storage": "DiskPressure", "pids": "PIDPressure"}
TAINT = {"memory": "node.kubernetes.io/memory-pressure", "ephemeral-storage": "node.kubernetes.io/disk-pressure",
         "pids": "node.kubernetes.io/pid-pressure"}


def message_prefix(resource: Resource) -> str:
    """The start of an evicted pod's status.message (evictionMessage)."""
    return f"The node was low on resource: {'pids' if resource == 'pids' else resource}."


@dataclass(frozen=True)
class PodUsage:
    """One pod as the eviction manager sees it: its priority, its request of the starved
    resource (0 for BestEffort), and what it uses (working set, disk bytes, or processes).
    ``usage`` None: the pod is not in the kubelet's stats summary yet."""

    name: str
    priority: int = 0
    request: int = 0
    usage: int | None = 0
    static: bool = False  # a static or mirror pod (annotations kubernetes.io/config.source / .mirror)


def critical(pod: PodUsage) -> bool:
    """kubelettypes.IsCriticalPod: static or mirror pods, or priority >= SystemCriticalPriority."""
    return pod.static or pod.priority >= SYSTEM_CRITICAL_PRIORITY


def rank_key(pod: PodUsage, resource: Resource) -> tuple:
    """Sort key, first evicted first (rankMemoryPressure, rankDiskPressureFunc, rankPIDPressure).

    A pod with no stats yet goes first: every usage comparator puts it ahead ("prioritize
    evicting the pod for which no stats were found").
    """
    if pod.usage is None:
        return (0,)
    if resource == "pids":
        return (1, pod.priority, -pod.usage)
    exceeds = pod.usage > pod.request  # strictly greater (Quantity.Cmp == 1)
    return (1, not exceeds, pod.priority, -(pod.usage - pod.request))


def ranking(pods: list[PodUsage], resource: Resource) -> list[list[str]]:
    """The eviction order as groups: pods within a group tie exactly, and the kubelet's sort
    (sort.Sort over a list built from a map) leaves their order to chance."""
    ordered = sorted(pods, key=lambda p: (rank_key(p, resource), p.name))
    groups: list[list[str]] = []
    last = None
    for p in ordered:
        key = rank_key(p, resource)
        if groups and key == last:
            groups[-1].append(p.name)
        else:
            groups.append([p.name])
        last = key
    return groups


def next_victims(pods: list[PodUsage], resource: Resource) -> frozenset[str]:
    """Who the next pass evicts: the first non-critical pod of the ranking (critical pods are
    ranked but skipped, managerImpl.evictPod), as the set of pods tied there; empty when only
    critical pods are left."""
    by_name = {p.name: p for p in pods}
    for group in ranking(pods, resource):
        evictable = [n for n in group if not critical(by_name[n])]
        if evictable:
            return frozenset(evictable)
    return frozenset()


def eviction_order(pods: list[PodUsage], resource: Resource, passes: int) -> list[frozenset[str]]:
    """The victims of ``passes`` passes under lasting pressure, one pod a pass, when no tie
    decides (a tie makes the order a set per pass; the caller keeps ties out of scenarios)."""
    left = list(pods)
    out: list[frozenset[str]] = []
    for _ in range(passes):
        victims = next_victims(left, resource)
        if not victims:
            break
        out.append(victims)
        if len(victims) > 1:
            break  # which one went is the kubelet's free choice: later passes depend on it
        left = [p for p in left if p.name not in victims]
    return out


# The resources a pod may set at pod level (spec.resources; component-helpers resource/helpers.go
# supportedPodLevelResources, plus every hugepages-* resource).
POD_LEVEL = ("cpu", "memory")


def request_for_ranking(containers: Mapping[str, int], pod_level: Mapping[str, int], resource: str) -> int:
    """The request the eviction ranking measures a pod's usage against (pkg/api/v1/resource
    GetResourceRequestQuantity, 1.34.4/1.35.8/1.37.2 helpers.go:33-62, PodLevelResources on): a pod
    that sets any supported resource at pod level is counted by its pod-level requests alone, its
    containers' left out (SkipContainerLevelResources), so a resource it does not set there counts
    as no request; otherwise the sum of its containers' (the model's ``Pod.requests``; init
    containers and overhead are not modelled)."""
    if any(r in POD_LEVEL or r.startswith("hugepages-") for r in pod_level):
        return pod_level.get(resource, 0)
    return containers.get(resource, 0)


def usage_of(pod: Pod, resource: Resource) -> PodUsage:
    """A model pod as the eviction manager sees it (``Pod.usage`` is what the kubelet's stats show)."""
    return PodUsage(pod.key, pod.priority, pod.request_map.get(resource, 0), pod.usage_map.get(resource, 0))


def amount(n: int, resource: Resource) -> str:
    if resource == "pids":
        return str(n)
    return f"{n >> 20}Mi" if n % (1 << 20) == 0 else f"{n} bytes"


def explain(pods: list[PodUsage], resource: Resource) -> str:
    """The ranking in words, first evicted first, with what decided each place."""
    def why(p: PodUsage) -> str:
        if p.usage is None:
            return "no stats yet"
        bits = [] if resource == "pids" else [
            f"{'over' if p.usage > p.request else 'within'} its request by {amount(abs(p.usage - p.request), resource)}"]
        bits.append(f"priority {p.priority}")
        if critical(p):
            bits.append("critical: never evicted")
        return ", ".join(bits)

    by_name = {p.name: p for p in pods}
    return "; ".join(" = ".join(f"{n.split('/')[-1]} ({why(by_name[n])})" for n in group)
                     for group in ranking(pods, resource))


__all__ = ["PodUsage", "usage_of", "explain", "critical", "ranking", "next_victims", "eviction_order", "message_prefix",
           "SYSTEM_CRITICAL_PRIORITY", "REASON", "DISRUPTION_REASON", "NODE_CONDITION", "TAINT"]
