"""Choosing among preemption candidates: which node the preemptor is nominated to.

Upstream: ``framework/preemption/preemption.go`` ``SelectCandidate`` and
``pickOneNodeForPreemption`` (the criteria, unchanged from 1.34 to 1.37), and the dry run's sample
(``DryRunPreemption``, defaultpreemption ``GetOffsetAndNumCandidates`` /
``calculateNumCandidates``). A candidate's victims are pods: a victim group (reference.victim.Unit)
counts with every one of its pods, on whatever node it runs, at each pod's own priority.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from .objects import ClusterState, Pod
from .victim import start_time

if TYPE_CHECKING:
    from .preemption import NodeVerdict

ScoreFunc = Callable[["NodeVerdict", "tuple[Pod, ...]"], int]
"""One of a preemption plugin's OrderedScoreFuncs (preemption.Interface; preemption.go 1.34:127,
1.35:127, 1.37:62, read by SelectCandidate at 1.34:408, 1.35:442, 1.37:299): a candidate's score
(higher is better) from its verdict and its victim pods, most important first, as upstream's
funcs read them from the candidates' victims map. A plugin's funcs, when it returns some, replace
the default criteria in pickOneNodeForPreemption: compared in order, the next only among the nodes
tied on the one before. DefaultPreemption returns none."""

CRITERIA = (
    "fewest PDB violations",
    "lowest highest-victim priority",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start of the highest-priority victims",
)


def node_score(v: NodeVerdict, pods: dict[str, Pod], now: datetime) -> tuple:
    """Upstream's node-choice criteria as one tuple: higher is better, compared in order. They read
    the victim pods (extenderv1.Victims.Pods) with their own priorities (corev1helpers.PodPriority),
    the first listed being the most important victim's."""
    victims = [pods[k] for k in v.victims]
    top = max(p.priority for p in victims)
    return (
        -v.pdb_violations,
        -victims[0].priority,
        -sum(p.priority + 2**31 for p in victims),
        -len(victims),
        min(start_time(p, now) for p in victims if p.priority == top),
    )


def num_candidates(potential_nodes: int, percentage: int = 10, absolute: int = 100) -> int:
    """How many candidates the dry run looks for before it may stop (the plugins' default args)."""
    return min(max(potential_nodes * percentage // 100, absolute), potential_nodes)


def visited_from(verdicts: list[NodeVerdict], offset: int, wanted: int) -> list[NodeVerdict]:
    """The candidates a dry run that checks one node at a time has in hand when it stops.

    ``verdicts``: the potential nodes' (those the filters found Unschedulable, not unresolvable), in
    the snapshot's node order. The dry run starts at ``offset`` (a random draw below their number,
    new each cycle: GetOffsetAndNumCandidates) and goes round, and stops as soon as it holds
    ``wanted`` candidates (num_candidates) of which at least one violates no PDB (DryRunPreemption's
    checkNode, 1.34/1.35/1.37). It hands back the PDB-respecting candidates first, each kind in the
    order found. Checked in parallel, as the scheduler runs it, the nodes are visited in an order
    the model cannot know: pick_nodes then reasons over every sample this could be."""
    clean: list[NodeVerdict] = []
    violating: list[NodeVerdict] = []
    for i in range(len(verdicts)):
        v = verdicts[(offset + i) % len(verdicts)]
        if not v.candidate:
            continue
        (violating if v.pdb_violations else clean).append(v)
        if clean and len(clean) + len(violating) >= wanted:
            break
    return clean + violating


def pick_nodes(candidates: list[NodeVerdict], state: ClusterState, now: datetime,
               sample: int | None = None, *, score_funcs: tuple[ScoreFunc, ...] | None = None,
               ) -> tuple[frozenset[str], str]:
    """The set of nodes the preemptor may be nominated to, and why.

    With all candidates evaluated, the best by upstream's criteria (ties are a
    set). When the dry run may stop after ``sample`` candidates, visited from a
    random offset in an order the model cannot know, a candidate may win if
    some such sample holds it and nothing better; a sample must hold a
    PDB-respecting candidate when one exists.

    ``score_funcs``: the plugin's OrderedScoreFuncs (ScoreFunc), in place of upstream's criteria;
    None or empty, those criteria.
    """
    if len(candidates) == 1:
        return frozenset({candidates[0].node}), "the only candidate"
    pods = {p.key: p for p in state.pods}
    if score_funcs:
        scores = {v.node: tuple(f(v, tuple(pods[k] for k in v.victims)) for f in score_funcs) for v in candidates}
    else:
        scores = {v.node: node_score(v, pods, now) for v in candidates}
    if sample is not None and len(candidates) > sample:
        any_clean = any(v.pdb_violations == 0 for v in candidates)
        ranked = sorted(scores.values())
        allowed = set()
        for v in candidates:
            if any_clean and v.pdb_violations:
                continue
            not_better = bisect_right(ranked, scores[v.node]) - 1  # others scoring <= it
            if not_better >= sample - 1:
                allowed.add(v.node)
        return frozenset(allowed), (f"any of these: the dry run may stop after {sample} of "
                                    f"{len(candidates)} candidates, visited from a random offset")
    best = max(scores.values())
    winners = [v.node for v in candidates if scores[v.node] == best]
    if len(winners) == 1:
        runner_up = max(sc for n, sc in scores.items() if n != winners[0])
        decided = next(i for i, (a, b) in enumerate(zip(best, runner_up)) if a != b)
        return frozenset(winners), f"the plugin's score function {decided + 1}" if score_funcs else CRITERIA[decided]
    return frozenset(winners), "tie: the scheduler picks any of these"


__all__ = ["CRITERIA", "ScoreFunc", "node_score", "num_candidates", "pick_nodes", "visited_from"]
