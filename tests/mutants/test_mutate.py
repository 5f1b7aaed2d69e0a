"""The mutant catalogue and the kill-matrix bookkeeping, without building or running anything."""

import pytest

from harness.build import mutants as mutant_build
from harness.errors import KitError
from harness.formats import mutants as mutant_files
from harness.mutants.runs import Run, summary, tally
from harness.run import results
from harness.targets import BUILDS

MUTANTS = mutant_files.load_all()


def _report(tmp_path, xml: str) -> results.Report:
    path = tmp_path / "run.xml"
    path.write_text(xml)
    return results.read(path)


def test_the_catalogue_loads_and_covers_both_builds():
    assert len(MUTANTS) >= 20
    assert len({m.id for m in MUTANTS}) == len(MUTANTS)
    for build in BUILDS:
        assert any(build in m.builds for m in MUTANTS)
    for m in MUTANTS:
        # A mutant of the plugin's own code cannot change the upstream build.
        if m.module == "sigs.k8s.io/scheduler-plugins":
            assert m.builds == ["plugins"], m.id


def test_a_malformed_mutant_names_its_file_and_field(tmp_path):
    bad = tmp_path / "x.yaml"
    bad.write_text("id: x\nmodule: k8s.io/other\nfile: a.go\noriginal: a\nreplacement: b\nrule: r\nspec: s\nbuilds: [plugins]\n")
    with pytest.raises(KitError, match=r"x.yaml: module: "):
        mutant_files.load(bad)
    same = tmp_path / "y.yaml"
    same.write_text("id: y\nmodule: k8s.io/kubernetes\nfile: a.go\noriginal: a\nreplacement: a\nrule: r\nrules: [x]\nspec: s\nbuilds: [plugins]\n")
    with pytest.raises(KitError, match="y.yaml: replacement: the same as original"):
        mutant_files.load(same)


def test_a_patch_applies_only_where_its_text_is_found_exactly_once():
    m = MUTANTS[0].model_copy(update={"original": "x > 0", "replacement": "x >= 0"})
    assert mutant_build.patched(m, "if x > 0 {") == "if x >= 0 {"
    for text in ("if y > 0 {", "x > 0 && x > 0"):
        with pytest.raises(KitError, match="exactly once"):
            mutant_build.patched(m, text)


def test_a_mutant_builds_from_a_private_copy_and_leaves_the_pinned_source_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIORITYKIT_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "mod" / "sigs.k8s.io" / "scheduler-plugins@v0.34.7"
    src = root / "pkg" / "f.go"
    other = root / "pkg" / "g.go"
    src.parent.mkdir(parents=True)
    src.write_text("package p\nconst a = 1\n")
    other.write_text("package p\n")
    m = next(x for x in MUTANTS if x.module == "sigs.k8s.io/scheduler-plugins").model_copy(
        update={"original": "a = 1", "replacement": "a = 2", "file": "pkg/f.go"})
    monkeypatch.setattr(mutant_build, "source_file", lambda m, wrapper: src)
    wrapper = "1.34/scheduler-plugins"
    wrapper_dir, key = mutant_build.source_tree(m, "plugins", wrapper)
    tree = wrapper_dir.parent / "module"
    assert (tree / "pkg" / "f.go").read_text() == "package p\nconst a = 2\n"
    assert src.read_text() == "package p\nconst a = 1\n"  # the pinned source is untouched
    assert (tree / "pkg" / "g.go").stat().st_ino == other.stat().st_ino  # the rest is linked, not copied
    gomod = (wrapper_dir / "go.mod").read_text()
    assert gomod.rstrip().endswith(f"replace sigs.k8s.io/scheduler-plugins => {tree}")
    assert gomod.count("sigs.k8s.io/scheduler-plugins =>") == 1
    assert mutant_build.source_tree(m, "plugins", wrapper)[1] == key  # the same patch, the same cache key


def test_failed_scenarios_are_read_from_the_junit_report(tmp_path):
    report = _report(tmp_path,
        '<testsuites><testsuite>'
        '<testcase name="test_scenario[plugins-preempt-basic]"><failure message="x"/></testcase>'
        '<testcase name="test_scenario[upstream-pdb-best-effort]"/>'
        '<testcase name="test_high_priority_pod_preempts_low_priority_pod[plugins]"><failure/></testcase>'
        '</testsuite></testsuites>')
    run = tally(report, Run("m", "plugins"))
    assert run.failed == ["preempt-basic", "test_high_priority_pod_preempts_low_priority_pod"] and run.passed == 1


def _props(**kv) -> str:
    return "<properties>" + "".join(f'<property name="{k}" value="{v}"/>' for k, v in kv.items()) + "</properties>"


def test_a_failure_on_a_named_scheduler_fault_alone_is_no_kill(tmp_path):
    """Issue 21: the 1.34 double-preemption race fails a test on a correct build too; such a failure
    says nothing about the mutant, and a run with nothing else is inconclusive. The verdict is read
    from the properties the suite recorded, whatever the report's words."""
    report = _report(tmp_path,
        '<testsuites><testsuite>'
        f'<testcase name="test_scenario[plugins-pdb-best-effort]">{_props(verdict="FAIL", cause="fault")}'
        '<failure message="x">reworded, whatever it says</failure></testcase>'
        '<testcase name="test_scenario[plugins-preempt-basic]"/>'
        '</testsuite></testsuites>')
    run = tally(report, Run("m", "plugins"))
    assert run.faults == ["pdb-best-effort"] and run.failed == [] and run.passed == 1
    assert run.inconclusive and not run.killed
    report = _report(tmp_path,
        '<testsuites><testsuite>'
        f'<testcase name="test_scenario[plugins-preempt-basic]">{_props(verdict="FAIL", cause="difference")}'
        '<failure message="x">! victim pending</failure></testcase>'
        '</testsuite></testsuites>')
    run = tally(report, run)
    assert run.killed and not run.inconclusive
    lines, score = summary([m for m in MUTANTS if m.id == MUTANTS[0].id], {MUTANTS[0].id: [
        Run(MUTANTS[0].id, "plugins", faults=["pdb-best-effort"])]})
    assert "INCONCLUSIVE" in lines[1] and score == 0.0


def test_a_kit_error_is_no_kill(tmp_path):
    """Two pod-group mutants were reported killed by a PodGroup the API server refused at set-up
    (its class not yet visible to admission): the scheduler was never asked anything."""
    report = _report(tmp_path,
        '<testsuites><testsuite>'
        f'<testcase name="test_scenario[upstream-podgroup-gang-all-or-nothing]">{_props(verdict="FAIL", cause="kit-error")}'
        '<failure message="x">error: API error 403</failure></testcase>'
        '</testsuite></testsuites>')
    run = tally(report, Run("m", "upstream"))
    assert run.kit_errors == ["podgroup-gang-all-or-nothing"] and not run.killed and run.inconclusive
    assert run.unjudged == ["podgroup-gang-all-or-nothing (kit error)"]
    lines, _ = summary([MUTANTS[0]], {MUTANTS[0].id: [run]})
    assert "INCONCLUSIVE (failed without evidence: podgroup-gang-all-or-nothing (kit error))" in lines[1]
    assert Run.from_json(run.to_json()).kit_errors == run.kit_errors


def test_a_results_verdict_record_says_what_a_fail_rests_on():
    from harness import SCENARIOS
    from harness.formats.pods import load
    from harness.run.pods.faults import Fault
    from harness.run.pods.expectation import Mismatch
    from harness.run.pods.result import Result, StepRecord
    from harness.run.pods.verdict import record

    s = load(SCENARIOS / "preempt-basic.yaml")
    differs = Result(s, "plugins", [StepRecord(0, "createPod", {}, {}, [Mismatch("p", "phase", "running", "pending")],
                                               [], [])])
    assert record(differs, "plugins") == [("verdict", "FAIL"), ("cause", "difference")]
    assert record(Result(s, "plugins", [], error="API error 403: forbidden"), "plugins") == [
        ("verdict", "FAIL"), ("cause", "kit-error")]
    race = Fault("one preemptor, victims on two nodes", "evidence", True)
    assert record(Result(s, "plugins", [StepRecord(0, "createPod", {}, {}, [], [], [], [race])]), "plugins") == [
        ("verdict", "FAIL"), ("cause", "fault"), ("faults", "one preemptor, victims on two nodes")]
    assert record(Result(s, "plugins", []), "plugins") == [("verdict", "pass")]


def test_a_report_says_when_only_a_named_fault_failed_it():
    from harness import SCENARIOS
    from harness.formats.pods import load
    from harness.run.pods.faults import Fault
    from harness.run.pods.expectation import Mismatch
    from harness.run.pods.result import FAULT_ONLY, Result, StepRecord

    s = load(SCENARIOS / "preempt-basic.yaml")
    race = Fault("one preemptor, victims on two nodes", "p preempted a on n1, b on n2", True)
    fault_only = Result(s, "plugins", [StepRecord(0, "createPod", {}, {}, [], [], [], [race])])
    assert fault_only.fault_only and FAULT_ONLY in fault_only.report()
    # The race's own consequences (a victim on the second node) are no evidence beside it.
    consequences = Result(s, "plugins", [StepRecord(0, "createPod", {}, {}, [Mismatch("v", "phase", "running", "gone")],
                                                    [], [], [race])])
    assert consequences.fault_only and FAULT_ONLY in consequences.report()
    differs = Result(s, "plugins", [StepRecord(0, "createPod", {}, {}, [Mismatch("p", "phase", "running", "pending")],
                                               [], [], [])])
    assert not differs.fault_only and FAULT_ONLY not in differs.report()


def test_a_batch_stopped_with_no_failing_test_is_no_survival(tmp_path):
    """A kill matrix once said 'survived' for mutants whose batch -x stopped at a scenario that no
    test reported as failed (a node-pressure scenario run on kwok nodes): the catalogue was never run."""
    report = _report(tmp_path,
        '<testsuites><testsuite>'
        f'<testcase name="test_scenario[plugins-preempt-basic]">{_props(verdict="stopped")}<skipped message="any '
        'words"/></testcase>'
        '<testcase name="test_scenario[plugins-eviction-x]"><skipped message="node pressure needs real kubelets"/></testcase>'
        '<testcase name="test_smoke"/>'
        '</testsuite></testsuites>')
    run = tally(report, Run("m", "plugins"))
    assert not run.killed and "stopped by -x with no failing test" in run.error


def test_a_smoke_test_that_errored_in_its_set_up_is_a_kit_error_not_a_kill(tmp_path):
    """A kill matrix once counted a mutant killed by the smoke test, whose set-up had failed to
    spawn the go binary (EFAULT under load): an error says nothing about the mutant."""
    errored = _report(tmp_path,
        '<testsuites><testsuite><testcase name="test_high_priority_pod_preempts_low_priority_pod[plugins@1.34]">'
        '<error message="OSError: [Errno 14] Bad address"/></testcase></testsuite></testsuites>')
    run = tally(errored, Run("m", "plugins"))
    assert not run.killed and run.inconclusive and run.kit_errors == ["test_high_priority_pod_preempts_low_priority_pod"]
    failed = _report(tmp_path,
        '<testsuites><testsuite><testcase name="test_high_priority_pod_preempts_low_priority_pod[plugins@1.34]">'
        '<failure message="the victim was not preempted"/></testcase></testsuite></testsuites>')
    assert tally(failed, Run("m", "plugins")).killed, "its assertion failing is a kill"
