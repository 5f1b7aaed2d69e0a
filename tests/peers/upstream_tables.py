"""The builders and the harness the peer suite's translations of kubernetes' scheduler unit tables
share (default_preemption_test.go at v1.35.8 and v1.37.2, framework/preemption's preemption_test.go
and util_test.go), parametrized by release where the model's answer depends on it. The rows both
releases of default_preemption_test.go share are in default_preemption_rows.py.

Conventions: cpu in millicores, memory in bytes, and a node holds 32 pods unless a row says
otherwise. Upstream's start times are nanoseconds after the Unix epoch; here they are
microseconds after it, which keeps their order (only the order matters).

Where an upstream row hands PostFilter (or Preempt) the filter phase's per-node statuses, the
harness gives the model the same ones (``given_statuses``): the model's own filter phase is
replaced for that call only, as upstream replaces the scheduler's; a node the row leaves out
counts as UnschedulableAndUnresolvable, as upstream's status map has it. Where a row runs the dry
run itself over every node (DryRunPreemption), the model's dry run runs on each node the same way
(``dry_run``). Rows that register test-only filter plugins in place of the real ones give the model
the same filter set (``given_filters``).

Feature gates: a row run with GenericWorkload on is given the gate (``GENERIC_WORKLOAD``), and the
model then weighs victims as 1.37 does with it (release.LONE_PREEMPTOR_GROUP_VICTIMS: pod-group
victims, reference.victim.units_by_node); other rows run with it off, as upstream's default.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import reference.preemption as preemption
from reference import filter as flt
from reference.objects import ClusterState, CompositePodGroup, LabelSelector, Node, Pod, PodDisruptionBudget, PodGroup
from reference.preemption import DefaultPreemption, select_victims_on_node
from reference.release import LONE_PREEMPTOR_GROUP_VICTIMS, has
from reference.victim import units_by_node

from tests.builders import T0

UPSTREAM = DefaultPreemption()
NS = "default"
GENERIC_WORKLOAD = (("kube-scheduler", "GenericWorkload", True),)
# A row run with composite pod groups on (1.37, alpha): GenericWorkload and CompositePodGroup.
COMPOSITE = GENERIC_WORKLOAD + (("kube-scheduler", "CompositePodGroup", True),)


# Upstream's priorities and request sizes (cpu millicores, memory bytes) in default_preemption_test.go.
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = 100, 200, 300, 500
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def at(n: int) -> datetime:
    """Upstream's epochTime<n> (n after the epoch)."""
    return EPOCH + timedelta(microseconds=n)


def res(size: int) -> tuple[tuple[str, int], ...]:
    """One of upstream's request sizes: that many millicores and that many bytes."""
    return (("cpu", size), ("memory", size))


def node(name: str, *, pods: int = 32, cpu: int | None = None, memory: int | None = None,
         labels: dict | None = None) -> Node:
    alloc = [("pods", pods)]
    if cpu is not None:
        alloc.append(("cpu", cpu))
    if memory is not None:
        alloc.append(("memory", memory))
    return Node(name, labels=tuple(sorted((labels or {}).items())), allocatable=tuple(alloc))


def big_node(spec: str) -> Node:
    """A node of the dry-run tables: the very large size, named by the part of ``spec`` before a
    "/", labelled ``hostname``, then ``zone``, with the parts of ``spec`` ("node-a/zone1")."""
    parts = spec.split("/")
    return node(parts[0], cpu=VERY_LARGE, memory=VERY_LARGE, labels=dict(zip(("hostname", "zone", "region"), parts)))


def pod(name: str, prio: int = 0, *, on: str = "", size: int = 0, start: datetime | None = None,
        labels: dict | None = None, ns: str = NS, **kw) -> Pod:
    return Pod(name, ns, labels=tuple(sorted((labels or {}).items())), priority=prio,
               requests=res(size) if size else (), node_name=on, start_time=start, **kw)


def cluster(nodes, pods, pdbs=(), groups=(), composites=()) -> ClusterState:
    return ClusterState(nodes=tuple(nodes), pods=tuple(pods), pdbs=tuple(pdbs), pod_groups=tuple(groups),
                        composite_groups=tuple(composites))


def budget(name: str, labels: dict, allowed: int, disrupted=()) -> PodDisruptionBudget:
    return PodDisruptionBudget(name, NS, LabelSelector(tuple(sorted(labels.items()))), allowed, tuple(disrupted))


def group(name: str, prio: int, disruption: str = "single", ns: str = NS, parent: str = "") -> PodGroup:
    return PodGroup(name, ns, priority=prio, disruption=disruption, parent=parent)


def composite(name: str, prio: int = 0, disruption: str = "single", parent: str = "", ns: str = NS,
              **fields) -> CompositePodGroup:
    """A CompositePodGroup as a row gives it: priority, disruption mode and parent (and, by name,
    min_groups or preemption_policy)."""
    return CompositePodGroup(name, ns, parent=parent, priority=prio, disruption=disruption, **fields)


def given_statuses(monkeypatch, codes: dict[str, str]) -> None:
    """The filter phase as the row gives it: each named node with its code, every other node
    UnschedulableAndUnresolvable; no node feasible."""
    def filter_nodes(state, p):
        return {n.name: flt.Status(codes.get(n.name, flt.UNRESOLVABLE)) for n in state.nodes}, set(), frozenset()
    monkeypatch.setattr(preemption, "filter_nodes", filter_nodes)


def given_filters(monkeypatch, plugin) -> None:
    """The row's profile has this one filter plugin: the model's dry run runs it alone (and so
    cannot take its counting shortcut, which supposes NodeResourcesFit)."""
    monkeypatch.setattr(flt, "FILTERS", (plugin,))
    monkeypatch.setattr(flt, "POD_DEPENDENT", (plugin,))
    monkeypatch.setattr(flt, "only_resources_matter", lambda *a: False)


def false_filter(state, p, n, resident):
    """Upstream's test-only FalseFilter: Unschedulable everywhere."""
    return flt.Status(flt.UNSCHEDULABLE, ("FalseFilter",), "FalseFilter")


def true_filter(state, p, n, resident):
    """Upstream's test-only TrueFilter: passes everywhere."""
    return flt.OK


def match_filter(state, p, n, resident):
    """Upstream's test-only MatchFilter: passes where the pod is named as the node."""
    return flt.OK if p.name == n.name else flt.Status(flt.UNSCHEDULABLE, ("MatchFilter",), "MatchFilter")


def names(keys) -> list[str]:
    return sorted(k.split("/", 1)[1] for k in keys)


def groups_on(release: str, gates) -> bool:
    """Whether the model weighs victims as pod groups at ``release`` with these gates (as predict does)."""
    return has(release, LONE_PREEMPTOR_GROUP_VICTIMS, gates)


def verdict(state: ClusterState, preemptor: str, node_name: str, release: str, gates=()) -> preemption.NodeVerdict:
    """The model's dry run on one node (upstream GetVictimsOnNode then SelectVictimsOnNode)."""
    p = state.pod_keyed(f"{NS}/{preemptor}")
    units = units_by_node(state, p.priority, release, T0, gates).get(node_name, []) if groups_on(release, gates) else None
    return select_victims_on_node(state, p, state.node_named(node_name), UPSTREAM, T0,
                                  flt.Status(flt.UNSCHEDULABLE), units)


def dry_run(state: ClusterState, preemptor: str) -> dict[str, tuple[list[str], int]]:
    """The model's dry run on every node (upstream DryRunPreemption over all of them, GenericWorkload
    off, each node Unschedulable in the filters): each candidate node with its victims' names,
    sorted, and its PDB violations."""
    p = state.pod_keyed(f"{NS}/{preemptor}")
    statuses = {n.name: flt.Status(flt.UNSCHEDULABLE) for n in state.nodes}
    return {v.node: (names(v.victims), v.pdb_violations)
            for v in preemption.dry_run(state, p, UPSTREAM, T0, statuses) if v.candidate}
