"""What one Karmada scenario's run found: per checked step, how the bindings differ from the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.formats.bindings import KarmadaScenario
from harness.run.bindings.check import StepVerdict
from harness.run.results import Cause, Recorded, Verdict


@dataclass
class BindingResult:
    scenario: KarmadaScenario
    steps: list[StepVerdict] = field(default_factory=list)
    error: str = ""  # the kit could not run it (set-up refused, the watch failed): no evidence either way
    seconds: float = 0.0
    artifacts: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.error and not any(v.differences for v in self.steps)

    def recorded(self) -> Recorded:
        """The verdict as the data a test records (``harness.run.results``): a Karmada scenario
        passes or fails, on a difference or on what the kit could not do."""
        if self.ok:
            return Recorded(Verdict.PASS)
        return Recorded(Verdict.FAIL, Cause.KIT_ERROR if self.error else Cause.DIFFERENCE)

    def report(self) -> str:
        if self.error:
            return self.error
        lines = [f"{self.scenario.id}: Karmada did not do what the model predicts"]
        for v in self.steps:
            if not v.differences:
                continue
            step = self.scenario.steps[v.index]
            lines.append(f"  step {v.index} ({step.action or 'expect'}):")
            lines += [f"    - {d}" for d in v.differences]
        return "\n".join(lines)


__all__ = ["BindingResult"]
