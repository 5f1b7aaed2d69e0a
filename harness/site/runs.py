"""Recorded verdicts: what the last run said of each scenario, read from its JUnit XML.

A conformance run leaves JUnit XML where ``--junitxml`` put it (``artifacts/*.xml`` in CI). A
scenario test's name carries its target and scenario id: ``test_scenario[plugins-preempt-basic]``,
``test_scenario[upstream@1.35-preempt-basic]``, ``test_binding_scenario[karmada-priority-from-class]``.
Ids contain dashes, so a name is matched against the known ids rather than split.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from harness.errors import KitError
from harness.run.junit import is_junit
from harness.run.pods.verdict import VERDICT, Verdict as Verdict_

NAME = re.compile(r"^(?P<test>\w+)\[(?P<params>.+)\]$")
# The tests whose verdict is a scenario's own (others, such as the smoke test, are not shown).
SCENARIO_TESTS = {"test_scenario": "", "test_binding_scenario": "", "test_real_scenario": "real kubelets"}


@dataclass(frozen=True)
class Verdict:
    """One recorded verdict of one scenario on one target."""

    scenario: str
    target: str  # "plugins", "upstream@1.35", "karmada", with "(real kubelets)" or "copy1" where so
    outcome: str  # pass, FAIL, differs, fault, skipped, xfail
    message: str = ""  # the first line of what pytest said, for anything but a pass
    source: str = ""  # where it was recorded: the file, and when


# A pod scenario test records its verdict as a JUnit property (harness.run.pods.verdict.record): read
# as data where it is there; only older reports and Karmada's tests fall back to outcome_of.
RECORDED = {Verdict_.PASS.value: "pass", Verdict_.FAIL.value: "FAIL", Verdict_.DIFFERS.value: "differs",
            Verdict_.FAULT.value: "fault", Verdict_.STOPPED.value: "skipped", Verdict_.UNMET.value: "skipped"}


def outcome_of(failed: bool, skipped: bool, xfail_reason: str | None, message: str = "") -> str:
    """A test's outcome in the kit's words from pytest's own, for a report without a recorded
    verdict (conformance/plugin/verdicts.py makes the xfails)."""
    if failed:
        return "FAIL"
    if xfail_reason is not None:
        if "expected difference" in xfail_reason:
            return "differs"
        if "known scheduler fault" in xfail_reason:
            return "fault"
        return "xfail"
    return "skipped" if skipped else "pass"


def match(name: str, ids: Iterable[str]) -> tuple[str, str] | None:
    """(scenario id, target) of a test name, or None when it is no scenario's test."""
    m = NAME.match(name)
    if m is None or m["test"] not in SCENARIO_TESTS:
        return None
    params = m["params"]
    candidates = [(params, "")]
    if (copied := re.match(r"^(.*)-(copy\d+)$", params)) is not None:  # --repeat's copies
        candidates.append((copied[1], copied[2]))
    for sid in sorted(ids, key=len, reverse=True):  # the longest id first: one may end another
        for p, copy in candidates:
            if p == sid or p.endswith("-" + sid):
                target = p[: -len(sid)].rstrip("-") or ("karmada" if m["test"] == "test_binding_scenario" else "")
                extra = [x for x in (SCENARIO_TESTS[m["test"]], copy) if x]
                return sid, target + (f" ({', '.join(extra)})" if extra else "")
    return None


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0][:300] if lines else ""


def read_file(path: Path, ids: Iterable[str]) -> list[Verdict]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        raise KitError(f"--runs: {path} cannot be read as JUnit XML: {e}") from None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    ids = list(ids)
    out = []
    for suite in suites:
        source = f"{path.name}" + (f", {suite.get('timestamp')}" if suite.get("timestamp") else "")
        for case in suite.iter("testcase"):
            found = match(case.get("name", ""), ids)
            if found is None:
                continue
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            skip = case.find("skipped")
            xfail = skip.get("message", "") if skip is not None and skip.get("type") == "pytest.xfail" else None
            message = (bad.get("message") if bad is not None else skip.get("message") if skip is not None else "")
            recorded = {q.get("name"): q.get("value") for q in case.iter("property")}.get(VERDICT)
            outcome = (RECORDED.get(recorded) if recorded is not None else None) or outcome_of(
                bad is not None, skip is not None, xfail)
            out.append(Verdict(found[0], found[1], outcome, "" if outcome == "pass" else _first_line(message), source))
    return out


def read_runs(folder: Path, ids: Iterable[str]) -> dict[str, list[Verdict]]:
    """The last recorded verdict of each scenario on each target, from the JUnit XML files under
    ``folder`` (a newer file's verdict replaces an older one's), by scenario id."""
    if not folder.is_dir():
        raise KitError(f"--runs {folder}: no such folder (give the folder a conformance run wrote its JUnit XML "
                       "into, e.g. artifacts)")
    files = sorted((p for p in folder.rglob("*.xml") if is_junit(p)), key=lambda p: (p.stat().st_mtime, str(p)))
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


__all__ = ["Verdict", "match", "outcome_of", "read_file", "read_runs"]
