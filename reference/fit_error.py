"""The failure message an attempt leaves on a pod (its PodScheduled=False condition): each reason
with how many nodes gave it, as framework/types.go FitError.Error writes them."""

from __future__ import annotations

from collections import Counter

from . import filter as flt

NOT_HELPFUL = "Preemption is not helpful for scheduling"  # an UnschedulableAndUnresolvable node, in the message


def summary(statuses: list[str]) -> str:
    """Each reason with how many nodes gave it, as FitError.Error writes them: the "count reason"
    strings sorted as strings (so counts lead: "1 x" before "2 a")."""
    counts = Counter(statuses)
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))


def fit_error(statuses: dict[str, flt.Status]) -> str:
    """The filter phase's failure message: "0/N nodes are available: <count> <reason>, ..."."""
    return f"0/{len(statuses)} nodes are available: " + summary([r for s in statuses.values() for r in s.reasons]) + "."


__all__ = ["NOT_HELPFUL", "fit_error", "summary"]
