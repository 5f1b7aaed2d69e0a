"""One scheduling attempt: Divided replicas with the Aggregated preference, against member room.

Upstream (v1.18.2): pkg/scheduler/core (common.go:assignWorkloadReplicas,
assignment.go:assignByDynamicStrategy, division_algorithm.go) and
pkg/estimator/client/general.go. The kit runs karmada-scheduler with
SchedulingOvercommitProtection on and CustomizedClusterResourceModeling off, so
a member's room is its allocatable CPU minus what every binding placed so far
holds there, counted cluster-wide (no per-node fitting), and a binding placed
a moment ago already counts. No binding is ever preempted: v1.18.2 has no
binding preemption.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Iterable, Mapping

from .objects import Binding, Member

Assignment = tuple[tuple[str, int], ...]  # (member, replicas), by member name, no zeros


@dataclass(frozen=True)
class Placed:
    assignments: frozenset[Assignment]  # every spec.clusters the scheduler may write
    reason: str


@dataclass(frozen=True)
class DoesNotFit:
    """Scheduled=False/Unschedulable; a placed binding keeps its old clusters."""

    reason: str

    def __bool__(self) -> bool:
        return False


def free_replicas(members: Iterable[Member], bindings: Iterable[Binding], cpu_milli: int) -> dict[str, int]:
    """Per member, how many more replicas of ``cpu_milli`` fit: floor(free CPU / request), never below 0."""
    bindings = list(bindings)
    out = {}
    for m in members:
        used = sum(n * b.cpu_milli for b in bindings for name, n in b.clusters if name == m.name)
        out[m.name] = max(0, (m.cpu_milli - used) // cpu_milli)
    return out


def webster(seats: int, votes: Mapping[str, int], names_ascending: bool) -> dict[str, int]:
    """Seats handed out one at a time to the highest votes/(2*seats+1) (Webster's method).

    Karmada breaks an exact tie by fewer seats, then by name in a direction
    derived from the binding's UID: either direction may happen, so callers try both.
    """
    got = {n: 0 for n in votes}

    def ahead(a: str, b: str) -> bool:
        # Same float64 division as upstream, so equal quotients tie exactly as they do there.
        qa, qb = votes[a] / (2 * got[a] + 1), votes[b] / (2 * got[b] + 1)
        if qa != qb:
            return qa > qb
        if got[a] != got[b]:
            return got[a] < got[b]
        return a < b if names_ascending else a > b

    for _ in range(seats):
        best = None
        for n in votes:
            if best is None or ahead(n, best):
                best = n
        got[best] += 1
    return got


def _spread(target: int, prefix: list[tuple[str, int]], old: Mapping[str, int]) -> frozenset[Assignment]:
    """The clusters after ``target`` replicas are split over ``prefix`` by their weight and added to ``old``."""
    out = set()
    for ascending in (True, False):
        total = dict(old)
        for name, n in webster(target, dict(prefix), ascending).items():
            total[name] = total.get(name, 0) + n
        out.add(tuple(sorted((m, n) for m, n in total.items() if n > 0)))
    return frozenset(out)


def _fill_order(b: Binding, free: Mapping[str, int]) -> list[tuple[str, int]]:
    """Members in the order Aggregated fills them: the binding's own clusters first, then most room.

    Among equals the candidates' own order decides (score, then room including
    the binding's own replicas, then name), which the stable sort keeps.
    """
    own = dict(b.clusters)
    prior = sorted((m for m in free if own.get(m, 0) > 0), key=lambda m: (-free[m], -(free[m] + own[m]), m))
    rest = sorted((m for m in free if own.get(m, 0) == 0), key=lambda m: (-free[m], m))
    return [(m, free[m]) for m in prior + rest]


def _prefix(order: list[tuple[str, int]], target: int) -> list[tuple[str, int]]:
    """The fewest members from the front of ``order`` whose room adds up to ``target``."""
    total = 0
    for i, (_, n) in enumerate(order):
        total += n
        if total >= target:
            return order[: i + 1]
    return order


def _scale_down(b: Binding) -> Placed:
    # The old placement is the weight: the replicas that stay are split over the
    # members holding most, in proportion. Old clusters tied on replicas come in
    # spec order, which a map walk may have shuffled, so every tie order is tried.
    options: set[Assignment] = set()
    for order in permutations(b.clusters):
        if all(order[i][1] >= order[i + 1][1] for i in range(len(order) - 1)):
            options |= _spread(b.replicas, _prefix(list(order), b.replicas), {})
    return Placed(frozenset(options), f"scaled down from {b.assigned} to {b.replicas} replicas over the members "
                                      f"it held ({_show(dict(b.clusters))}), in proportion")


def attempt(b: Binding, members: Iterable[Member], bindings: Iterable[Binding]) -> Placed | DoesNotFit:
    """Try ``b`` once; ``bindings`` are all bindings as they stand, ``b``'s own placement included."""
    if b.assigned > b.replicas:
        return _scale_down(b)
    free = free_replicas(members, bindings, b.cpu_milli)
    target = b.replicas - b.assigned
    more = f"{target} more" if b.assigned else str(target)
    replicas = "replica" if target == 1 else "replicas"
    if sum(free.values()) < target:
        held = f"; it keeps its {b.assigned} replicas ({_show(dict(b.clusters))})" if b.assigned else ""
        return DoesNotFit(f"Unschedulable: members have room for {sum(free.values())} of {more} {replicas} of "
                          f"{b.cpu_milli}m ({_show(free)}); bindings are never preempted{held}")
    prefix = _prefix(_fill_order(b, free), target)
    options = _spread(target, prefix, dict(b.clusters))
    return Placed(options, f"Aggregated: {more} {replicas} of {b.cpu_milli}m on the fewest members, "
                           f"{'its own first, then ' if b.assigned else ''}most room first "
                           f"(room {_show(free)}): {', '.join(m for m, _ in prefix)}")


def _show(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{m}: {n}" for m, n in sorted(counts.items())) or "none"
