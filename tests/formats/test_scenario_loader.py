"""Bad scenario files give one clear error naming the file, the place in it and what was expected."""

import textwrap


from harness.formats.pods import load
from tests.formats.files import error_of

GOOD = """
id: {id}
title: t
spec: s
areas: [preemption]
priorityClasses:
  - {{name: low, value: 1}}
nodes:
  - {{name: n1}}
pods:
  - {{name: v, class: low, node: n1}}
steps:
  - createPod: {{name: p, class: low}}
    expect: {{pending: [p]}}
"""


def write(tmp_path, text, name="case"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).format(id=name))
    return path




def test_a_good_file_loads(tmp_path):
    s = load(write(tmp_path, GOOD))
    assert s.id == "case" and s.steps[0].action == "createPod"


def test_malformed_yaml_names_file_and_line(tmp_path):
    msg = error_of(write(tmp_path, "id: x\ntitle: a: b\n"))
    assert "case.yaml" in msg and "not valid YAML" in msg and "line 2" in msg


def test_unknown_field_names_its_path(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("{{name: n1}}", "{{name: n1, cpus: 4}}")))
    assert "nodes[0].cpus: unknown field" in msg


def test_wrong_type_names_its_path(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("value: 1", "value: high")))
    assert "priorityClasses[0].value" in msg and "integer" in msg


def test_dangling_class_name(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("{{name: v, class: low", "{{name: v, class: lo")))
    assert "pods[0].class: no priority class named 'lo'" in msg


def test_a_change_to_a_class_that_does_not_exist_names_its_step(tmp_path):
    for kind in ("updateClass", "patchClass"):
        msg = error_of(write(tmp_path, GOOD.replace("createPod: {{name: p, class: low}}",
                                                    f"{kind}: {{{{name: gone, value: 2}}}}")))
        assert f"steps[0].{kind}.name: no class named 'gone' exists by then" in msg


def test_dangling_node_name(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("node: n1}}", "node: n9}}")))
    assert "pods[0].node: no node named 'n9'" in msg


def test_expectation_about_an_unknown_pod(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("pending: [p]", "pending: [ghost]")))
    assert "steps[0].expect.pending: no pod or class named 'ghost'" in msg


def test_impossible_values(tmp_path):
    assert "slots" in error_of(write(tmp_path, GOOD.replace("{{name: n1}}", "{{name: n1, slots: -1}}")))
    assert "value" in error_of(write(tmp_path, GOOD.replace("value: 1", "value: 4294967296")))
    assert "areas" in error_of(write(tmp_path, GOOD.replace("[preemption]", "[magic]")))


def test_two_actions_in_one_step(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("  - createPod: {{name: p, class: low}}",
                                                "  - createPod: {{name: p, class: low}}\n    deletePod: v")))
    assert "a step does one thing" in msg


def test_duplicate_keys_are_refused(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("title: t", "title: t\ntitle: u")))
    assert "duplicate key 'title'" in msg


def test_id_must_match_file_name(tmp_path):
    path = tmp_path / "other.yaml"
    path.write_text(textwrap.dedent(GOOD).format(id="case"))
    assert "must match the file name" in error_of(path)


def test_global_default_needs_alone(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("{{name: low, value: 1}}", "{{name: low, value: 1, globalDefault: true}}")))
    assert "alone" in msg


def test_bad_duration(tmp_path):
    msg = error_of(write(tmp_path, GOOD.replace("  - createPod: {{name: p, class: low}}", "  - wait: soon\n  - createPod: {{name: p, class: low}}")))
    assert "steps[0].wait" in msg and "duration" in msg


def test_missing_file():
    assert "no such scenario file" in error_of("/nonexistent/x.yaml")


def test_every_at_once_claim_runs_on_a_quiet_cluster():
    """A scenario that says one event retries a pod at once (scenarios/README.md) is alone: on a
    shared cluster other scenarios' events retry the pod soon anyway, so a build that drops the
    wake-up would pass there (queue-any-term-repeller-retries-at-once lacked it once)."""
    from harness import FILES

    at_once = sorted((FILES / "scenarios").glob("*-at-once.yaml"))
    assert at_once
    shared = [p.stem for p in at_once if not load(p).alone]
    assert shared == []
