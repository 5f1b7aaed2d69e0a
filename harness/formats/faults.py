"""Faults in the pod format: the fault actions a step may take, and a during: fault at a named
point of what an action starts (docs/faults.md). harness.formats.pods re-exports them."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from harness.formats.common import Duration, Strict

# Faults in the cluster under test: the kit must own the process, so such a scenario runs on a
# local cluster of its own (harness/run/pods/placement.py).
FAULT_ACTIONS = ("restartScheduler", "pauseScheduler", "restartApiserver", "failover", "disconnectScheduler")

# Named points of a preemption, as the recorded history shows them: a victim carries
# DisruptionTarget (PreemptionByScheduler), a victim is terminating, the step's pod is
# nominated, a victim is gone (its preemptor not yet bound, unless the scheduler was quicker).
POINTS = ("victimMarked", "victimDeleting", "nominated", "victimGone")


class FaultFields(Strict):
    """The fault a step (or a during:) injects; a step holds at most one action, a during: one fault."""

    # kill: SIGKILL, as a crash; graceful: SIGTERM. Either way it is started again at once.
    restartScheduler: Literal["kill", "graceful"] | None = None
    # Frozen (SIGSTOP) this long, then let go on (SIGCONT): the cluster goes on meanwhile.
    pauseScheduler: Duration | None = None
    # The API server killed or stopped and started again on the same etcd: every watch breaks.
    restartApiserver: Literal["kill", "graceful"] | None = None
    # Two schedulers with leader election; the leader loses the lease for good: killed (kill), or
    # its Lease taken by another holder while it runs (takeLease: it must stop on its own).
    failover: Literal["kill", "takeLease"] | None = None
    # The scheduler's own connection to the API server cut this long (the API up for everyone
    # else): its watches and writes fail, and it must catch up on what it missed.
    disconnectScheduler: Duration | None = None


class DuringFault(FaultFields):
    """A fault injected while the step's action plays out, the moment the history first shows ``at``."""

    at: Literal[POINTS]  # type: ignore[valid-type]

    @model_validator(mode="after")
    def one_fault(self) -> DuringFault:
        if len([a for a in FAULT_ACTIONS if getattr(self, a) is not None]) != 1:
            raise ValueError(f"during: takes exactly one of {', '.join(FAULT_ACTIONS)}")
        if self.disconnectScheduler is not None and self.at != "victimGone":
            # A preemption whose writes fail is not modelled (docs/faults.md, "Not done yet"); once a
            # victim is gone the only write left is the bind, which is retried after a failure.
            raise ValueError(f"disconnectScheduler as a during: fault only at victimGone, not at {self.at}: the model "
                             "does not know what a preemption whose API writes fail does")
        return self

    @property
    def action(self) -> str:
        return next(a for a in FAULT_ACTIONS if getattr(self, a) is not None)


def fault_errors(steps: list) -> list[str]:
    """What a scenario's steps ask of its faults that the kit cannot do, each naming the step."""
    # Each step's faults, its own and its during:'s.
    faults = [{a for a in FAULT_ACTIONS if getattr(st, a) is not None or (st.during and getattr(st.during, a))}
              for st in steps]
    errors = []
    failovers = [i for i, kinds in enumerate(faults) if "failover" in kinds]
    for i in failovers[1:]:
        errors.append(f"steps[{i}]: one failover per scenario (the leader that lost the lease is not started "
                      "again, so no standby is left)")
    for i, kinds in enumerate(faults):
        if failovers and i > failovers[0] and "restartScheduler" in kinds:
            errors.append(f"steps[{i}].restartScheduler: after a failover the leader is the standby, "
                          "which the kit does not restart")
        if failovers and "disconnectScheduler" in kinds:
            errors.append(f"steps[{i}].disconnectScheduler: not in a scenario with a failover (steps[{failovers[0]}]): "
                          "the kit cuts the first scheduler's connection, and a standby's is its own")
    return errors


__all__ = ["DuringFault", "FAULT_ACTIONS", "FaultFields", "POINTS", "fault_errors"]
