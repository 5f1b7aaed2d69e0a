"""One reader of a run's results (harness.run.results): JUnit as typed records, one parser of test
names, the recorded verdict read back as written; and what its readers (the merge of shards, the
spec site, the kill matrix's tally, the figures) print from a fixture, pinned.

tests/data/results holds two shards' JUnit: one a current run's (recorded verdicts, copies, real
kubelets, a setup error), one an older run's with no recorded verdict (the site then reads its
xfails' words, the only place a verdict is still read from text).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import KitError
from harness.run import results
from harness.run.results import Cause, Outcome, Recorded, Verdict, case_id

DATA = Path(__file__).resolve().parents[1] / "data" / "results"
SHARDS = [DATA / "shard1", DATA / "shard2"]


@pytest.mark.parametrize("name, target, scenario, copy, on", [
    ("test_scenario[plugins-preempt-basic]", "plugins", "preempt-basic", "", ""),
    ("test_scenario[upstream@1.35-preempt-basic]", "upstream@1.35", "preempt-basic", "", ""),
    ("test_scenario[plugins-copy1-preempt-basic]", "plugins", "preempt-basic", "copy1", ""),
    ("test_scenario[plugins-preempt-basic-copy2]", "plugins", "preempt-basic", "copy2", ""),
    ("test_scenario_on_real_kubelets[upstream-preempt-basic]", "upstream", "preempt-basic", "", "real kubelets"),
    ("test_binding_scenario[karmada-priority-from-class]", "karmada", "karmada-priority-from-class", "", ""),
    ("test_high_priority_pod_preempts_low_priority_pod[plugins]", "", "", "", ""),
    ("test_smoke", "", "", "", ""),
])
def test_one_parser_reads_every_test_name(name, target, scenario, copy, on):
    found = case_id(name)
    assert (found.target, found.scenario, found.copy, found.on) == (target, scenario, copy, on)
    assert found.test == name.partition("[")[0]


def test_a_target_names_its_build_and_release():
    assert (case_id("test_scenario[upstream@1.35-a]").build, case_id("test_scenario[upstream@1.35-a]").release) == (
        "upstream", "1.35")
    assert case_id("test_scenario[plugins-a]").release is None


def test_a_recorded_verdict_reads_back_as_written_whatever_its_faults_names_hold():
    written = Recorded(Verdict.FAIL, Cause.FAULT, ("one preemptor, victims on two nodes", "another, with commas"))
    assert written.properties() == [("verdict", "FAIL"), ("cause", "fault"),
                                    ("faults", "one preemptor, victims on two nodes"), ("faults", "another, with commas")]
    assert Recorded.of(written.properties()) == written
    assert Recorded.of([("verdict", "a verdict of a newer kit")]) == Recorded()
    assert Recorded.of([]) == Recorded()


def test_a_report_reads_into_typed_records():
    report = results.read(DATA / "shard1" / "junit.xml")
    (suite,) = report.suites
    assert (suite.timestamp, suite.seconds, len(suite.cases)) == ("2025-06-01T10:00:00.000000+00:00", 321.5, 17)
    by_name = {c.name: c for c in report.cases}
    fail = by_name["test_scenario[upstream@1.35-preempt-basic]"]
    assert (fail.outcome, fail.verdict, fail.cause, fail.seconds, fail.id.release) == (
        Outcome.FAILED, Verdict.FAIL, Cause.DIFFERENCE, 20.0, "1.35")
    assert fail.message == "scenario preempt-basic [upstream]: differs\n  ! victim pending"
    fault = by_name["test_scenario[plugins-pdb-best-effort]"]
    assert (fault.outcome, fault.verdict, fault.faults) == (Outcome.XFAILED, Verdict.FAULT,
                                                             ("one preemptor, victims on two nodes",))
    error = by_name["test_scenario[plugins-preempt-node-latest-start]"]
    assert error.outcome is Outcome.ERROR and error.failed and error.verdict is None
    assert by_name["test_high_priority_pod_preempts_low_priority_pod[plugins]"].outcome is Outcome.PASSED


def test_a_file_that_is_no_junit_is_one_error(tmp_path):
    (tmp_path / "x.xml").write_text("<html/>")
    (tmp_path / "y.xml").write_text("<testsuites>")
    for name in ("x.xml", "y.xml", "z.xml"):
        assert not results.is_junit(tmp_path / name)
        with pytest.raises(KitError, match=f"{name} cannot be read as JUnit XML"):
            results.read(tmp_path / name)


def _expected(name: str, **paths: Path) -> str:
    text = (DATA / name).read_text()
    for k, v in paths.items():
        text = text.replace("{" + k + "}", str(v))
    return text


def test_the_merge_of_the_fixture_prints_what_it_printed_before(tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["merge", *map(str, SHARDS), "--out", str(tmp_path / "merged")]) == 1
    assert out.getvalue() == _expected("merge.txt", data=DATA, out=tmp_path / "merged")


def test_the_site_reads_the_fixture_s_verdicts_as_before():
    """As the site's own reader did, but for two of its misreadings: a copy's target was
    ``plugins-copy1`` (pytest writes the copy's id after the build's) and a real-kubelet test
    (``test_scenario_on_real_kubelets``) was not a scenario's test."""
    from harness.site import model
    from harness.site.runs import read_runs

    verdicts = read_runs(DATA, [s.id for _, s in model.load()])
    got = "".join(f"{v.scenario}\t{v.target}\t{v.outcome}\t{v.message}\t{v.source}\n"
                  for vs in verdicts.values() for v in vs)
    assert got == _expected("site-verdicts.tsv")


def test_the_kill_matrix_tallies_the_fixture_from_recorded_verdicts():
    from harness.mutants.runs import Run, tally

    run = tally(results.read(DATA / "shard1" / "junit.xml"), Run("m", "plugins"))
    assert run.failed == ["preempt-basic", "preempt-basic-with-generic-workload", "preempt-basic-with-generic-workload"]
    # preempt-node-latest-start errored in its set-up (the cluster did not come up): no evidence.
    assert (run.faults, run.kit_errors, run.passed, run.error) == (
        ["pdb-best-effort"], ["podgroup-gang-all-or-nothing", "preempt-node-latest-start"], 4, "")


def test_the_figures_count_the_fixture_as_pytest_does():
    from harness.run.figures import junit_figures

    counts, seconds, started = junit_figures(sorted(DATA.rglob("*.xml")))
    assert counts == {"passed": 5, "failed": 7, "error": 1, "xfailed": 7, "xpassed": 0, "skipped": 4, "deselected": 0}
    assert (seconds, started) == (521.5, "2025-05-01T09:00:00.000000")
