"""Whether a wave ended as the model says it must, so a fast wrong build is not reported as fast.

The workload makes the model's answer the same for every build: each node holds one low-priority
pod in its one slot, each preemptor needs one slot, so each preemptor preempts exactly one pod of
lower priority and ends running where that pod was; nothing else is deleted, and no node ever
holds more than its slot. ``problems`` says, in words, every way a wave missed that; none means
the row is correct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from harness.run.pods.timings import PreemptionTiming


@dataclass(frozen=True)
class PodFact:
    """One pod as a wave's history leaves it."""

    name: str
    priority: int
    node: str  # where it is (or was) bound; "" if never
    running: bool  # exists, bound, phase Running, not being deleted
    deleting: bool  # its deletion asked for, not gone yet: it still holds its slot
    gone: bool  # deleted (or terminal) by the end
    slots: int  # the slots it requests


def problems(preemptors: Iterable[str], facts: dict[str, PodFact], timings: Iterable[PreemptionTiming],
             slots_per_node: int = 1) -> list[str]:
    """Every way the wave's outcome differs from the model's, one sentence each; [] if none."""
    preemptors = list(preemptors)
    timings = list(timings)
    out: list[str] = []
    not_running = [p for p in preemptors if not (facts.get(p) and facts[p].running)]
    if not_running:
        out.append(f"{len(not_running)} of {len(preemptors)} preemptors not running at the end: "
                   + _some(not_running))
    by_preemptor = {t.preemptor: t for t in timings}
    for p in preemptors:
        t = by_preemptor.get(p)
        if t is None:
            if facts.get(p) and facts[p].running:
                out.append(f"{p} runs without having preempted anyone, on a cluster with no free slot")
            continue
        if len(t.victims) != 1:
            out.append(f"{p} preempted {len(t.victims)} pods ({', '.join(t.victims)}); one frees the slot it needs")
        mine = facts.get(p)
        for v in t.victims:
            victim = facts.get(v)
            if victim is None:
                out.append(f"{p}'s victim {v} was never seen")
                continue
            if mine is not None and victim.priority >= mine.priority:
                out.append(f"{p} (priority {mine.priority}) preempted {v} of priority {victim.priority}")
            if not (victim.gone or victim.deleting):
                out.append(f"{p}'s victim {v} was not deleted")
        if t.bound is not None and t.victims_gone is not None and t.bound < t.victims_gone:
            out.append(f"{p} was bound {t.victims_gone - t.bound:.3f} s before its victims were gone")
    named: dict[str, list[str]] = {}
    for t in timings:
        for v in t.victims:
            named.setdefault(v, []).append(t.preemptor)
    twice = sorted(v for v, who in named.items() if len(who) > 1)
    if twice:
        out.append(f"{len(twice)} pods preempted by more than one preemptor: "
                   + _some(f"{v} by {', '.join(named[v])}" for v in twice))
    stray = sorted(f.name for f in facts.values()
                   if (f.gone or f.deleting) and f.name not in named and f.name not in preemptors)
    if stray:
        out.append(f"{len(stray)} pods deleted that no preemption names: {_some(stray)}")
    load: dict[str, int] = {}
    for f in facts.values():
        if f.node and not f.gone:  # a pod being deleted still holds its slot
            load[f.node] = load.get(f.node, 0) + f.slots
    over = sorted(n for n, used in load.items() if used > slots_per_node)
    if over:
        out.append(f"{len(over)} nodes overcommitted at the end (more than {slots_per_node} slot in use): {_some(over)}")
    return out


def _some(names: Iterable[str], shown: int = 5) -> str:
    names = list(names)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more
