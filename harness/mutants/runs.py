"""The kill matrix's bookkeeping: each catalogue run against a mutant as a ``Run``, tallied from its
JUnit report, kept as ``runs.json`` and summed into each mutant's verdict and the mutation score.
A single run and ``./kit merge`` of shards print through ``summary``, so the two cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.formats.mutants import Mutant
from harness.run.results import Cause, Outcome, Report, Verdict


@dataclass
class Run:
    mutant: str  # "" for the baseline
    build: str
    failed: list[str] = field(default_factory=list)  # tests that showed a difference from the model
    faults: list[str] = field(default_factory=list)  # tests a named scheduler fault failed
    passed: int = 0
    error: str = ""
    seconds: float = 0.0
    log: Path | None = None
    kit_errors: list[str] = field(default_factory=list)  # tests the kit could not finish: no evidence

    @property
    def killed(self) -> bool:
        return bool(self.failed)

    def to_json(self) -> dict:
        return {"mutant": self.mutant, "build": self.build, "failed": self.failed, "faults": self.faults,
                "passed": self.passed, "error": self.error, "seconds": round(self.seconds, 1),
                "log": str(self.log) if self.log else None, "kit_errors": self.kit_errors}

    @classmethod
    def from_json(cls, d: dict) -> Run:
        """A run as a shard wrote it (``to_json``); ``./kit merge`` joins shards' kill matrices."""
        return cls(d["mutant"], d["build"], list(d["failed"]), list(d["faults"]), d["passed"], d["error"],
                   d["seconds"], Path(d["log"]) if d.get("log") else None, list(d.get("kit_errors", [])))

    @property
    def inconclusive(self) -> bool:
        """Only named scheduler faults or kit errors failed: they say nothing about the mutant (a
        race the kit names, such as the 1.34 double preemption, fails a test on a correct build
        too; a PodGroup refused at set-up never asked the scheduler anything)."""
        return bool(self.faults or self.kit_errors) and not self.failed

    @property
    def unjudged(self) -> list[str]:
        """The tests that failed without evidence, each with why."""
        return [f"{t} (named scheduler fault)" for t in self.faults] + [f"{t} (kit error)" for t in self.kit_errors]


def tally(report: Report, run: Run) -> Run:
    """A JUnit report's verdicts into ``run``, read from the verdict each scenario test recorded
    (harness.run.pods.verdict.record): a FAIL resting on a difference is a kill; one a named
    scheduler fault or a kit error failed is not, whatever differences it shows beside them. A
    test with no recorded verdict (the smoke test) that failed its assertion is a kill; one that
    errored (its set-up or teardown raised: a cluster that did not start, a build tool that could
    not be spawned) is a kit error."""
    stopped = 0
    for case in report.cases:
        if case.failed:
            name = case.id.scenario or case.id.test
            kit_error = case.cause is Cause.KIT_ERROR or (case.cause is None and case.outcome is Outcome.ERROR)
            (run.faults if case.cause is Cause.FAULT else run.kit_errors if kit_error else run.failed).append(name)
        elif not case.skipped:
            run.passed += 1
        elif case.verdict is Verdict.STOPPED:
            stopped += 1
    if stopped and not run.failed and not run.faults and not run.kit_errors and not run.error:
        # -x stopped the batch at a result no test reported as failed: the catalogue was not run,
        # so "survived" would be a claim about scenarios never asked.
        run.error = f"{stopped} scenarios stopped by -x with no failing test: the run is void"
    return run


def runs_data(record: dict, baseline: list[Run], runs: dict[str, list[Run]]) -> dict:
    """A kill matrix as data (``runs.json``): the shard's record (``harness.shards.split``), the
    baseline and every mutant's runs, so that ``./kit merge`` can join shards' matrices."""
    return {"shard": record, "baseline": [r.to_json() for r in baseline],
            "runs": {k: [r.to_json() for r in v] for k, v in runs.items()}}


def verdict_of(rs: list[Run]) -> str:
    """A mutant's verdict from its runs: killed (by which scenarios), error, INCONCLUSIVE or SURVIVED."""
    k = [r for r in rs if r.killed]
    unjudged = sorted({s for r in rs for s in r.unjudged})
    return ("killed by " + ", ".join(sorted({s for r in k for s in r.failed}))) if k else (
        "error: " + "; ".join(r.error for r in rs if r.error) if any(r.error for r in rs)
        else "INCONCLUSIVE (failed without evidence: " + ", ".join(unjudged) + ")" if unjudged
        else "SURVIVED")


def verdicts_from_runs(data: dict) -> dict[str, str]:
    """mutant -> its verdict, from a kill matrix's runs.json (``runs_data``): the record, not the
    printed matrix."""
    return {m: verdict_of([Run.from_json(r) for r in rs]) for m, rs in data.get("runs", {}).items() if rs}


def summary(mutants: list[Mutant], runs: dict[str, list[Run]]) -> tuple[list[str], float]:
    lines = [f"{'mutant':<44} {'builds run':<18} verdict"]
    counted = killed = 0
    for m in mutants:
        rs = runs.get(m.id, [])
        k = [r for r in rs if r.killed]
        verdict = verdict_of(rs)
        if m.equivalent:
            verdict += f"  (equivalent: {m.equivalent[:60]})"
        else:
            counted += 1
            killed += bool(k)
        lines.append(f"{m.id:<44} {','.join(r.build for r in rs):<18} {verdict}")
    score = killed / counted if counted else 1.0
    lines.append(f"mutation score: {killed}/{counted} non-equivalent mutants killed ({score:.0%})")
    return lines, score


__all__ = ["Run", "runs_data", "summary", "tally", "verdict_of", "verdicts_from_runs"]
