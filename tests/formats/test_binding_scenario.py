"""The Karmada scenario format: the loader's errors, and every scenario file against the model."""

import re
import textwrap
from pathlib import Path

import pytest

from harness.formats.bindings import CATALOGUE, disagreements, load, load_dir
from harness.formats.common import ScenarioError
from harness.formats.pods import load_sources
from reference.binding.objects import KarmadaClass, Member
from reference.binding.plan import Propagate, SetScheduler
from reference.binding.predict import UNSET, predict
from tests.builders import KARMADA_SCENARIO

SCENARIOS = load_dir(CATALOGUE)


# --- the catalogue ---------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_the_model_predicts_what_each_scenario_file_states(scenario):
    assert disagreements(scenario, predict(scenario)) == []


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if not s.gates.PriorityBasedScheduling],
                         ids=lambda s: s.id)
def test_gate_off_scenarios_fail_with_the_gate_on(scenario):
    # Otherwise the scenario proves nothing about the gate.
    flipped = scenario.model_copy(update={"gates": scenario.gates.model_copy(update={"PriorityBasedScheduling": True})})
    assert disagreements(scenario, predict(flipped))


def test_the_catalogue_has_a_scenario_per_behaviour():
    assert len(SCENARIOS) >= 9
    assert any(not s.gates.PriorityBasedScheduling for s in SCENARIOS)


def test_the_readme_lists_every_scenario():
    listed = set(re.findall(r"`(karmada-[a-z0-9-]+)`", (CATALOGUE / "README.md").read_text()))
    assert {s.id for s in SCENARIOS} <= listed


def test_the_pod_catalogue_does_not_pick_up_the_karmada_folder():
    assert not any(s.id.startswith("karmada-") for s in load_sources())


def test_to_plan_carries_gate_members_classes_and_actions():
    s = next(s for s in SCENARIOS if s.id == "karmada-gate-off-retries-without-an-event")
    plan = s.to_plan()
    assert plan.gate is False and plan.members == (Member("m1", 2000),)
    assert KarmadaClass("high", 1000) in plan.classes
    assert isinstance(plan.steps[0].action, Propagate) and plan.steps[0].action.app.class_name == "low"
    q = next(s for s in SCENARIOS if s.id == "karmada-queue-equal-priority-any-order").to_plan()
    assert q.steps[0].action == SetScheduler(False)
    assert q.steps[-1].expect.order == ("a-third", "c-first")


# --- the loader --------------------------------------------------------------------------------



def write(tmp_path, text, name="case"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).format(id=name))
    return path


def error_of(path) -> str:
    with pytest.raises(ScenarioError) as e:
        load(path)
    return str(e.value)


def with_steps(tmp_path, steps: str, name="case") -> Path:
    head = textwrap.dedent(KARMADA_SCENARIO.split("steps:")[0]).format(id=name)
    path = tmp_path / f"{name}.yaml"
    path.write_text(head + "steps:\n" + textwrap.indent(textwrap.dedent(steps), "  "))
    return path


def test_a_good_file_loads_with_defaults(tmp_path):
    s = load(write(tmp_path, KARMADA_SCENARIO))
    assert s.gates.PriorityBasedScheduling is True
    assert s.steps[0].action == "propagate" and s.steps[0].settle_time.total_seconds() == 30
    b = s.steps[0].expect.bindings["app-a"]
    assert b.stated_priority() == 1000 and b.stated_clusters() == {(("m1", 2),)}


def test_priority_null_is_stated_absent_and_a_missing_key_is_not_checked(tmp_path):
    s = load(with_steps(tmp_path, """
        - propagate: {name: a, replicas: 1, cpu: 500}
          expect: {bindings: {a: {state: scheduled, priority: null}}}
        - expect: {bindings: {a: {state: scheduled}}}
        """))
    assert s.steps[0].expect.bindings["a"].stated_priority() is None
    assert s.steps[1].expect.bindings["a"].stated_priority() is UNSET
    assert s.steps[1].expect.bindings["a"].stated_clusters() is None


def test_clusters_may_be_a_list_of_allowed_assignments(tmp_path):
    s = load(write(tmp_path, KARMADA_SCENARIO.replace("clusters: {{m1: 2}}", "clusters: [{{m1: 2}}, {{m1: 1, m2: 1}}]")
                   .replace("{{name: m1, cpu: 2000}}", "{{name: m1, cpu: 2000}}\n  - {{name: m2, cpu: 2000}}")))
    assert s.steps[0].expect.bindings["app-a"].stated_clusters() == {(("m1", 2),), (("m1", 1), ("m2", 1))}


def test_the_file_name_must_be_the_id(tmp_path):
    path = tmp_path / "other.yaml"
    path.write_text(textwrap.dedent(KARMADA_SCENARIO).format(id="case"))
    assert "must match the file name" in error_of(path)


@pytest.mark.parametrize("change, message", [
    (("{{name: m1, cpu: 2000}}", "{{name: m1, cpus: 2000}}"), "members[0].cpus: unknown field"),
    (("cpu: 1000", "cpu: lots"), "steps[0].propagate.cpu"),
    (("replicas: 2", "replicas: 0"), "steps[0].propagate.replicas"),
    (("value: 1000", "value: 2000000000"), "priorityClasses[0].value"),
    (("name: high", "name: system-high"), "reserved for system classes"),
    (("state: scheduled", "state: running"), "steps[0].expect.bindings.app-a.state"),
    (("clusters: {{m1: 2}}", "clusters: {{m9: 2}}"), "steps[0].expect.bindings.app-a.clusters: no member named 'm9'"),
    (("clusters: {{m1: 2}}", "clusters: {{m1: 0}}"), "greater than or equal to 1"),
    (("clusters: {{m1: 2}}", "clusters: {{}}"), "a scheduled binding has at least one cluster"),
    (("clusters: {{m1: 2}}", "clusters: null"), "steps[0].expect.bindings.app-a.clusters"),
    (("state: scheduled, priority: 1000,", "state: absent, priority: 1000,"), "an absent binding has no priority"),
    (("state: scheduled", "state: waiting"), "only a scheduled binding has clusters"),
    (("app-a: {{state", "app-b: {{state"), "expect.bindings.app-b: no app named 'app-b'"),
    (("id: {id}", "id: {id}\ngates: {{PriorityBasedScheduling: true, Other: true}}"), "gates.Other: unknown field"),
    (("id: {id}", "id: {id}\nid: again"), "duplicate key 'id'"),
])
def test_a_bad_field_is_named_with_its_path(tmp_path, change, message):
    assert message in error_of(write(tmp_path, KARMADA_SCENARIO.replace(*change)))


@pytest.mark.parametrize("steps, message", [
    ("- {propagate: {name: a, replicas: 1, cpu: 500}, delete: a}", "steps[0]: a step does one thing; this one has propagate, delete"),
    ("- {settle: 5s}", "a step needs an action or an expect"),
    ("- {wait: 5s, settle: 5s}", "this step has none"),
    ("- {wait: soon}", "'soon' is not a duration"),
    ("- {scale: {name: a, replicas: 2}}", "steps[0].scale.name: no app named 'a' exists by then"),
    ("- {delete: a}", "steps[0].delete: no app named 'a' exists by then"),
    ("- {deleteClass: nope}", "steps[0].deleteClass: no class named 'nope'"),
    ("- {createClass: {name: high, value: 1}}", "steps[0].createClass.name: class 'high' already exists by then"),
    ("- {scheduler: running}", "steps[0].scheduler: karmada-scheduler is already running"),
    ("- {propagate: {name: a, replicas: 1, cpu: 500}}\n- {delete: a}\n- {propagate: {name: a, replicas: 1, cpu: 500}}",
     "steps[2].propagate.name: app 'a' is propagated twice"),
    ("- {propagate: {name: a, replicas: 2, cpu: 500}}\n- {scale: {name: a, replicas: 2}}",
     "steps[1].scale.replicas: 'a' already has 2"),
    ("- {propagate: {name: a, replicas: 1, cpu: 500}}\n- {delete: a}\n- {scale: {name: a, replicas: 2}}",
     "steps[2].scale.name: no app named 'a' exists by then"),
    ("- {expect: {order: [a]}}", "steps[0].expect.order: no app named 'a'"),
    ("- {propagate: {name: a, replicas: 1, cpu: 500}, expect: {order: [a, a]}}", "order: an app is listed twice"),
    ("- {propagate: {name: a, replicas: 1, cpu: 500}, expect: {}}", "an expect checks bindings, an order or both"),
    ("- {wait: 3m}\n- {wait: 1m}", "keep a scenario under 240s"),
])
def test_a_bad_step_is_named_with_its_index(tmp_path, steps, message):
    assert message in error_of(with_steps(tmp_path, steps))


def test_a_propagated_class_may_be_missing_on_purpose(tmp_path):
    s = load(with_steps(tmp_path, "- {propagate: {name: a, replicas: 1, cpu: 500, class: never}}"))
    assert s.steps[0].propagate.class_name == "never"


def test_more_than_three_members_is_refused(tmp_path):
    members = "".join(f"\n  - {{{{name: m{i}, cpu: 1000}}}}" for i in range(4))
    msg = error_of(write(tmp_path, KARMADA_SCENARIO.replace("\n  - {{name: m1, cpu: 2000}}", members)))
    assert "members" in msg and "at most 3" in msg


def test_load_dir_names_a_missing_folder(tmp_path):
    with pytest.raises(ScenarioError, match="no such scenario folder"):
        load_dir(tmp_path / "nope")


def test_load_dir_reads_only_yaml_files_in_name_order(tmp_path):
    write(tmp_path, KARMADA_SCENARIO, "b-case")
    write(tmp_path, KARMADA_SCENARIO, "a-case")
    (tmp_path / "README.md").write_text("# not a scenario")
    assert [s.id for s in load_dir(tmp_path)] == ["a-case", "b-case"]


def test_disagreements_name_the_step_field_and_the_models_reason(tmp_path):
    wrong = load(write(tmp_path, KARMADA_SCENARIO.replace("priority: 1000", "priority: 5").replace("{{m1: 2}}", "{{m1: 1}}")))
    found = disagreements(wrong, predict(wrong))
    assert any(str(f).startswith("steps[0].expect.bindings.app-a.priority: file says 5, model predicts 1000")
               for f in found)
    assert any(str(f).startswith("steps[0].expect.bindings.app-a.clusters:") for f in found)


def test_load_sources_defaults_to_the_catalogue():
    from harness.formats.bindings import load_sources as load_binding_sources

    assert [s.id for s in load_binding_sources(None)] == [s.id for s in SCENARIOS]


def test_load_sources_takes_files_and_folders_and_refuses_an_id_twice(tmp_path):
    from harness.formats.bindings import load_sources as load_binding_sources

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = write(tmp_path / "a", KARMADA_SCENARIO, "a-case")
    write(tmp_path / "b", KARMADA_SCENARIO, "a-case")
    assert [s.id for s in load_binding_sources([one])] == ["a-case"]
    with pytest.raises(ScenarioError, match="'a-case' is used by .*a-case.yaml too"):
        load_binding_sources([tmp_path / "a", tmp_path / "b"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError, match="no scenario files"):
        load_binding_sources([tmp_path / "empty"])


def test_scheduler_gates_parse_as_karmada_takes_them():
    from harness.errors import KitError
    from harness.clusters.karmada import gate_flag, parse_gates

    gates = parse_gates("PriorityBasedScheduling=false, SchedulingOvercommitProtection=TRUE")
    assert gates == {"PriorityBasedScheduling": False, "SchedulingOvercommitProtection": True}
    assert gate_flag(gates) == "--feature-gates=PriorityBasedScheduling=false,SchedulingOvercommitProtection=true"
    assert parse_gates("") == {}
    for bad in ("PriorityBasedScheduling", "PriorityBasedScheduling=yes", "=true"):
        with pytest.raises(KitError, match="expected GATE=true or GATE=false"):
            parse_gates(bad)


def test_the_runs_own_gates_win_over_the_scenarios():
    from harness.clusters.karmada import SCHEDULER_GATES, KarmadaOptions, KarmadaPlane

    plane = KarmadaPlane(KarmadaOptions(scheduler_gates={"PriorityBasedScheduling": False}))
    assert plane.gates_for({"PriorityBasedScheduling": True})["PriorityBasedScheduling"] is False
    assert KarmadaPlane().gates_for({"PriorityBasedScheduling": False}) == {**SCHEDULER_GATES,
                                                                          "PriorityBasedScheduling": False}


def test_karmadas_host_proxies_only_for_kwokctls_one_certificate_and_runs_no_scheduler():
    import yaml

    from harness.clusters.karmada import KWOK_ADMIN, KarmadaOptions
    from harness.clusters.karmada.install import aggregated_api, host_options
    from harness.clusters.karmada.members import member_options

    host = host_options("k1", KarmadaOptions(ready_timeout=7))
    assert host.name == "k1" and host.build == "upstream" and host.ready_timeout == 7
    assert set(host.disable) == {"kube-scheduler", "kwok-controller"}
    assert host.extra_args["kube-apiserver"]["requestheader-allowed-names"] == KWOK_ADMIN
    assert host.extra_args["kube-apiserver"]["requestheader-client-ca-file"] == "{pki}/ca.crt"
    assert "deployment" not in host.extra_args["kube-controller-manager"]["controllers"]
    service, api = yaml.safe_load_all(aggregated_api(4242))
    assert service["spec"] == {"type": "ExternalName", "externalName": "127.0.0.1"}
    assert api["spec"]["service"]["port"] == 4242 and api["metadata"]["name"] == "v1alpha1.cluster.karmada.io"
    member = member_options("k1", "m2", KarmadaOptions(ready_timeout=7))
    assert (member.name, member.build, member.ready_timeout, member.disable) == ("k1-m2", "upstream", 7, ())
    # A failed start keeps its logs where the run keeps its results, for the host and members alike.
    kept = Path("/results/artifacts/cluster-logs")
    assert host_options("k1", KarmadaOptions(failure_logs=kept)).failure_logs == kept
    assert member_options("k1", "m2", KarmadaOptions(failure_logs=kept)).failure_logs == kept


def test_karmadas_components_log_apart_and_a_component_that_exits_is_named(tmp_path):
    from harness.clusters.karmada import Components, KarmadaOptions
    from harness.errors import KitError

    def stand_in(name, body):
        p = tmp_path / name
        p.write_text(f"#!/bin/sh\n{body}\n")
        p.chmod(0o755)
        return p

    bins = {"karmada-webhook": stand_in("webhook", "echo serving; exec sleep 30"),
            "karmada-controller-manager": stand_in("cm", "echo broken; exit 3")}
    (tmp_path / "logs").mkdir()
    c = Components(bins, tmp_path / "logs", {}, KarmadaOptions(ready_timeout=5))
    try:
        c.start("karmada-webhook", ["--secure-port=1"])
        c.wait("karmada-webhook", lambda: b"serving" in c.log_path("karmada-webhook").read_bytes())
        marks = c.log_marks()
        assert marks["karmada-webhook"] > 0 and marks["karmada-scheduler"] == 0
        assert c.log_path("karmada-webhook").read_text().startswith(f"$ {bins['karmada-webhook']} --secure-port=1\n")
        c.start("karmada-controller-manager", [])
        with pytest.raises(KitError, match=r"karmada-controller-manager exited \(code 3\) while starting; its log: "):
            c.wait("karmada-controller-manager", lambda: False)
        assert c.logs_since(marks) == {"karmada-webhook": b"", "karmada-controller-manager": b"$ " +
                                       str(bins["karmada-controller-manager"]).encode() + b" \nbroken\n"}
        assert not c.scheduler_running()
    finally:
        c.stop_all()
