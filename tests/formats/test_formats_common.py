"""The reader every scenario format shares: one id rule across a run's sources, and a file's kind."""

import textwrap
from pathlib import Path

import pytest

from harness.formats import bindings, catalogue, common, pods
from harness.formats.common import KARMADA, PODS, ScenarioError, kind_of, kind_of_file

POD = """
id: {id}
title: t
spec: s
areas: [preemption]
nodes:
  - {{name: n1}}
steps:
  - createPod: {{name: p}}
    expect: {{running: {{p: n1}}}}
"""

KARMADA_FILE = """
id: {id}
title: t
spec: s
members:
  - {{name: m1, cpu: 2000}}
steps:
  - propagate: {{name: app-a, replicas: 1, cpu: 1000}}
    expect:
      bindings:
        app-a: {{state: scheduled}}
"""


def write(folder: Path, text: str, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).format(id=name))
    return path


@pytest.mark.parametrize("load_sources,text", [(pods.load_sources, POD), (bindings.load_sources, KARMADA_FILE)],
                         ids=["pods", "karmada"])
def test_an_id_used_by_two_files_is_an_error_naming_both(tmp_path, load_sources, text):
    a = write(tmp_path / "a", text, "same")
    b = write(tmp_path / "b", text, "same")
    with pytest.raises(ScenarioError) as e:
        load_sources([tmp_path / "a", tmp_path / "b"])
    assert str(b) in str(e.value) and str(a) in str(e.value) and "'same'" in str(e.value)


@pytest.mark.parametrize("load_sources,text", [(pods.load_sources, POD), (bindings.load_sources, KARMADA_FILE)],
                         ids=["pods", "karmada"])
def test_one_file_named_twice_is_one_scenario(tmp_path, load_sources, text):
    f = write(tmp_path / "a", text, "once")
    write(tmp_path / "a", text, "other")
    assert [s.id for s in load_sources([tmp_path / "a", f])] == ["once", "other"]


@pytest.mark.parametrize("load_sources", [pods.load_sources, bindings.load_sources], ids=["pods", "karmada"])
def test_an_empty_folder_or_a_missing_path_is_a_mistake(tmp_path, load_sources):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError, match="no scenario files"):
        load_sources([tmp_path / "empty"])
    with pytest.raises(ScenarioError, match="no such scenario file or folder"):
        load_sources([tmp_path / "nope"])


def test_the_kind_of_every_catalogue_file_is_its_folders():
    for kind, folder in catalogue.CATALOGUES.items():
        files = sorted(folder.glob("*.yaml"))
        assert files and {kind_of_file(f) for f in files} == {kind}
    assert kind_of({"members": []}) == KARMADA and kind_of({"gates": {}}) == KARMADA and kind_of({}) == PODS


def test_a_file_of_the_other_kind_is_named_as_such(tmp_path):
    k = write(tmp_path, KARMADA_FILE, "k")
    p = write(tmp_path, POD, "p")
    with pytest.raises(ScenarioError, match="this is a Karmada scenario, not a pod scenario"):
        pods.load(k)
    with pytest.raises(ScenarioError, match="this is a pod scenario, not a Karmada scenario"):
        bindings.load(p)
    assert catalogue.load_any(k).id == "k" and catalogue.load_any(p).id == "p"


def test_the_catalogue_check_loads_both_kinds_and_applies_the_id_rule_across_them(tmp_path):
    loaded, errors = catalogue.check(catalogue.files())
    assert errors == [] and len(loaded) == len(catalogue.files())
    assert {type(s) for s in loaded} == {pods.Scenario, bindings.KarmadaScenario}
    a = write(tmp_path / "a", POD, "same")
    write(tmp_path / "b", KARMADA_FILE, "same")
    _, errors = catalogue.check(catalogue.files([tmp_path / "a", tmp_path / "b"]))
    assert len(errors) == 1 and str(a) in errors[0]


def test_errors_name_the_field_without_pydantics_wrapping(tmp_path):
    bad = write(tmp_path, POD.replace("{{name: n1}}", "{{name: n1, cpus: 4}}"), "bad")
    with pytest.raises(ScenarioError, match=r"bad.yaml: nodes\[0\].cpus: unknown field"):
        pods.load(bad)
    dangling = write(tmp_path, POD.replace("{{p: n1}}", "{{p: n9}}"), "dangling")
    with pytest.raises(ScenarioError) as e:
        pods.load(dangling)
    assert "dangling.yaml: steps[0].expect.running.p: no node named 'n9'" in str(e.value)
    assert "Value error" not in str(e.value) and "(top level)" not in str(e.value)


def test_durations_are_one_rule_for_every_format():
    assert common.parse_duration("500ms").total_seconds() == 0.5
    with pytest.raises(ValueError, match="out of range"):
        common.parse_duration("25h")
