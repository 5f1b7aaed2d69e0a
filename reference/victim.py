"""Victims as the scheduler weighs them: a pod, or every running pod of a pod group disrupted as a whole.

Upstream (1.37): ``framework/preemption/types.go`` (``Victim``, ``NewPodVictim``,
``getCrossNodesVictims``, ``DomainVictim``) and ``util.go`` (``GetPodPriority``,
``MoreImportantVictim``, ``FilterVictimsWithPDBViolation``). Pod-group preemption
(reference.podgroup) weighs its victims so from 1.36; from 1.37, with GenericWorkload on, a lone
preemptor's dry run does too (reference.preemption, ``release.LONE_PREEMPTOR_GROUP_VICTIMS``).
From 1.37 with the CompositePodGroup gate (``release.COMPOSITE_POD_GROUPS``) a pod group may be
the child of a composite pod group, itself perhaps a child of another: a pod then counts at its
root group's priority, and the highest group of its lineage disrupted as a whole makes its victim
(``TraverseHierarchyUp``, ``getHighestAllAncestor``, ``helper.GetPodGroupStates``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Iterable, Iterator

from .objects import ClusterState, CompositePodGroup, Pod, PodDisruptionBudget, PodGroup
from .release import COMPOSITE_POD_GROUPS, GROUP_MEMBERS_AT_GROUP_PRIORITY, Gates, has

# WorkloadMaxTreeDepth (scheduling v1beta1 and v1alpha3, 1.37): how many levels a walk up or down a
# hierarchy of pod groups and composite pod groups goes at most.
MAX_DEPTH = 4

POD, GROUP, COMPOSITE = "Pod", "PodGroup", "CompositePodGroup"  # the kinds of a victim (its key type)
RANK = {POD: 1, GROUP: 2, COMPOSITE: 3}

Group = PodGroup | CompositePodGroup


def kind_of(grouped: bool, composite: bool) -> str:
    """A victim's kind (its key type): a composite pod group's, a pod group's, or a pod."""
    return COMPOSITE if composite else GROUP if grouped else POD


def importance(priority: int, kind: str, size: int, start: datetime) -> tuple:
    """MoreImportantVictim's order as a sort key, most important first: higher priority, a
    composite group before a pod group before a pod, the larger, then the earlier started."""
    return (-priority, -RANK[kind], -size, start)


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
    # Its highest group disrupted as a whole is a composite pod group (1.37, CompositePodGroup gate):
    # such a victim ranks above a pod group's.
    composite: bool = False

    @property
    def kind(self) -> str:
        return kind_of(self.grouped, self.composite)

    def importance(self) -> tuple:
        return importance(self.priority, self.kind, len(self.keys), self.start)


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
    composite: bool = False  # as Unit.composite

    @property
    def kind(self) -> str:
        return kind_of(self.grouped, self.composite)

    def importance(self) -> tuple:
        return importance(self.priority, self.kind, len(self.pods), self.start)


def more_important_victim(a: Victim, b: Victim) -> bool:
    """Upstream's default order, as a hook of its own would call it: 1.37 MoreImportantVictim
    (``importance``), which for one-pod victims in no group is 1.34/1.35's MoreImportantPod
    (priority, then the earlier start)."""
    return a.importance() < b.importance()


def composite_on(release: str, gates: Gates = ()) -> bool:
    """Whether the scheduler lists composite pod groups (1.37 on, with its CompositePodGroup gate)."""
    return has(release, COMPOSITE_POD_GROUPS, gates)


def walk_up(state: ClusterState, namespace: str, kind: str, name: str, *, groups: bool = True,
            composite: bool = True, stop_at: str = "") -> tuple[tuple[str, Group], ...]:
    """TraverseHierarchyUp (1.37 preemption/util.go): the groups from (kind, name) up through its
    parents, each as (kind, group), while they exist, at most MAX_DEPTH of them and none twice (a
    cycle ends the walk); ``stop_at`` ends it after the group of that name. Without both listers
    (``groups``: GenericWorkload on; ``composite``: CompositePodGroup on) it visits nothing, and a
    pod's key (kind "Pod") starts nothing."""
    if not (groups and composite):
        return ()
    out: list[tuple[str, Group]] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(MAX_DEPTH):
        if (kind, name) in seen or kind not in (GROUP, COMPOSITE):
            break
        seen.add((kind, name))
        g = state.group_named(namespace, name) if kind == GROUP else state.composite_named(namespace, name)
        if g is None:
            break
        out.append((kind, g))
        if g.name == stop_at or not g.parent:
            break
        kind, name = COMPOSITE, g.parent
    return tuple(out)


def lineage(state: ClusterState, pod: Pod, composite: bool = False) -> tuple[tuple[str, Group], ...]:
    """The groups ``pod`` belongs to, its pod group first and its root last: with composite pod
    groups on, the walk up from its pod group; else the pod group alone, where it exists."""
    if not pod.group:
        return ()
    if composite:
        return walk_up(state, pod.namespace, GROUP, pod.group)
    g = state.group_of(pod)
    return ((GROUP, g),) if g is not None else ()


def pod_priority(state: ClusterState, pod: Pod, composite: bool = False) -> int:
    """GetPodPriority: a pod that names an existing pod group counts at its root group's priority
    (the highest group of its lineage that exists: with composite pod groups off, its pod group)."""
    groups = lineage(state, pod, composite)
    return groups[-1][1].priority if groups else pod.priority


def highest_all(state: ClusterState, pod: Pod, composite: bool = False) -> tuple[str, Group] | None:
    """getHighestAllAncestor (1.37 preemption/types.go): the highest group of the pod's lineage
    disrupted as a whole, with its kind; None when none is."""
    whole = [(kind, g) for kind, g in lineage(state, pod, composite) if g.disruption == "all"]
    return whole[-1] if whole else None


def leaf_groups(state: ClusterState, kind: str, group: Group) -> list[PodGroup]:
    """GetPodGroupStates (1.37 helper/podgroup.go): the pod groups under ``group`` (itself, for a
    pod group), down at most MAX_DEPTH levels, through the children that name their parent."""
    def walk(kind: str, g: Group, depth: int) -> Iterator[PodGroup]:
        if depth >= MAX_DEPTH:
            return
        if kind == GROUP:
            yield g
            return
        for child in state.children(g):
            yield from walk(GROUP if isinstance(child, PodGroup) else COMPOSITE, child, depth + 1)
    return list(walk(kind, group, 0))


def victim_units(state: ClusterState, priority: int, release: str, now: datetime, gates: Gates = ()) -> list[Unit]:
    """Every pod on a node below ``priority`` as workload-aware preemption groups them.

    A pod whose lineage holds a group disrupted as a whole goes with every running pod under the
    highest such group (1.37 with composite pod groups: every pod of every pod group under it), at
    its root group's priority; every other pod is a victim of its own.

    A pod already terminating (its owner deleted it) is one too: upstream gathers every pod of
    every node with no deletionTimestamp test (1.36 newDomainForWorkloadPreemption, 1.37
    getCrossNodesVictims in preemption/types.go), and its room counts as freed when it is chosen."""
    composite = composite_on(release, gates)
    whole: dict[tuple[str, str], tuple[str, Group, Pod]] = {}
    units: list[Unit] = []
    for p in state.pods:
        if not p.node_name or state.node_named(p.node_name) is None:
            continue  # pending, or left on a deleted node: the snapshot's nodes do not hold it
        top = highest_all(state, p, composite)
        if top is not None:
            whole.setdefault((top[0], top[1].key), (*top, p))
            continue
        at = pod_priority(state, p, composite) if has(release, GROUP_MEMBERS_AT_GROUP_PRIORITY) else p.priority
        units.append(Unit((p.key,), at, bool(p.group), start_time(p, now)))
    running: dict[str, list[Pod]] = {}
    if whole:
        for p in state.pods:
            if p.node_name and p.group:
                running.setdefault(f"{p.namespace}/{p.group}", []).append(p)
    for kind, top, first in whole.values():
        pods = [p for g in leaf_groups(state, kind, top) for p in running.get(g.key, ())]
        units.append(Unit(tuple(sorted(p.key for p in pods)), pod_priority(state, first, composite), True,
                          min(start_time(p, now) for p in pods), kind == COMPOSITE))
    return [u for u in units if u.priority < priority]


def units_by_node(state: ClusterState, priority: int, release: str, now: datetime,
                  gates: Gates = ()) -> dict[str, list[Unit]]:
    """A lone preemptor's victims per node (1.37 GetVictimsOnNode with GenericWorkload on, which
    gathers them with getCrossNodesVictims over that node): each unit below ``priority`` under
    every node it has a pod on, so a group disrupted as a whole is a victim wherever it runs."""
    out: dict[str, list[Unit]] = {}
    for u in victim_units(state, priority, release, now, gates):
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


__all__ = ["MAX_DEPTH", "Unit", "Victim", "composite_on", "highest_all", "importance", "kind_of", "leaf_groups", "lineage",
           "more_important_victim", "pdb_verdicts", "pod_priority", "split_by_pdb", "start_time", "units_by_node", "victim_units", "walk_up"]
