"""One notation for the place of an error in a scenario file, pods and Karmada alike, whether pydantic
or the kit's own checks found it: `steps[2].createPod.class` (scenarios/README.md). Both
`steps[0].expect.preempted` and `nodes.0.slotz` were once printed, and a union's member types
(`.str`, `.list[str]`) leaked into paths."""

import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.formats import bindings, pods
from harness.formats.common import ScenarioError, field_path
from reference.binding.predict import predict
from tests.builders import KARMADA_SCENARIO

REPO = Path(__file__).resolve().parents[2]
# A list index after a dot, or the name of a type pydantic tried, is the other notation.
OTHER_NOTATION = re.compile(r"\.\d|\.(str|int|list\[|dict\[|function-)")

POD = """id: {id}
title: t
spec: s
areas: [preemption]
priorityClasses:
  - {{name: low, value: 100}}
  - {{name: high, value: 1000}}
nodes:
  - {{name: n1, slots: 1}}
pods:
  - {{name: victim, class: low, node: n1}}
steps:
  - createPod: {{name: p, class: high}}
    expect:
      preempted: [victim]
      running: {{p: n1}}
  - wait: 1s
  - createPod: {{name: q, class: high}}
"""



def error_of(tmp_path: Path, text: str, load) -> str:
    f = tmp_path / "x.yaml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        load(f)
    return str(e.value).removeprefix(f"{f}: ")


@pytest.mark.parametrize("change, place", [
    (("{name: n1, slots: 1}", "{name: n1, slotz: 1}"), "nodes[0].slotz: unknown field"),
    (("  - {name: n1, slots: 1}", "  - {name: n1, slots: 1}\n  - {slots: 1}"), "nodes[1].name: Field required"),
    (("{name: n1, slots: 1}", "{name: n1, labels: {topology.kubernetes.io/zone: 3}}"),
     "nodes[0].labels[topology.kubernetes.io/zone]: Input should be a valid string"),
    (("preempted: [victim]", "preempted: [5]"), "steps[0].expect.preempted[0]: Input should be a valid string"),
    (("running: {p: n1}", "running: {p: 5}"),
     "steps[0].expect.running.p: Input should be a valid string or Input should be a valid list"),
    (("{name: q, class: high}", "{name: q, class: [high]}"), "steps[2].createPod.class: Input should be a valid string"),
    (("{name: victim, class: low, node: n1}", "{name: victim, class: lo, node: n1}"),
     "pods[0].class: no priority class named 'lo'"),
    (("running: {p: n1}", "running: {p: n9}"), "steps[0].expect.running.p: no node named 'n9'"),
    (("- wait: 1s", "- deletePod: ghost"), "steps[1].deletePod: no pod named 'ghost' exists by then"),
    (("- wait: 1s", "- wait: soon"), "steps[1].wait: Value error, 'soon' is not a duration"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_pod_errors_name_the_place_in_one_notation(tmp_path, change, place):
    got = error_of(tmp_path, POD.format(id="x").replace(*change), pods.load)
    assert place.replace("Value error, ", "") in got
    assert not OTHER_NOTATION.search(got), got


@pytest.mark.parametrize("change, place", [
    (("{name: m1, cpu: 2000}", "{name: m1, cpus: 2000}"), "members[0].cpus: unknown field"),
    (("replicas: 2, cpu: 1000", "replicas: 0, cpu: 1000"), "steps[0].propagate.replicas"),
    (("{name: high, value: 1000}", "{name: high, value: lots}"), "priorityClasses[0].value"),
    (("clusters: {m1: 2}", "clusters: {m9: 2}"), "steps[0].expect.bindings.app-a.clusters: no member named 'm9'"),
    (("clusters: {m1: 2}", "clusters: [{m1: 2}, {m1: x}]"), "steps[0].expect.bindings.app-a.clusters"),
    (("app-a: {state", "app-b: {state"), "steps[0].expect.bindings.app-b: no app named 'app-b'"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_karmada_errors_name_the_place_in_one_notation(tmp_path, change, place):
    got = error_of(tmp_path, KARMADA_SCENARIO.format(id="x").replace(*change), bindings.load)
    assert place in got
    assert not OTHER_NOTATION.search(got), got


def test_karmada_disagreements_with_the_model_use_the_same_notation(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text(KARMADA_SCENARIO.format(id="x").replace("priority: 1000,", "priority: 5,"))
    s = bindings.load(f)
    found = bindings.disagreements(s, predict(s))
    assert [d.where for d in found] == ["steps[0].expect.bindings.app-a.priority"]


def test_validate_prints_the_same_place(tmp_path, capsys):
    f = tmp_path / "x.yaml"
    f.write_text(POD.format(id="x").replace("slots: 1}", "slotz: 1}"))
    assert main(["validate", str(f)]) == 1
    assert f"INVALID {f}: nodes[0].slotz: unknown field" in capsys.readouterr().out


def test_the_format_documents_the_notation_the_loader_prints():
    text = (REPO / "scenarios" / "README.md").read_text()
    assert "`steps[2].createPod.class`" in text
    assert not re.search(r"`(steps|nodes|pods|members)\.\d", text)


def test_field_path_writes_indexes_in_brackets_and_keys_after_dots():
    assert field_path("steps", 2, "createPod", "class") == "steps[2].createPod.class"
    assert field_path("nodes", 0, "labels", "topology.kubernetes.io/zone") == "nodes[0].labels[topology.kubernetes.io/zone]"
    assert field_path("steps", 0, "expect", "bindings", "app-a") == "steps[0].expect.bindings.app-a"
