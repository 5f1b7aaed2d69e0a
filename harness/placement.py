"""Where a scenario runs: side by side with others on a shared cluster, or on a quiet one.

A scenario shares a cluster unless something outside its namespace could change what
it shows. Two things can: cluster-wide state it changes (a global default class,
declared ``alone: true``), and events from other scenarios. Those events matter when
the outcome rests on the queue's order among equal-priority pods woken together:
the queue orders them by when each was last parked, and every unrelated pod
deletion re-tries and re-parks them, in whatever order it happens to. The model
knows when that order decided something, so the author need not.
"""

from __future__ import annotations

from reference.release import PINNED

from .expectation import simulate
from .scenario import Scenario


def why_alone(scenario: Scenario, build: str, release: str = PINNED) -> str:
    """Why ``scenario`` needs a cluster of its own under ``build``'s semantics; "" when it can share."""
    if scenario.alone:
        return "declared alone"
    build, release = scenario.semantics(build, release)
    decided = simulate(scenario, build, release=release)[-1].order_decided
    if decided:
        return "the model says " + decided[0].split("] ", 1)[-1]
    return ""


__all__ = ["why_alone"]
