"""Recorded verdicts: what the last run said of each scenario, read from its JUnit XML.

A conformance run leaves JUnit XML where ``--junitxml`` put it (``artifacts/*.xml`` in CI);
``harness.run.results`` reads it, test names and recorded verdicts included. The site shows a
scenario test's verdict in its own words (``outcome_of``) on the target the test ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from harness.errors import KitError
from harness.run import results
from harness.run.results import Case, Verdict as Verdict_


@dataclass(frozen=True)
class Verdict:
    """One recorded verdict of one scenario on one target."""

    scenario: str
    target: str  # "plugins", "upstream@1.35", "karmada", with "(real kubelets)" or "copy1" where so
    outcome: str  # pass, FAIL, differs, fault, skipped, xfail
    message: str = ""  # the first line of what pytest said, for anything but a pass
    source: str = ""  # where it was recorded: the file, and when


RECORDED = {Verdict_.PASS: "pass", Verdict_.FAIL: "FAIL", Verdict_.DIFFERS: "differs",
            Verdict_.FAULT: "fault", Verdict_.STOPPED: "skipped", Verdict_.UNMET: "skipped"}


def outcome_of(recorded: Verdict_ | None, failed: bool, skipped: bool, xfail_reason: str | None) -> str:
    """A test's outcome in the kit's words: its recorded verdict, else pytest's own outcome."""
    if recorded is not None:
        return RECORDED[recorded]
    if failed:
        return "FAIL"
    if xfail_reason is not None:
        # A fallback for reports written before scenario tests recorded their verdicts (commit
        # 9cb14e0 for pods; Karmada's later, and they never xfail): there an expected difference
        # or a known fault has nothing but its xfail's words to say so.
        if "expected difference" in xfail_reason:
            return "differs"
        if "known scheduler fault" in xfail_reason:
            return "fault"
        return "xfail"
    return "skipped" if skipped else "pass"


def match(name: str, ids: Iterable[str]) -> tuple[str, str] | None:
    """(scenario id, target as shown) of a test name, or None when it is no test of a scenario of ``ids``."""
    found = results.case_id(name)
    if not found.scenario or found.scenario not in set(ids):
        return None
    extra = [x for x in (found.on, found.copy) if x]
    return found.scenario, found.target + (f" ({', '.join(extra)})" if extra else "")


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0][:300] if lines else ""


def verdict_of(case: Case, ids: Iterable[str], source: str) -> Verdict | None:
    found = match(case.name, ids)
    if found is None:
        return None
    outcome = outcome_of(case.verdict, case.failed, case.skipped,
                         case.message if case.outcome is results.Outcome.XFAILED else None)
    return Verdict(found[0], found[1], outcome, "" if outcome == "pass" else _first_line(case.message), source)


def read_file(path: Path, ids: Iterable[str]) -> list[Verdict]:
    try:
        report = results.read(path)
    except KitError as e:
        raise KitError(f"--runs: {e}") from None
    ids = set(ids)
    out = []
    for suite in report.suites:
        source = f"{path.name}" + (f", {suite.timestamp}" if suite.timestamp else "")
        out += [v for v in (verdict_of(c, ids, source) for c in suite.cases) if v is not None]
    return out


def read_runs(folder: Path, ids: Iterable[str]) -> dict[str, list[Verdict]]:
    """The last recorded verdict of each scenario on each target, from the JUnit XML files under
    ``folder`` (a newer file's verdict replaces an older one's), by scenario id."""
    if not folder.is_dir():
        raise KitError(f"--runs {folder}: no such folder (give the folder a conformance run wrote its JUnit XML "
                       "into, e.g. artifacts)")
    files = sorted((p for p in folder.rglob("*.xml") if results.is_junit(p)),
                   key=lambda p: (p.stat().st_mtime, str(p)))
    if not files:
        raise KitError(f"--runs {folder}: no JUnit XML in it (a run writes one with --junitxml=artifacts/run.xml)")
    ids = list(ids)
    latest: dict[tuple[str, str], Verdict] = {}
    for f in files:
        for v in read_file(f, ids):
            latest[v.scenario, v.target] = v
    out: dict[str, list[Verdict]] = {}
    for (sid, _), v in sorted(latest.items()):
        out.setdefault(sid, []).append(v)
    return out


__all__ = ["Verdict", "match", "outcome_of", "read_file", "read_runs", "verdict_of"]
