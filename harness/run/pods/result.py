"""What one pod scenario's run found: per step, the model's prediction beside what the cluster showed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.formats.pods import Scenario
from harness.run.pods.faults import Fault
from harness.run.pods.invariants import Violation
from harness.run.pods.expectation import Mismatch
from reference.scheduler import PodView

# The report of a result that a named scheduler fault failed says so in this line, so a reader of
# a test report (the kill matrix among them) does not take the fault's consequences for evidence.
FAULT_ONLY = "a named scheduler fault failed this scenario: its differences from the model may be the fault's own"


@dataclass
class StepRecord:
    index: int
    action: str
    predicted: dict[str, PodView]
    observed: dict[str, PodView]
    mismatches: list[Mismatch]
    expect_mismatches: list[Mismatch]
    reasons: list[str]
    findings: list[Fault] = field(default_factory=list)  # scheduler faults recognised by name
    # When the step began and its outcome settled (time.time(), as the history's seen_at): where
    # the timeline (run.pods.timeline) draws the model's prediction.
    started_at: float | None = None
    ended_at: float | None = None
    # How long the runner watched the step, and when after the action the model puts its
    # outcome (the last victim's grace over, say): a step that stopped watching before that
    # moment judged too early, and says so.
    waited: float | None = None
    predicted_at: float | None = None
    out_of_time: bool = False
    # When the action was done (time.time()), and the model's course from then: (seconds after
    # the action, the views it predicts from that moment), for the timeline's thin bars.
    acted_at: float | None = None
    course: list[tuple[float, dict[str, PodView]]] = field(default_factory=list)
    fault: str = ""  # what the step's during: fault did (at which recorded version), or why it did not


@dataclass
class Result:
    scenario: Scenario
    build: str
    steps: list[StepRecord] = field(default_factory=list)
    error: str = ""
    # The component logs a KitError named (a fault step's restart that failed): inside a cluster
    # directory that goes with the cluster, so the archive keeps copies.
    error_logs: tuple[Path, ...] = ()
    seconds: float = 0.0
    artifacts: Path | None = None
    cancelled: bool = False  # stopped before its verdict because it was no longer needed
    unmet: str = ""  # a need the run could not meet (a feature gate the release lacks): not run
    gates: str = ""  # the feature gates and runtime-config its cluster ran with, when not the defaults
    timings: list[dict] = field(default_factory=list)  # one record per preemption (run.pods.timings)
    # Rules of the whole history it broke (run.pods.invariants): differences, whatever the looks showed.
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.error and not self.violations and not any(
            s.mismatches or s.expect_mismatches or self._failing(s) for s in self.steps)

    @staticmethod
    def _failing(step: StepRecord) -> list[Fault]:
        return [f for f in step.findings if f.fails]

    @property
    def fault_only(self) -> bool:
        """Failed with a named scheduler fault and nothing wrong in the kit. The fault is a verdict
        against the build; the differences beside it are usually its own consequences (the 1.34
        race preempts on a second node, so pods differ there too), so they are no evidence of
        anything else, such as a seeded bug."""
        # A broken history rule is evidence of its own: no known race breaks one.
        return not self.error and not self.violations and (any(self._failing(s) for s in self.steps)
                                                           or self.explained_by_known_fault)

    @property
    def explained_by_known_fault(self) -> bool:
        """The outcome differs, and a known bug of this build and release that changes outcomes
        (the two-node race before 1.35) shows in the events: its consequences, not the build's
        own difference from the spec. Reported by name (xfail), never as a pass."""
        return (not self.ok and not self.error and not self.violations and not any(self._failing(s) for s in self.steps)
                and any(f.changes_outcome for f in self.known_faults))

    @property
    def known_faults(self) -> list[Fault]:
        """Faults that left the outcome as specified: reported by name, not as a difference."""
        # Each step reads all events so far: one fault shows in every later step.
        return list(dict.fromkeys(f for s in self.steps for f in s.findings if not f.fails))

    def report(self) -> str:
        lines = [f"scenario {self.scenario.id} [{self.build}]: {self.scenario.title}", f"spec: {self.scenario.spec}"]
        if self.gates:
            lines.append(f"feature gates: {self.gates}")
        if self.error:
            lines.append(f"error: {self.error}")
        if self.fault_only:
            lines.append(FAULT_ONLY)
        lines += [f"HISTORY RULE BROKEN: {v}" for v in self.violations]
        for s in self.steps:
            if not (s.mismatches or s.expect_mismatches or self._failing(s)):
                continue
            lines.append(f"step {s.index} ({s.action}):")
            if s.fault:
                lines.append(f"  fault: {s.fault}")
            if s.out_of_time:
                lines.append(f"  OUT OF TIME: the step was watched {s.waited:.1f} s, but the model puts its outcome "
                             f"{s.predicted_at:.1f} s after the action")
            lines += [f"  SCHEDULER FAULT: {f}" for f in s.findings if f.fails]
            lines += [f"  KNOWN SCHEDULER FAULT: {f}" for f in s.findings if not f.fails and f.changes_outcome]
            lines.append(f"  {'pod':<22} {'model predicted':<44} {'cluster showed':<44}")
            for name in sorted(set(s.predicted) | set(s.observed)):
                p, o = s.predicted.get(name), s.observed.get(name)
                mark = "!" if any(m.pod == name for m in s.mismatches) else " "
                lines.append(f"{mark} {name:<22} {_cell(p):<44} {_cell(o):<44}")
            for m in s.expect_mismatches:
                lines.append(f"  expect.{m.field} {m.pod}: wanted {m.expected}, cluster showed {m.actual}")
            if s.reasons:
                lines.append("  model's reasons:")
                lines += [f"    {r}" for r in s.reasons]
        lines += [f"known scheduler fault (outcome as specified): {f}" for f in self.known_faults
                  if not f.changes_outcome]
        if self.artifacts:
            lines.append(f"artifacts: {self.artifacts}")
        return "\n".join(lines)


def _cell(v: PodView | None) -> str:
    return "-" if v is None else str(v)
