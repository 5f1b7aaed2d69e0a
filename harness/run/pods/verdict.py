"""One verdict rule for a pod scenario's result on a build and release.

The test layer, the batch (-x), the release matrix and the explorer all ask it, so a result
means the same everywhere: a scenario specified for another build or release is expected to
differ, and showing the behaviour after all is news.
"""

from __future__ import annotations

from harness.run.pods.result import Result
# The verdict's vocabulary is every scenario kind's and every reader's (harness.run.results); the
# rule that gives a pod scenario's result its verdict is this module's.
from harness.run.results import Cause, Recorded, Verdict
from reference.release import DEFAULT_RELEASE


def verdict(result: Result, build: str, release: str = DEFAULT_RELEASE) -> Verdict:
    if result.cancelled:
        return Verdict.STOPPED
    if result.unmet:
        return Verdict.UNMET
    if not result.scenario.applies_to(build, release):
        # An error is no evidence of a difference.
        return Verdict.FAIL if (result.ok or result.error) else Verdict.DIFFERS
    if not result.ok:
        return Verdict.FAULT if result.explained_by_known_fault else Verdict.FAIL
    return Verdict.FAULT if result.known_faults else Verdict.PASS


def cause(result: Result, build: str, release: str = DEFAULT_RELEASE) -> Cause | None:
    """What a FAIL verdict rests on; None for any other verdict."""
    if verdict(result, build, release) is not Verdict.FAIL:
        return None
    if result.fault_only:
        return Cause.FAULT
    if not result.scenario.applies_to(build, release) and result.ok:
        return Cause.UNEXPECTED_PASS
    differs = bool(result.violations) or any(s.mismatches or s.expect_mismatches for s in result.steps)
    return Cause.DIFFERENCE if differs or not result.error else Cause.KIT_ERROR


def record(result: Result, build: str, release: str = DEFAULT_RELEASE) -> list[tuple[str, str]]:
    """The verdict as the JUnit properties a scenario test carries (``harness.run.results`` reads
    them): the verdict, what a FAIL rests on, the named faults."""
    names = tuple(sorted({f.name for s in result.steps for f in s.findings}))
    injected = tuple(f"steps[{s.index}]: {s.fault}" for s in result.steps if s.fault)
    return Recorded(verdict(result, build, release), cause(result, build, release), names, injected).properties()


def failed(result: Result, build: str, release: str = DEFAULT_RELEASE) -> bool:
    """A verdict against the build."""
    return verdict(result, build, release) is Verdict.FAIL


NOT_RUN = "-"  # a matrix cell for a scenario the target did not run


def matrix_lines(targets: list[str], cells: dict[str, dict[str, str]], walls: dict[str, float]) -> list[str]:
    """The release matrix as text: scenario x target verdicts (``cells[scenario][target]``, a
    Verdict's value), then each target's wall time. One renderer for a run and for a merge of
    shards' matrices (``harness.shards.merge``), so both print the same table."""
    ids = sorted(cells)
    width = max([len(i) for i in ids] + [8])
    cols = [max(len(t), 7) for t in targets]
    lines = [" ".join([f"{'scenario':<{width}}"] + [f"{t:<{w}}" for t, w in zip(targets, cols)])]
    for sid in ids:
        row = [cells[sid].get(t, NOT_RUN) for t in targets]
        lines.append(" ".join([f"{sid:<{width}}"] + [f"{c:<{w}}" for c, w in zip(row, cols)]))
    lines.append(" ".join([f"{'wall time':<{width}}"] + [f"{walls.get(t, 0.0) / 60:.1f} min".ljust(w)
                                                          for t, w in zip(targets, cols)]))
    return lines + _prerelease_notes(targets)


def _prerelease_notes(targets: list[str]) -> list[str]:
    """A line under the table for each column built from a pre-release tag: a preview, not a release."""
    from harness.build import pins
    from harness.targets import split_target

    out = []
    for release in dict.fromkeys(split_target(t)[1] for t in targets):
        tag = pins.prerelease(release) if release and release in pins.releases() else ""
        if tag:
            out.append(f"pre-release: {release} is Kubernetes {tag} (a preview of the next release, not a release)")
    return out
