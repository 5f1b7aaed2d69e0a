"""Victims as the scheduler weighs them: a pod, or every running pod of a pod group disrupted as a whole.

Upstream (1.37): ``framework/preemption/types.go`` (``Victim``, ``NewPodVictim``,
``getCrossNodesVictims``, ``DomainVictim``) and ``util.go`` (``GetPodPriority``,
``MoreImportantVictim``, ``FilterVictimsWithPDBViolation``). Pod-group preemption
(reference.podgroup) weighs its victims so from 1.36; from 1.37, with GenericWorkload on, a lone
preemptor's dry run does too (reference.preemption, ``release.LONE_PREEMPTOR_GROUP_VICTIMS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Iterable, Iterator

from .objects import ClusterState, Pod, PodDisruptionBudget
from .release import GROUP_MEMBERS_AT_GROUP_PRIORITY, has


def start_time(pod: Pod, now: datetime) -> datetime:
    """GetPodStartTime: a pod without status.startTime counts as started now."""
    return pod.start_time or now


@dataclass(frozen=True)
class Unit:
    """A victim as workload-aware preemption weighs it: one pod, or every running pod of a group
    disrupted as a whole (on whatever nodes they run)."""

    keys: tuple[str, ...]
    priority: int
    grouped: bool  # a pod group's (any pod that names one counts as a group, even in single mode)
    start: datetime

    def importance(self) -> tuple:
        """Most important first: higher priority, a group before a pod, larger, then started earlier."""
        return (-self.priority, -int(self.grouped), -len(self.keys), self.start)


@dataclass(frozen=True)
class Victim:
    """What the evaluator's hooks (reference.preemption.EligibleVictim, MoreImportant) are shown of a
    victim: its pods, the priority it is weighed at, whether it is a pod group's, and its pods'
    earliest start. Upstream shows 1.37's hooks a ``preemption.Victim`` (Pods, Priority, IsGroup,
    EarliestStartTime) and 1.34/1.35's a pod (``fwk.PodInfo``, ``*v1.Pod``): here that pod is a
    one-pod victim at its own priority, in no group."""

    pods: tuple[Pod, ...]
    priority: int
    grouped: bool
    start: datetime

    def importance(self) -> tuple:
        """As Unit.importance: most important first."""
        return (-self.priority, -int(self.grouped), -len(self.pods), self.start)


def more_important_victim(a: Victim, b: Victim) -> bool:
    """Upstream's default order, as a hook of its own would call it: 1.37 MoreImportantVictim
    (priority, a group before a pod, the larger group, the earlier start), which for one-pod
    victims in no group is 1.34/1.35's MoreImportantPod (priority, then the earlier start)."""
    return a.importance() < b.importance()


def pod_priority(state: ClusterState, pod: Pod) -> int:
    """GetPodPriority: a pod that names an existing pod group counts at its group's priority."""
    g = state.group_of(pod)
    return g.priority if g is not None else pod.priority


def victim_units(state: ClusterState, priority: int, release: str, now: datetime) -> list[Unit]:
    """Every pod on a node below ``priority`` as workload-aware preemption groups them.

    A pod already terminating (its owner deleted it) is one too: upstream gathers every pod of
    every node with no deletionTimestamp test (1.36 newDomainForWorkloadPreemption, 1.37
    getCrossNodesVictims in preemption/types.go), and its room counts as freed when it is chosen."""
    whole: dict[str, list[Pod]] = {}
    units: list[Unit] = []
    for p in state.pods:
        if not p.node_name or state.node_named(p.node_name) is None:
            continue  # pending, or left on a deleted node: the snapshot's nodes do not hold it
        g = state.group_of(p)
        if g is not None and g.disruption == "all":
            whole.setdefault(g.key, []).append(p)
            continue
        at = g.priority if g is not None and has(release, GROUP_MEMBERS_AT_GROUP_PRIORITY) else p.priority
        units.append(Unit((p.key,), at, bool(p.group), start_time(p, now)))
    for key, pods in whole.items():
        g = state.group_of(pods[0])
        units.append(Unit(tuple(sorted(p.key for p in pods)), g.priority, True, min(start_time(p, now) for p in pods)))
    return [u for u in units if u.priority < priority]


def units_by_node(state: ClusterState, priority: int, release: str, now: datetime) -> dict[str, list[Unit]]:
    """A lone preemptor's victims per node (1.37 GetVictimsOnNode with GenericWorkload on, which
    gathers them with getCrossNodesVictims over that node): each unit below ``priority`` under
    every node it has a pod on, so a group disrupted as a whole is a victim wherever it runs."""
    out: dict[str, list[Unit]] = {}
    for u in victim_units(state, priority, release, now):
        for node in dict.fromkeys(state.pod_keyed(k).node_name for k in u.keys):
            out.setdefault(node, []).append(u)
    return out


def pdb_verdicts(items: Iterable, pdbs: tuple[PodDisruptionBudget, ...], everyone: tuple[Pod, ...] = (),
                 pods_of: Callable[[object], Iterable[Pod]] | None = None) -> Iterator[tuple[object, int]]:
    """Each item with how many of its pods would violate a PDB, budgets spent in the items' order.
    An item is a pod, or with ``pods_of`` a unit of pods (1.37 FilterVictimsWithPDBViolation's
    ViolateCount; for a pod, 0 or 1)."""
    allowed = [pdb.allowed_in(everyone) for pdb in pdbs]
    for item in items:
        violating = 0
        for pod in pods_of(item) if pods_of else (item,):
            if not pod.labels:
                continue
            violated = False
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or pdb.selector.empty or not pdb.selector.matches(pod.label_map):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
            violating += violated
        yield item, violating


def split_by_pdb(items: list, pdbs: tuple[PodDisruptionBudget, ...], everyone: tuple[Pod, ...] = (),
                 pods_of: Callable[[object], Iterable[Pod]] | None = None) -> tuple[list, list]:
    """(would violate a PDB, would not), keeping order; budgets are spent in that order. An item is
    a pod, or with ``pods_of`` a unit of pods (a pod group's victim) that violates if any of them does."""
    violating, fine = [], []
    for item, n in pdb_verdicts(items, pdbs, everyone, pods_of):
        (violating if n else fine).append(item)
    return violating, fine


__all__ = ["Unit", "Victim", "more_important_victim", "pdb_verdicts", "pod_priority", "split_by_pdb", "start_time",
           "units_by_node", "victim_units"]
