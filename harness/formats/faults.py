"""Faults in the pod format: the fault actions a step may take, and a during: fault at a named
point of what an action starts (docs/faults.md). harness.formats.pods re-exports them."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from harness.formats.common import Duration, Strict

# Faults in the cluster under test: the kit must own the process, so such a scenario runs on a
# local cluster of its own (harness/run/pods/placement.py).
FAULT_ACTIONS = ("restartScheduler", "pauseScheduler", "restartApiserver", "failover")

# Named points of a preemption, as the recorded history shows them: a victim carries
# DisruptionTarget (PreemptionByScheduler), a victim is terminating, the step's pod is
# nominated, a victim is gone (its preemptor not yet bound, unless the scheduler was quicker).
POINTS = ("victimMarked", "victimDeleting", "nominated", "victimGone")


class DuringFault(Strict):
    """A fault injected while the step's action plays out, the moment the history first shows ``at``."""

    restartScheduler: Literal["kill", "graceful"] | None = None
    pauseScheduler: Duration | None = None
    restartApiserver: Literal["kill", "graceful"] | None = None
    failover: Literal["kill"] | None = None
    at: Literal[POINTS]  # type: ignore[valid-type]

    @model_validator(mode="after")
    def one_fault(self) -> DuringFault:
        if len([a for a in FAULT_ACTIONS if getattr(self, a) is not None]) != 1:
            raise ValueError(f"during: takes exactly one of {', '.join(FAULT_ACTIONS)}")
        return self

    @property
    def action(self) -> str:
        return next(a for a in FAULT_ACTIONS if getattr(self, a) is not None)


__all__ = ["DuringFault", "FAULT_ACTIONS", "POINTS"]
