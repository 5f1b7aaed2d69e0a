"""The spec readers on the kit's own catalogue, both kinds: validate and explain, no cluster."""

import pytest

from harness.cli import main
from harness.formats import catalogue
from reference.release import DEFAULT_RELEASE

FILES = catalogue.files()


KARMADA_FILES = sorted(catalogue.CATALOGUES["karmada"].glob("*.yaml"))
POD_FILES = sorted(catalogue.CATALOGUES["pods"].glob("*.yaml"))


def test_validate_with_no_argument_checks_the_whole_catalogue(capsys):
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == f"{len(FILES)} valid ({len(POD_FILES)} pod, {len(KARMADA_FILES)} Karmada), 0 invalid"
    assert any(f.parent.name == "karmada" for f in FILES) and any(f.parent.name == "scenarios" for f in FILES)


def test_validate_reads_a_folder_whole_and_counts_each_kind(capsys):
    # `validate scenarios` once said "91 valid" and left scenarios/karmada out without a word.
    assert main(["validate", str(catalogue.CATALOGUES["pods"])]) == 0
    assert capsys.readouterr().out.strip() == f"{len(FILES)} valid ({len(POD_FILES)} pod, {len(KARMADA_FILES)} Karmada), 0 invalid"
    assert len(FILES) == len(POD_FILES) + len(KARMADA_FILES)


def test_validate_reads_karmada_files_with_their_own_format(capsys):
    assert main(["validate", str(catalogue.CATALOGUES["karmada"])]) == 0
    assert capsys.readouterr().out.strip() == f"{len(KARMADA_FILES)} valid (0 pod, {len(KARMADA_FILES)} Karmada), 0 invalid"


def test_validate_names_each_invalid_file_and_counts_the_valid_ones(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "preempt-basic.yaml").write_text((catalogue.CATALOGUES["pods"] / "preempt-basic.yaml").read_text())
    (tmp_path / "bad.yaml").write_text("id: bad\n")
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith(f"INVALID {tmp_path / 'bad.yaml'}: ") and out[-1] == "1 valid (1 pod, 0 Karmada), 1 invalid"


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_explain_meets_every_expect_of_the_catalogue_at_the_defaults(path, capsys):
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NOT met" not in out and "expect: met" in out
    assert "model of " in out.splitlines()[2]


def test_explain_of_a_karmada_file_names_its_model_and_meets_its_expects(capsys):
    path = catalogue.CATALOGUES["karmada"] / "karmada-gate-off-retries-without-an-event.yaml"
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "model of karmada-scheduler v" in out and "PriorityBasedScheduling off" in out
    assert out.count("expect: met") == 3 and "b-high: unschedulable, priority 1000" in out


def test_explain_names_the_default_release_and_build(capsys):
    assert main(["explain", str(catalogue.CATALOGUES["pods"] / "preempt-basic.yaml")]) == 0
    assert f"model of the plugins scheduler, Kubernetes {DEFAULT_RELEASE}\n" in capsys.readouterr().out


def test_explain_models_the_release_a_scenario_specifies_and_says_so(capsys):
    path = catalogue.CATALOGUES["pods"] / "preempt-nomination-kept-when-bound.yaml"
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert (f"Kubernetes 1.34 (the default release {DEFAULT_RELEASE} is outside what the scenario specifies: "
            "releases <1.35)") in out
    assert main(["explain", str(path), "--k8s-version", DEFAULT_RELEASE]) == 0
    out = capsys.readouterr().out
    assert "does not specify this build or release" in out and "NOT met" in out


def test_explain_refuses_pod_options_for_a_karmada_file(capsys):
    path = next(catalogue.CATALOGUES["karmada"].glob("*.yaml"))
    assert main(["explain", str(path), "--k8s-version", "1.34"]) == 2
    assert "a Karmada scenario" in capsys.readouterr().err
