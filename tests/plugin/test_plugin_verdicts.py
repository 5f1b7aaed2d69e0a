"""A scenario's verdict as a pytest outcome (conformance.plugin.verdicts.judge), and the release matrix."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.plugin.reporting import release_matrix, write_matrix
from conformance.plugin.verdicts import judge


class Scenario(SimpleNamespace):
    def applies_to(self, build: str, release: str) -> bool:
        return build in self.builds and release in self.for_releases


def scenario(sid: str = "preempt-basic", builds=("plugins", "upstream"), releases="") -> Scenario:
    return Scenario(id=sid, builds=list(builds), releases=releases, for_releases={"1.35", "1.37"})


def result(s: Scenario, ok=True, error=None, cancelled=False, known_faults=(), seconds=1.0, unmet="", explained=False):
    return SimpleNamespace(scenario=s, ok=ok, error=error, cancelled=cancelled, known_faults=list(known_faults), unmet=unmet,
                           seconds=seconds, report=lambda: f"{s.id}: the report", explained_by_known_fault=explained)


def batch(*results, build="plugins", release="1.35", wall=90.0):
    return SimpleNamespace(build=build, release=release, wall=wall, results={(r.scenario.id, 0): r for r in results})


def outcome(s, r, **kw):
    try:
        judge(s, batch(r, **kw))
    except (pytest.fail.Exception, pytest.xfail.Exception, pytest.skip.Exception) as e:
        return type(e).__name__, str(e.msg)
    return "passed", ""


def test_a_scenario_as_specified_passes_and_one_that_differs_fails_with_its_report():
    s = scenario()
    assert outcome(s, result(s)) == ("passed", "")
    assert outcome(s, result(s, ok=False)) == ("Failed", "preempt-basic: the report")


def test_a_scenario_of_another_build_is_an_expected_difference_and_showing_it_after_all_is_news():
    s = scenario(builds=["plugins"])
    assert outcome(s, result(s, ok=False), build="upstream") == (
        "XFailed", "expected difference: the upstream build on Kubernetes 1.35 does not do what "
                   "preempt-basic specifies (for plugins)")
    assert outcome(s, result(s), build="upstream") == (
        "Failed", "unexpected pass: preempt-basic specifies behaviour of plugins, and the upstream build "
                  "on Kubernetes 1.35 showed it too")
    # An error is no evidence of a difference.
    assert outcome(s, result(s, ok=False, error="boom"), build="upstream") == ("Failed", "preempt-basic: the report")


def test_a_known_fault_is_named_and_a_stopped_scenario_skipped():
    s = scenario(releases=">=1.35")
    assert outcome(s, result(s, known_faults=["preempted twice"])) == (
        "XFailed", "known scheduler fault, outcome as specified: preempted twice")
    assert outcome(s, result(s, ok=False, cancelled=True)) == (
        "Skipped", "not run to the end: -x stopped the batch at another scenario's failure")


def test_the_release_matrix_has_a_verdict_per_scenario_and_target_and_each_column_s_wall_time(tmp_path):
    a, b, c = scenario("a-scenario-with-a-long-id"), scenario("b", builds=["plugins"]), scenario("c")
    batches = {
        "plugins@1.35": batch(result(a), result(b), result(c, known_faults=["race"]), wall=60),
        "upstream@1.35": batch(result(a, ok=False), result(b, ok=False), build="upstream", wall=30),
        "upstream@1.37": batch(result(a, cancelled=True), result(b), build="upstream", release="1.37", wall=6),
    }
    lines = release_matrix(batches)
    assert lines == [
        "scenario                  plugins@1.35 upstream@1.35 upstream@1.37",
        "a-scenario-with-a-long-id pass         FAIL          stopped      ",
        "b                         pass         differs       FAIL         ",
        "c                         fault        -             -            ",
        "wall time                 1.0 min      0.5 min       0.1 min      ",
    ]
    written = write_matrix(lines, tmp_path / "artifacts")
    assert written == tmp_path / "artifacts" / "release-matrix.txt"
    assert written.read_text() == "\n".join(lines) + "\n"


def test_a_scenario_whose_needs_cannot_be_met_is_skipped_saying_why_never_passed():
    s = scenario()
    why = "Kubernetes 1.34 has no feature gate GenericWorkload (kube-scheduler)"
    with pytest.raises(pytest.skip.Exception, match="not run: Kubernetes 1.34 has no feature gate GenericWorkload"):
        judge(s, batch(result(s, ok=False, unmet=why)))


def test_a_difference_a_known_outcome_changing_fault_explains_is_an_xfail_naming_it(pytester_free=None):
    from harness.run.pods.verdict import Verdict, verdict

    s = scenario()
    assert verdict(result(s, ok=False, known_faults=["two nodes"], explained=True), "plugins", "1.35") is Verdict.FAULT
    assert verdict(result(s, ok=False, known_faults=["two nodes"]), "plugins", "1.35") is Verdict.FAIL
