"""The peer suite's verdicts: does the kit agree with each upstream case it expresses?

Two sources, both read as data. On the model: a case translated by a model test is as good as that
test's outcome (pytest runs the named tests once, its JUnit read by ``harness.run.results``); a
case shown by a catalogue scenario is as good as the model meeting that scenario's ``expect:`` on
each build (``check``'s own judgement, handed in by the command). On clusters: the recorded verdicts of conformance runs
(their JUnit files), per target, for the cases a scenario expresses; a model test has no cluster.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Callable, Iterable, Mapping

from harness import REPO
from harness.errors import KitError
from harness.formats.peers import PeerCase
from harness.run import results


class Agreement(str, Enum):
    AGREES = "agrees"
    DISAGREES = "DISAGREES"  # the model test failed, or the model misses the scenario's expect:
    NOT_RUN = "not run"  # no verdict at hand (no run of this scenario on this target)


@dataclass(frozen=True)
class Verdicts:
    """A case id's agreement on the model (per build for a scenario; one for a model test) and on
    each cluster target that ran its scenario."""

    model: Mapping[str, Agreement]  # case id -> the model's agreement
    clusters: Mapping[str, Mapping[str, Agreement]]  # case id -> target -> agreement
    targets: tuple[str, ...]  # every target the cluster runs covered


def _junit_key(node: str) -> tuple[str, str]:
    """A pytest node id as JUnit names it: (classname, name)."""
    file, _, name = node.partition("::")
    return file.removesuffix(".py").replace("/", "."), name


def model_tests(nodes: Iterable[str], root: Path = REPO) -> dict[str, results.Outcome]:
    """Run the named model tests once and give each node id its outcome (a node pytest did not
    report, FAILED: a test that names nothing cannot agree)."""
    nodes = sorted(set(nodes))
    if not nodes:
        return {}
    if not (root / "tests").is_dir():
        raise KitError("peers --verdicts: the model tests ship with a source checkout of the kit, not an installed one")
    with tempfile.TemporaryDirectory(prefix="priority-conformance-peers-") as tmp:
        xml = Path(tmp) / "peers.xml"
        # -p no:cacheprovider: a verdict run leaves nothing in the checkout.
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", "-rN",
                f"--junitxml={xml}", *nodes]
        done = subprocess.run(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not xml.is_file():
            raise KitError(f"peers --verdicts: pytest wrote no report (exit {done.returncode}): "
                           f"{done.stderr.strip()[-400:]}")
        report = results.read(xml)
    seen = {(c.classname, c.name): c.outcome for s in report.suites for c in s.cases}
    return {n: seen.get(_junit_key(n), results.Outcome.FAILED) for n in nodes}


def cluster_runs(junit: Iterable[Path]) -> dict[tuple[str, str], results.Case]:
    """(scenario, target) -> its case in the runs' JUnit files (a later file's case wins; copies
    of a --repeat run count through their first failure)."""
    out: dict[tuple[str, str], results.Case] = {}
    for path in junit:
        if not path.is_file():
            raise KitError(f"peers --junit: {path}: no such file")
        if not results.is_junit(path):
            raise KitError(f"peers --junit: {path}: not a JUnit XML report")
        for suite in results.read(path).suites:
            for case in suite.cases:
                cid = case.id
                if not cid.scenario:
                    continue
                target = cid.target + (f" ({cid.on})" if cid.on else "")
                key = (cid.scenario, target)
                if key in out and cid.copy and _agreement(out[key]) is Agreement.DISAGREES:
                    continue
                out[key] = case
    return out


def _agreement(case: results.Case) -> Agreement:
    """A scenario's recorded verdict as agreement with its spec: as specified (a pass, an expected
    difference, a named scheduler race whose outcome was as specified) agrees; a FAIL differs; a
    run that gave no verdict (stopped, unmet, skipped) says nothing."""
    v = case.verdict
    if v in (results.Verdict.PASS, results.Verdict.DIFFERS, results.Verdict.FAULT):
        return Agreement.AGREES
    if v is results.Verdict.FAIL or (v is None and case.failed):
        return Agreement.DISAGREES
    if v is None and case.outcome is results.Outcome.PASSED:
        return Agreement.AGREES
    return Agreement.NOT_RUN


def verdicts(cases: Iterable[PeerCase], on_model: Callable[[str], Mapping[str, bool]], junit: Iterable[Path] = (),
             root: Path = REPO) -> Verdicts:
    """``on_model``: a catalogue scenario's name -> whether the model meets its expects, per build
    (``check``'s judgement, which the command layer owns)."""
    cases = [c for c in cases if c.status == "expressed"]
    outcomes = model_tests((c.test for c in cases if c.test), root)
    checked: dict[str, Mapping[str, bool]] = {}
    runs = cluster_runs(junit)
    targets = tuple(sorted({t for _, t in runs}))
    model: dict[str, Agreement] = {}
    clusters: dict[str, dict[str, Agreement]] = {}
    for c in cases:
        if c.test:
            model[c.id] = Agreement.AGREES if outcomes[c.test] is results.Outcome.PASSED else Agreement.DISAGREES
            continue
        if c.matches not in checked:
            checked[c.matches] = on_model(c.matches)
        model[c.id] = Agreement.AGREES if all(checked[c.matches].values()) else Agreement.DISAGREES
        clusters[c.id] = {t: _agreement(runs[(c.matches, t)]) for t in targets if (c.matches, t) in runs}
    return Verdicts(model, clusters, targets)


__all__ = ["Agreement", "Verdicts", "cluster_runs", "model_tests", "verdicts"]
