"""The model's account of a pod scenario, step by step: what it did, node by node, and whether each
``expect:`` holds. One account for every reader: ``./kit explain`` prints it, the spec site
(harness.site) renders it, so the two cannot tell different stories.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reference import scheduler as sched
from reference.release import DEFAULT_RELEASE
from reference.scheduler import PodView

from harness.formats.pods import Scenario, Step
from harness.run.pods.expectation import (
    EPOCH,
    Mismatch,
    check_expect,
    model_messages,
    model_priorities,
    model_rejections,
    simulate,
)


@dataclass(frozen=True)
class Line:
    """One line of the account; ``depth`` is its indentation below the step (0: the model's log)."""

    depth: int
    text: str


@dataclass(frozen=True)
class StepAccount:
    index: int
    action: str  # the step's action, or "expect" for a step that only looks
    argument: str  # what the action names ("" for expect)
    lines: tuple[Line, ...]
    misses: tuple[Mismatch, ...] | None  # None: the step has no expect; (): met
    pods: dict[str, PodView]  # the model's view of every pod after the step


@dataclass(frozen=True)
class Account:
    build: str
    release: str
    start: tuple[str, ...]  # the initial pods, one phrase each
    steps: tuple[StepAccount, ...]

    @property
    def met(self) -> bool:
        return all(not s.misses for s in self.steps)


def narrate(s: Scenario, build: str, release: str = DEFAULT_RELEASE, now: datetime = EPOCH) -> Account:
    """The model of ``build`` at ``release`` through ``s``. ``now`` is when the run starts: the
    times in the account (a toleration's end) count from it, so a fixed one gives the same text twice."""
    worlds = simulate(s, build, now, release)
    start = tuple(f"{p.name} (priority {p.priority}) on {p.node_name}" for p in worlds[0].state.pods)
    steps = []
    for i, step in enumerate(s.steps):
        before, world = worlds[i], worlds[i + 1]
        lines = [Line(0, text) for text in world.log[len(before.log):]]
        for pr in world.predictions[len(before.predictions):]:
            for v in pr.per_node:
                lines.append(Line(1, f"{pr.pod} / node {v.node}: {'candidate' if v.candidate else 'no'}: {v.reason}"))
                lines += [Line(2, f"spared {key}: {why}") for key, why in v.spared]
                lines += [Line(2, f"exempted {key}: {why}") for key, why in v.exempted]
            if pr.retry_not_before:
                lines.append(Line(1, f"a toleration ends at {pr.retry_not_before.isoformat()}; that is no cluster "
                                     "event, so the retry comes from another event or the 5-minute flush"))
        misses = None
        if step.expect:
            misses = tuple(check_expect(step.expect, sched.view(world), model_rejections(world),
                                        model_priorities(world), model_messages(world)))
        steps.append(StepAccount(i, step.action or "expect", step_argument(step) if step.action else "",
                                 tuple(lines), misses, sched.view(world)))
    return Account(build, release, start, tuple(steps))


def step_argument(step: Step) -> str:
    """What a step's action names: a pod's or class's name, a duration."""
    value = getattr(step, step.action)
    if hasattr(value, "name"):
        return value.name
    return str(value)


def describe_misses(misses: tuple[Mismatch, ...]) -> str:
    return "; ".join(f"{m.pod} {m.field}: wanted {m.expected}, model has {m.actual}" for m in misses)


__all__ = ["Account", "Line", "StepAccount", "describe_misses", "narrate", "step_argument"]
