"""The peer suite's verdicts (harness.run.peers, ./kit peers --verdicts): a model test's outcome,
a scenario's expects on the model, and a scenario's recorded verdicts on clusters."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.cli.peers import scenario_on_model
from harness.errors import KitError
from harness.formats.peers import PeerCase
from harness.run import peers
from harness.run.peers import Agreement

SHARD = Path(__file__).parents[1] / "data" / "results" / "shard1" / "junit.xml"
CASE = {"id": "k8s-1.35-x", "project": "kubernetes", "release": "1.35.8", "file": "f_test.go", "function": "TestX",
        "case": "c", "kind": "unit", "expressible": "scenario"}


def test_a_scenario_verdict_as_specified_agrees_and_a_fail_disagrees():
    runs = peers.cluster_runs([SHARD])
    assert peers._agreement(runs[("preempt-basic", "plugins")]) is Agreement.AGREES
    assert peers._agreement(runs[("preempt-basic", "upstream@1.35")]) is Agreement.DISAGREES
    # an expected build difference and a named race with its outcome as specified are as specified
    assert peers._agreement(runs[("toleration-seconds-zero", "upstream")]) is Agreement.AGREES
    assert peers._agreement(runs[("pdb-best-effort", "plugins")]) is Agreement.AGREES
    # a scenario not run (a gate the release lacks, a batch stopped) says nothing either way
    assert peers._agreement(runs[("podgroup-gang-waits-for-min-count", "plugins")]) is Agreement.NOT_RUN
    assert peers._agreement(runs[("preempt-minimal-victims", "plugins")]) is Agreement.NOT_RUN
    # a failing copy of a --repeat run is not hidden by a passing one
    assert peers._agreement(runs[("preempt-basic-with-generic-workload", "plugins")]) is Agreement.DISAGREES
    assert ("preempt-basic", "plugins (real kubelets)") in runs


def test_a_model_test_agrees_when_it_passes(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_rows.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', [1, 2], ids=['one', 'two'])\n"
        "def test_row(n):\n    assert n == 1\n")
    got = peers.model_tests(["tests/test_rows.py::test_row[one]", "tests/test_rows.py::test_row[two]"], tmp_path)
    assert got == {"tests/test_rows.py::test_row[one]": peers.results.Outcome.PASSED,
                   "tests/test_rows.py::test_row[two]": peers.results.Outcome.FAILED}
    assert list(tmp_path.iterdir()) == [tmp_path / "tests"] or not (tmp_path / ".pytest_cache").exists()


def test_a_scenario_case_is_judged_on_the_model_and_on_each_target_run():
    case = PeerCase(**{**CASE, "matches": "preempt-basic"})
    v = peers.verdicts([case], lambda name: scenario_on_model(name, ("plugins", "upstream")), [SHARD])
    assert v.model == {case.id: Agreement.AGREES}
    assert v.clusters[case.id]["plugins"] is Agreement.AGREES
    assert v.clusters[case.id]["upstream@1.35"] is Agreement.DISAGREES


def test_a_build_the_scenario_does_not_specify_is_not_judged():
    # toleration: the plugins build's; the upstream build, which lacks the plugin, would miss its expects
    assert scenario_on_model("toleration-exempt-node-skipped", ("plugins", "upstream")) == {"plugins": True}
    assert scenario_on_model("preempt-basic", ("plugins", "upstream")) == {"plugins": True, "upstream": True}


def test_a_scenario_the_model_misses_disagrees():
    case = PeerCase(**{**CASE, "matches": "preempt-basic"})
    v = peers.verdicts([case], lambda name: {"plugins": True, "upstream": False})
    assert v.model == {case.id: Agreement.DISAGREES} and v.targets == ()


def test_the_table_with_verdicts_exits_1_on_a_disagreement(tmp_path, capsys):
    f = tmp_path / "cases.yaml"
    f.write_text(yaml.safe_dump([{**CASE, "matches": "preempt-basic"}]))
    assert main(["peers", "--index", str(f), "--list", "--junit", str(SHARD)]) == 1
    out = capsys.readouterr().out
    assert "model agrees" in out and "upstream@1.35 DISAGREES" in out and "plugins agrees" in out
    assert "on upstream@1.35: 0 of 1 scenario cases run agree, 1 DISAGREE" in out


def test_a_junit_that_is_not_there_is_named(tmp_path):
    with pytest.raises(KitError, match="peers --junit: .*nothing.xml: no such file"):
        peers.cluster_runs([tmp_path / "nothing.xml"])
