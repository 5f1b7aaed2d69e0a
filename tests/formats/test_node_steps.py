"""Node steps in the pod format (harness.formats.nodes): each names a node that exists by then,
and a bad one is one clear error naming the file and the step's field."""

import pytest

from harness.formats.nodes import after
from harness.formats.pods import load
from tests.formats.files import error_of, with_steps

BASE = """
id: {id}
title: t
spec: s
areas: [queue]
priorityClasses:
  - {{name: low, value: 1}}
nodes:
  - {{name: n1}}
  - {{name: n2}}
steps:
"""


def scenario(tmp_path, steps: str, name="case"):
    return with_steps(tmp_path, BASE, steps, name)


def test_every_node_step_loads_and_changes_the_node_it_names(tmp_path):
    s = load(scenario(tmp_path, """
        - addNode: {name: n3, slots: 2, labels: {disk: ssd}}
        - labelNode: {node: n3, labels: {disk: null, zone: a}}
        - taintNode: {node: n3, key: k, value: v, effect: NoSchedule}
        - untaintNode: {node: n3, key: k, effect: NoSchedule}
        - cordon: n1
        - uncordon: n1
        - resizeNode: {node: n2, slots: 4}
        - deleteNode: n3
          expect: {running: {}}
    """))
    specs = {n.name: n for n in s.nodes}
    seen = []
    for step in s.steps:
        specs = after(specs, step)
        seen.append({k: (v.slots, dict(v.labels), [t.key for t in v.taints], v.unschedulable) for k, v in specs.items()})
    assert seen[0]["n3"] == (2, {"disk": "ssd"}, [], False)
    assert seen[1]["n3"] == (2, {"zone": "a"}, [], False)
    assert seen[2]["n3"][2] == ["k"] and seen[3]["n3"][2] == []
    assert seen[4]["n1"][3] is True and seen[5]["n1"][3] is False
    assert seen[6]["n2"][0] == 4
    assert "n3" not in seen[7]
    assert s.needs_kwok == "addNode step"


@pytest.mark.parametrize("steps, where", [
    ("- labelNode: {node: n9, labels: {a: b}}", "steps[0].labelNode.node: no node named 'n9' exists by then"),
    ("- cordon: n9", "steps[0].cordon: no node named 'n9' exists by then"),
    ("- deleteNode: n2\n- resizeNode: {node: n2, slots: 1}", "steps[1].resizeNode.node: no node named 'n2'"),
    ("- addNode: {name: n1}", "steps[0].addNode.name: a node named 'n1' existed before"),
    ("- deleteNode: n1\n- deleteNode: n2", "steps[1].deleteNode: the scenario's last node"),
    ("- taintNode: {node: n1, key: k, effect: NoExecute}", "taintNode.effect"),
    ("- labelNode: {node: n1, labels: {kubernetes.io/hostname: x}}", "the kit sets this label"),
    ("- resizeNode: {node: n1, slots: -1}", "resizeNode.slots"),
])
def test_a_bad_node_step_names_its_field(tmp_path, steps, where):
    msg = error_of(scenario(tmp_path, steps))
    assert "case.yaml" in msg and where in msg, msg


def test_an_expect_may_name_a_node_added_later(tmp_path):
    s = load(scenario(tmp_path, """
        - addNode: {name: n3}
        - createPod: {name: p, class: low}
          expect: {running: {p: [n1, n2, n3]}}
    """))
    assert s.steps[1].expect.running == {"p": ["n1", "n2", "n3"]}
