"""The one scenario-run interface (harness.run.scenario) without a cluster: pods and Karmada bindings
both implement it, steps are acted then checked in order, and a Karmada run keeps its report and
evidence where a pod run does and is judged by the plugin, not by its test."""

from __future__ import annotations

import inspect

import pytest

from conformance.plugin.verdicts import judge_bindings
from harness.errors import KitError
from harness.formats.bindings import CATALOGUE, load_dir
from harness.run.bindings.check import StepVerdict
from harness.run.bindings.result import BindingResult
from harness.run.bindings.scenario_run import BindingRun
from harness.run.pods.result import Result
from harness.run.pods.scenario_run import PodRun
from harness.run.scenario import ScenarioRun


def test_pods_and_bindings_implement_the_one_interface():
    for run in (PodRun, BindingRun):
        assert issubclass(run, ScenarioRun) and not inspect.isabstract(run), run
        assert [p for p in inspect.signature(run.check).parameters] == ["self", "i", "step", "acted"]
    for result in (Result, BindingResult):
        assert all(hasattr(result, a) for a in ("ok", "report")), result


class Steps(ScenarioRun):
    def __init__(self):
        self.result, self.record, self.done = BindingResult(None), None, []

    def act(self, i, step):
        self.done.append(f"act {i}")
        return step * 2

    def check(self, i, step, acted):
        self.done.append(f"check {i} {acted}")
        return None if step == "quiet" else StepVerdict(i, ())

    def archive(self):
        pass

    def run(self):
        self.drive(["a", "quiet", "b"])
        return self.result


def test_each_step_is_acted_then_checked_and_only_a_checked_one_has_a_verdict():
    r = Steps()
    assert r.run().steps == [StepVerdict(0, ()), StepVerdict(2, ())]
    assert r.done == ["act 0", "check 0 aa", "act 1", "check 1 quietquiet", "act 2", "check 2 bb"]


class Plane:
    """What a Karmada run reads of its plane around the scenario: the components' logs."""

    def log_marks(self):
        return {"karmada-scheduler": 3}

    def logs_since(self, marks):
        assert marks == {"karmada-scheduler": 3}
        return {"karmada-scheduler": b"its lines\n"}


@pytest.fixture
def scenario():
    return next(s for s in load_dir(CATALOGUE) if len(s.steps) > 1)


def test_a_karmada_run_the_kit_could_not_finish_keeps_its_error_and_is_judged_so(tmp_path, scenario, monkeypatch):
    def refused(self):
        raise KitError("needs 3 member clusters; the control plane has 2")

    monkeypatch.setattr(BindingRun, "_run", refused)
    result = BindingRun(Plane(), scenario, "r1", tmp_path).run()
    where = tmp_path / "karmada" / scenario.id
    assert not result.ok and result.artifacts == where and result.seconds >= 0
    assert (where / "report.txt").read_text() == "needs 3 member clusters; the control plane has 2\n"
    assert (where / "bindings.txt").read_text() == "\n" and (where / "karmada-scheduler.log").read_bytes() == b"its lines\n"
    recorded: list = []
    with pytest.raises(pytest.fail.Exception) as e:
        judge_bindings(result, recorded)
    assert str(e.value) == f"{scenario.id}: the kit could not run it: needs 3 member clusters; the control plane has 2"
    assert recorded == [("verdict", "FAIL"), ("cause", "kit-error")]  # no evidence against Karmada


def test_a_karmada_difference_is_reported_with_where_its_evidence_is(tmp_path, scenario, monkeypatch):
    def differs(self):
        self.result.steps += [StepVerdict(0, ()), StepVerdict(1, ("web: state waiting, expected scheduled [room]",))]

    monkeypatch.setattr(BindingRun, "_run", differs)
    result = BindingRun(Plane(), scenario, "r1", tmp_path).run()
    report = (f"{scenario.id}: Karmada did not do what the model predicts\n"
              f"  step 1 ({scenario.steps[1].action or 'expect'}):\n"
              "    - web: state waiting, expected scheduled [room]")
    assert result.report() == report
    assert (tmp_path / "karmada" / scenario.id / "report.txt").read_text() == report + "\n"
    recorded: list = []
    with pytest.raises(pytest.fail.Exception) as e:
        judge_bindings(result, recorded)
    assert str(e.value) == report + f"\n  the binding history and this report: {tmp_path / 'karmada' / scenario.id}"
    assert recorded == [("verdict", "FAIL"), ("cause", "difference")]


def test_a_karmada_run_that_passed_keeps_nothing(tmp_path, scenario, monkeypatch):
    monkeypatch.setattr(BindingRun, "_run", lambda self: self.result.steps.append(StepVerdict(0, ())))
    result = BindingRun(Plane(), scenario, "r1", tmp_path).run()
    assert result.ok and result.artifacts is None and not (tmp_path / "karmada").exists()
    recorded: list = []
    judge_bindings(result, recorded)
    assert recorded == [("verdict", "pass")]
