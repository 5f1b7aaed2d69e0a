"""Where a scenario runs: side by side with others on a shared cluster, or on a quiet one.

A scenario shares a cluster unless something outside its namespace could change what
it shows. Two things can: cluster-wide state it changes (a global default class,
declared ``alone: true``), and events from other scenarios. Those events matter when
the outcome rests on the queue's order among equal-priority pods woken together:
the queue orders them by when each was last parked, and every unrelated pod
deletion re-tries and re-parks them, in whatever order it happens to; and when a
parked pod that would fit waits for an event its rejecting plugins register for,
any such event from elsewhere retries it sooner. The model knows when either
decided something, so the author need not.
"""

from __future__ import annotations

from reference.release import DEFAULT_RELEASE
from reference.scheduler import waiting_for_an_event

from harness.run.pods.expectation import simulate
from harness.formats.pods import Scenario


def why_alone(scenario: Scenario, build: str, release: str = DEFAULT_RELEASE) -> str:
    """Why ``scenario`` needs a cluster of its own under ``build``'s semantics; "" when it can share."""
    if scenario.alone:
        return "declared alone"
    if scenario.faults:
        return f"it takes the fault step {scenario.faults[0]}: its scheduler is its own"
    if scenario.cluster_settings():
        return "it needs " + scenario.cluster_settings().describe()
    specified = scenario.semantics(build, release)
    worlds = simulate(scenario, specified[0], release=specified[1])
    decided = worlds[-1].order_decided
    if decided:
        return "the model says " + decided[0].split("] ", 1)[-1]
    # Run outside what it specifies, a scenario is still judged (an expected difference): the
    # release that runs must be quiet enough for its own behaviour to show too.
    for b, r in dict.fromkeys([specified, (build, release)]):
        for i, world in enumerate(worlds if (b, r) == specified else simulate(scenario, b, release=r)):
            waiting = waiting_for_an_event(world)
            if waiting:
                where = "after set-up" if i == 0 else f"after step {i - 1}"
                return (f"the model says {', '.join(waiting)} would fit {where} on {b}@{r} but waits for an "
                        "event that wakes it (or the flush): another scenario's events would retry it sooner")
    return ""


# What a real kubelet decides that kwok only plays: how a victim terminates (its grace period,
# DisruptionTarget, the deletion), and the start times victims are ranked by.
KUBELET_AREAS = ("preemption", "pdb", "eviction")


def on_real_kubelets(scenario: Scenario, workers: int) -> bool:
    """Whether a scenario also runs on the real kubelets of a kind cluster: it needs one (node
    pressure), or it preempts in an area where the kubelet's part shows; and its nodes fit on
    the workers."""
    if len(scenario.nodes) > workers:
        return False
    if scenario.needs_kubelet:
        return True
    preempts = any(step.expect is not None and step.expect.preempted for step in scenario.steps)
    return preempts and "toleration" not in scenario.areas and any(a in KUBELET_AREAS for a in scenario.areas)


__all__ = ["why_alone", "on_real_kubelets"]
