"""One scenario run, whatever the kind of scenario: the interface pods and Karmada bindings share.

Along Jepsen's seams: ``act`` performs one step on the cluster, ``record`` is the history of
what the cluster did (a watch, from before the first action to the end), ``check`` judges one
step from that history against the model, and ``archive`` keeps the run's evidence where every
kind keeps it (``harness.run.artifacts``: <root>/<group>/<scenario>/). ``run`` sets up, drives the
steps (``drive``), tears down and answers an ``Outcome``; which failures end a run as its error
rather than as an exception stays each kind's own (``pods.scenario_run``, ``bindings.scenario_run``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Protocol, Sequence


class Record(Protocol):
    """A recorded history: read while it is fed, closed at the end."""

    def lines(self) -> list[str]: ...

    def close(self) -> None: ...


class Outcome(Protocol):
    """What a run found: a verdict per checked step, or the error that ended it."""

    steps: list
    error: str
    seconds: float
    artifacts: Path | None  # where ``archive`` kept its evidence, if it did

    @property
    def ok(self) -> bool: ...

    def report(self) -> str: ...


class ScenarioRun(ABC):
    result: Any  # its Outcome, filled in as it goes
    record: Record | None  # from set-up on

    @abstractmethod
    def act(self, i: int, step) -> Any:
        """Perform step ``i`` on the cluster; what its check needs to know of that moment."""

    @abstractmethod
    def check(self, i: int, step, acted) -> Any | None:
        """Step ``i``'s verdict, from the record against the model; None when it has nothing to check."""

    @abstractmethod
    def archive(self) -> None:
        """Keep the run's evidence (a failure's, and what else the run was asked to keep): it
        writes, it never decides."""

    @abstractmethod
    def run(self) -> Outcome: ...

    def drive(self, steps: Sequence) -> None:
        """Every step in order: its action, then its check."""
        for i, step in enumerate(steps):
            verdict = self.check(i, step, self.act(i, step))
            if verdict is not None:
                self.result.steps.append(verdict)


__all__ = ["Outcome", "Record", "ScenarioRun"]
