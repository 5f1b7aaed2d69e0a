"""One reader of a run's results: pytest's JUnit XML as typed records, for every reader of a run
(the kill matrix's tally, the spec site's recorded verdicts, the merge of shards, the figures).

A scenario test records its verdict beside the report's words as JUnit properties (``Recorded``:
the verdict, what a FAIL rests on, the named scheduler faults); ``harness.run.pods.verdict.record``
writes them and ``read`` gives them back typed. Readers take a verdict, a cause or a fault's name
from here, never from a message: a reworded message must not change a kill matrix or a site.

A test's name carries its target and scenario (``case_id``): ``test_scenario[plugins-preempt-basic]``,
``test_scenario[upstream@1.35-copy1-preempt-basic]`` (``--repeat``'s copies),
``test_scenario_on_real_kubelets[plugins-preempt-basic]``, ``test_binding_scenario[karmada-priority-from-class]``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Iterable

from harness.errors import KitError
from harness.targets import split_target


class Verdict(str, Enum):
    """A scenario's verdict on a build and release (``harness.run.pods.verdict.verdict`` is the rule)."""

    PASS = "pass"
    FAIL = "FAIL"  # a difference where none is expected, an error, or an unexpected pass
    FAULT = "fault"  # outcome as specified, but the events show a known scheduler race
    DIFFERS = "differs"  # specified for another build or release, and it does differ: as expected
    STOPPED = "stopped"  # not run to its end (-x, an interrupt): no verdict
    UNMET = "unmet"  # not run: it needs what this run cannot give it (a gate the release lacks)


class Cause(str, Enum):
    """Why a FAIL failed: only a difference is evidence against the build's scheduling."""

    DIFFERENCE = "difference"  # the cluster did otherwise than the model, or an expect: went unmet
    FAULT = "fault"  # a named scheduler fault failed it (its differences may be the fault's own)
    KIT_ERROR = "kit-error"  # the kit could not finish the scenario (set-up refused, cluster unreadable)
    UNEXPECTED_PASS = "unexpected-pass"  # specified for another build or release, and showed it anyway


# The JUnit properties a scenario test carries. A fault's name may hold a comma ("one preemptor,
# victims on two nodes"), so each named fault is a property of its own.
VERDICT, CAUSE, FAULTS, INJECTED = "verdict", "cause", "faults", "injected"


def _enum(kind, value):
    try:
        return kind(value) if value is not None else None
    except ValueError:  # written by a newer kit: no verdict this one can name
        return None


@dataclass(frozen=True)
class Recorded:
    """A scenario test's verdict as data: what the suite writes and every reader reads."""

    verdict: Verdict | None = None  # None: the test records none (the smoke test), or a report older than records
    cause: Cause | None = None  # for a FAIL: what it rests on
    faults: tuple[str, ...] = ()  # the scheduler faults named in its events
    injected: tuple[str, ...] = ()  # the faults the kit injected (a during: fault's point and moment), for people

    def properties(self) -> list[tuple[str, str]]:
        out = [(VERDICT, self.verdict.value)] if self.verdict is not None else []
        out += [(CAUSE, self.cause.value)] if self.cause is not None else []
        return out + [(FAULTS, f) for f in self.faults] + [(INJECTED, f) for f in self.injected]

    @classmethod
    def of(cls, properties: Iterable[tuple[str, object]]) -> Recorded:
        """From (name, value) pairs: a test report's user_properties, or a JUnit test case's."""
        pairs = [(str(k), str(v)) for k, v in properties]
        last = dict(pairs)
        return cls(_enum(Verdict, last.get(VERDICT)), _enum(Cause, last.get(CAUSE)),
                   tuple(v for k, v in pairs if k == FAULTS), tuple(v for k, v in pairs if k == INJECTED))


# --- test ids ---------------------------------------------------------------------------

NAME = re.compile(r"^(?P<test>\w+)\[(?P<params>.+)\]$")
COPY = re.compile(r"^copy\d+$")
# The tests whose verdict is a scenario's own, and what their target says besides the build; a
# Karmada scenario's test has no build parameter: its target is the plane.
SCENARIO_TESTS = {"test_scenario": "", "test_scenario_on_real_kubelets": "real kubelets", "test_binding_scenario": ""}
KARMADA_TEST = "test_binding_scenario"


@dataclass(frozen=True)
class CaseId:
    """What a test's name says: the test, and for a scenario's test its target, scenario and copy."""

    test: str  # the test function
    target: str = ""  # "plugins", "upstream@1.35", "karmada"; "" for a test of no scenario
    scenario: str = ""  # "" for a test of no scenario (the smoke test)
    copy: str = ""  # "copy1" for --repeat's copies, else ""
    on: str = ""  # where the scenario ran besides the target's cluster: "real kubelets", else ""

    @property
    def build(self) -> str:
        return split_target(self.target)[0]

    @property
    def release(self) -> str | None:
        return split_target(self.target)[1]


def case_id(name: str) -> CaseId:
    """The one parser of a test's name. A build or target has no dash, so a scenario test's
    parameters are the target up to the first dash, then ``copyN-`` where --repeat made copies
    (pytest puts each parameter's id in the order they were parametrized), then the scenario."""
    m = NAME.match(name)
    if m is None:
        return CaseId(name)
    test, params = m["test"], m["params"]
    if test not in SCENARIO_TESTS:
        return CaseId(test)
    if test == KARMADA_TEST:
        target, rest = "karmada", params
    else:
        target, _, rest = params.partition("-")
    copy = ""
    head, dash, tail = rest.partition("-")
    if dash and COPY.match(head):
        copy, rest = head, tail
    else:
        base, dash, last = rest.rpartition("-")
        if dash and COPY.match(last):  # a copy's id after the scenario's, as other parametrizations order it
            copy, rest = last, base
    return CaseId(test, target, rest, copy, SCENARIO_TESTS[test])


# --- reading a report ---------------------------------------------------------------------


class Outcome(str, Enum):
    """A test's outcome as pytest writes it into JUnit (an xfail is a skip of type pytest.xfail)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"


@dataclass(frozen=True)
class Case:
    """One test's result."""

    classname: str
    name: str
    outcome: Outcome
    message: str = ""  # what pytest said of a failure, an error or a skip: for people, never for a verdict
    seconds: float = 0.0
    recorded: Recorded = Recorded()

    @property
    def id(self) -> CaseId:
        return case_id(self.name)

    @property
    def failed(self) -> bool:
        """A failure or an error: pytest's own outcome, whatever the verdict recorded."""
        return self.outcome in (Outcome.FAILED, Outcome.ERROR)

    @property
    def skipped(self) -> bool:
        return self.outcome in (Outcome.SKIPPED, Outcome.XFAILED)

    @property
    def verdict(self) -> Verdict | None:
        return self.recorded.verdict

    @property
    def cause(self) -> Cause | None:
        return self.recorded.cause

    @property
    def faults(self) -> tuple[str, ...]:
        return self.recorded.faults


@dataclass(frozen=True)
class Suite:
    name: str
    timestamp: str  # as pytest wrote it (its start), "" where it wrote none
    seconds: float
    cases: tuple[Case, ...]


@dataclass(frozen=True)
class Report:
    """One JUnit file."""

    path: Path
    suites: tuple[Suite, ...]

    @property
    def cases(self) -> list[Case]:
        return [c for s in self.suites for c in s.cases]

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.suites)


def is_junit(path: Path) -> bool:
    """Whether ``path`` is a JUnit report (a testsuites or testsuite root), not just any XML."""
    try:
        return ET.parse(path).getroot().tag in ("testsuites", "testsuite")
    except (ET.ParseError, OSError):
        return False


def _case(el: ET.Element) -> Case:
    failure, error, skipped = el.find("failure"), el.find("error"), el.find("skipped")
    # A test that failed and then errored in its teardown is a failure, as pytest counts it.
    if failure is not None:
        outcome, said = Outcome.FAILED, failure
    elif error is not None:
        outcome, said = Outcome.ERROR, error
    elif skipped is not None:
        outcome = Outcome.XFAILED if skipped.get("type") == "pytest.xfail" else Outcome.SKIPPED
        said = skipped
    else:
        outcome, said = Outcome.PASSED, None
    recorded = Recorded.of((p.get("name", ""), p.get("value", "")) for p in el.iter("property"))
    return Case(el.get("classname", ""), el.get("name", ""), outcome,
                (said.get("message") or "") if said is not None else "", float(el.get("time") or 0), recorded)


def read(path: Path) -> Report:
    """A JUnit file as typed records; a KitError naming the file when it is none."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        raise KitError(f"{path} cannot be read as JUnit XML: {e}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise KitError(f"{path} cannot be read as JUnit XML: its root is <{root.tag}>, not <testsuites>")
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    return Report(Path(path), tuple(Suite(s.get("name", ""), s.get("timestamp", ""), float(s.get("time") or 0),
                                          tuple(_case(c) for c in s.iter("testcase"))) for s in suites))


def write_merged(paths: list[Path], dest: Path) -> None:
    """The JUnit files as one, with the totals of all (what ``./kit merge`` leaves as junit.xml)."""
    from junitparser import JUnitXml

    merged = JUnitXml()
    for p in paths:
        merged += JUnitXml.fromfile(str(p))
    merged.update_statistics()
    merged.write(str(dest))


__all__ = ["CAUSE", "Case", "Cause", "FAULTS", "Outcome", "Recorded", "Report", "SCENARIO_TESTS", "Suite",
           "CaseId", "VERDICT", "Verdict", "is_junit", "read", "case_id", "write_merged"]
