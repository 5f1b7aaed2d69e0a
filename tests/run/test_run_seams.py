"""The runner's shared seams without a cluster: names, the settle loop, the artifacts writer."""

import pytest

from harness.host import lifecycle
from harness.run import artifacts
from harness.run.names import Names
from harness.run.settle import settle


# --- names ----------------------------------------------------------------------------------


def test_pod_names_are_the_scenarios_namespace_and_prefix():
    n = Names.for_pods("preempt-basic", "r1")
    assert (n.namespace, n.prefix) == ("preempt-basic-r1", "preempt-basic-r1-")
    assert Names.for_pods("preempt-basic", "r1", copy=2).namespace == "preempt-basic-2-r1"
    cut = Names.for_pods("x" * 30 + "-tail", "r1").namespace
    assert len(cut) <= 40 + len("-r1") and cut.startswith("x" * 30) and not cut.startswith("x" * 30 + "--")


def test_ids_that_share_their_first_forty_characters_get_namespaces_of_their_own():
    # Two peer scenarios once met in one namespace: the cut left only their common start.
    a = Names.for_pods("peer-nominated-mid-then-high-preempts-again", "r1")
    b = Names.for_pods("peer-nominated-mid-then-high-preempts-again-1-34", "r1")
    assert a.namespace != b.namespace and a.prefix != b.prefix
    assert len(a.namespace) <= 63 and len(b.namespace) <= 63
    assert Names.for_pods("x" * 40, "r1").namespace == "x" * 40 + "-r1", "an id that fits is not cut"
    k1, k2 = (Names.for_bindings("karmada-" + "a" * 80 + tail, "r1") for tail in ("-one", "-two"))
    assert k1.namespace != k2.namespace


def test_class_names_are_prefixed_except_the_system_ones():
    n = Names.for_pods("s", "r1")
    assert n.class_name("high") == "s-r1-high" and n.unprefix("s-r1-high") == "high"
    assert n.class_name("system-node-critical") == "system-node-critical"
    assert n.class_name("") == "" and n.unprefix("other") == "other"


def test_nodes_are_prefixed_until_placed_and_placed_ones_map_back():
    n = Names.for_pods("s", "r1")
    assert n.node_name("n1") == "s-r1-n1" and n.scenario_node("s-r1-n1") == "s-r1-n1"
    placed = n.with_nodes({"n1": "kind-worker2"})
    assert placed.node_name("n1") == "kind-worker2" and placed.scenario_node("kind-worker2") == "n1"
    assert placed.scenario_node("") == "" and n.nodes == {}, "names are values: placing makes new ones"


def test_binding_names_fit_the_apis_limits():
    n = Names.for_bindings("karmada-" + "a" * 80, "r1")
    assert n.namespace.startswith("kb-r1-karmada-") and len(n.namespace) <= 63 and not n.namespace.endswith("-")
    assert n.class_name("c") == n.namespace + "-c"
    assert len(n.node_name("m" * 70)) == 63
    assert n.mentions(f"pod {n.namespace}/x") and not n.mentions("another")


# --- settle ---------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def pause(self, seconds, cancel=None):
        if cancel is not None and cancel.is_set():
            raise lifecycle.StopRequested()
        self.now += seconds


def run(seen, deadline, hold, **kw):
    clock, looks = Clock(), []

    def observe():
        looks.append(clock.now)
        return seen(clock.now)
    return settle(observe, lambda s: s == "ok", deadline, hold, clock=clock, pause=clock.pause, **kw), looks


def test_a_match_is_final_once_it_has_held():
    result, looks = run(lambda t: "ok" if t >= 1.0 else "no", deadline=30, hold=2.0)
    assert result == "ok" and looks[-1] == pytest.approx(3.0) and looks[1] - looks[0] == 0.25


def test_a_match_that_breaks_starts_its_hold_again():
    result, looks = run(lambda t: "no" if 1.0 <= t < 1.5 else "ok", deadline=30, hold=2.0)
    assert result == "ok" and looks[-1] == pytest.approx(3.5)


def test_at_the_deadline_the_last_look_is_the_verdict():
    result, looks = run(lambda t: "no", deadline=5, hold=2.0)
    assert result == "no" and looks[-1] == pytest.approx(5.0)


def test_a_match_begun_just_before_the_deadline_ends_it_or_gets_its_hold():
    # The pods' rule: the deadline ends the wait, with the match as it stands.
    result, looks = run(lambda t: "ok" if t >= 4.0 else "no", deadline=5, hold=3.0)
    assert result == "ok" and looks[-1] == pytest.approx(5.0)
    # Karmada's rule: the match gets its whole hold.
    result, looks = run(lambda t: "ok" if t >= 4.0 else "no", deadline=5, hold=3.0, hold_past_deadline=True)
    assert result == "ok" and looks[-1] == pytest.approx(7.0)
    result, looks = run(lambda t: "ok" if 4.0 <= t < 6.0 else "no", deadline=5, hold=3.0, hold_past_deadline=True)
    assert result == "no" and looks[-1] == pytest.approx(6.0)


def test_a_cancelled_run_stops_settling():
    import threading

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(lifecycle.StopRequested):
        run(lambda t: "no", deadline=5, hold=2.0, cancel=cancel)


# --- artifacts ------------------------------------------------------------------------------


def test_pod_artifacts_go_under_the_build_and_the_copy(tmp_path):
    d = artifacts.scenario_dir(tmp_path, "plugins", "preempt-basic", copy=2)
    assert d == tmp_path / "plugins" / "preempt-basic-copy2"
    assert artifacts.scenario_dir(tmp_path, "upstream", "preempt-basic") == tmp_path / "upstream" / "preempt-basic"
    artifacts.write(d, {"report.txt": "r", "pods.json": artifacts.as_json([{"a": 1}]), "raw.log": b"\x00b"})
    assert (d / "report.txt").read_text() == "r"
    assert (d / "pods.json").read_text() == '[\n {\n  "a": 1\n }\n]'
    assert (d / "raw.log").read_bytes() == b"\x00b"


def test_a_log_slice_keeps_the_scenarios_last_lines(tmp_path):
    log = tmp_path / "kube-scheduler.log"
    log.write_text("\n".join(f"{'mine' if i % 2 else 'other'} {i}" for i in range(10)))
    assert artifacts.log_slice(log, lambda ln: "mine" in ln, last=2) == "mine 7\nmine 9"
    assert artifacts.log_slice(tmp_path / "missing.log", lambda ln: True) is None
    assert artifacts.log_slice(None, lambda ln: True) is None


def test_karmada_artifacts_are_the_report_the_history_and_the_logs(tmp_path):
    d = artifacts.keep_bindings(tmp_path, "karmada-x", ["line 1", "line 2"], ["v1", "v2"],
                                {"karmada-scheduler": b"log\n"})
    assert d == tmp_path / "karmada" / "karmada-x"
    assert (d / "report.txt").read_text() == "line 1\nline 2\n"
    assert (d / "bindings.txt").read_text() == "v1\nv2\n"
    assert (d / "karmada-scheduler.log").read_bytes() == b"log\n"


class _Admission:
    """The API server's Priority admission as the kit's dry-run probe meets it: its informer
    learns of a class after ``lag`` probes."""

    def __init__(self, lag: int, value: int | None):
        self.lag, self.value, self.probes, self.created = lag, value, 0, []

    def create_priority_class(self, body):
        self.created.append(body.metadata.name)

    def delete_priority_class(self, name):
        pass

    def create_namespaced_pod(self, namespace, body, dry_run=None):
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        assert dry_run == "All", "the probe must never create a pod"
        self.probes += 1
        if self.probes <= self.lag:
            raise ApiException(status=403, reason="Forbidden")
        if self.value is None:  # deleted, and admission knows it
            raise ApiException(status=403, reason="Forbidden")
        return client.V1Pod(spec=client.V1PodSpec(containers=[], priority=self.value))


def _pod_client(api):
    from types import SimpleNamespace

    from harness.formats.pods import Scenario
    from harness.run.pods.act import PodClient

    s = Scenario.model_validate({"id": "x", "title": "t", "spec": "s", "areas": ["admission"], "nodes": [{"name": "n1"}],
                                 "steps": [{"wait": "1s"}]})
    return PodClient(SimpleNamespace(core=api, scheduling=api), s, Names.for_pods("x", "r"), "img")


def test_a_class_is_written_then_awaited_until_admission_resolves_it():
    """A PodGroup created right after its class was refused ("no PriorityClass with name ...
    was found") in a kill-matrix run: admission's informer had not seen the class yet."""
    from harness.formats.pods import ClassSpec

    api = _Admission(lag=3, value=1000)
    assert _pod_client(api).create_class(ClassSpec(name="high", value=1000)) is None
    assert api.probes == 4  # three refusals, then admitted with the class's value


def test_a_deleted_class_is_awaited_until_admission_refuses_it():
    from harness.formats.pods import ClassSpec, Step

    api = _Admission(lag=0, value=1000)
    act = _pod_client(api)
    act.create_class(ClassSpec(name="high", value=1000))
    api.value, api.probes = None, 0
    act.perform(Step.model_validate({"deleteClass": "high"}))
    assert api.probes == 1


def test_a_steps_wait_bound_follows_the_moment_the_model_predicts():
    """A victim with a 40 s grace is gone 40 s after its preemption: the step must be watched
    that long and more, not a flat 30 s (the bound read graces of the settled world, where
    no pod is terminating any more)."""
    from harness.formats.pods import Step
    from harness.run.pods.expectation import apply_step
    from harness.run.pods.scenario_run import DEFAULT_SETTLE, settle_bound
    from reference import scheduler as sched
    from tests.builders import T0, node, pc, pod, state

    world = sched.start(state([pc("low", 1), pc("high", 1000)], [node("n1")],
                              [pod("victim", 1, cls="low", on="n1", termination_grace_seconds=40)]),
                        "upstream", T0)
    step = Step.model_validate({"createPod": {"name": "preemptor", "priorityClassName": "high"}})
    predicted = apply_step(world, step)
    assert predicted.state.pod_keyed("default/preemptor").node_name == "n1"
    assert settle_bound(world, predicted) >= DEFAULT_SETTLE + 40
    quiet = apply_step(world, Step.model_validate({"wait": "1s"}))
    assert settle_bound(world, quiet) <= DEFAULT_SETTLE + 1


def test_a_parked_pods_rejectors_are_those_of_the_attempt_that_parked_it():
    """Recomputed from the present, a pod rejected for room (NodeResourcesFit) and by its
    selector elsewhere kept only NodeAffinity once the room's holder moved, so a deletion that
    NodeResourcesFit's hint acts on was judged not to wake it."""
    from harness.run.pods.check import parked_rejectors
    from tests.builders import node, pod, state

    now = state(nodes=[node("n1"), node("n2", labels=(("zone", "b"),))],
                pods=[pod("waiting", 5, node_selector=(("zone", "a"),))])
    present = dict(parked_rejectors(now, ["default/waiting"], {}))
    assert "NodeResourcesFit" not in present["default/waiting"]
    then = {"default/waiting": frozenset({"NodeResourcesFit", "NodeAffinity"})}
    assert dict(parked_rejectors(now, ["default/waiting"], then)) == then


def test_a_step_with_settle_is_looked_at_that_long_after_the_action():
    """`settle: 10s` waited up to 15 s for a match from the action on, so a match in the first
    seconds passed although the documented outcome is the state 10 s after the action."""
    from harness.run.pods.scenario_run import LAG, settle_window

    look_from, deadline = settle_window(10.0, 2.0)
    assert look_from == 8.0  # the match must hold over the quiet time ending at 10 s
    assert look_from + deadline == 10.0 + LAG
    assert settle_window(1.0, 2.0) == (0.0, 1.0 + LAG)


def test_the_models_course_puts_a_victims_end_at_its_grace():
    from harness.formats.pods import Step
    from harness.run.pods.expectation import trajectory
    from reference import scheduler as sched
    from tests.builders import T0, node, pc, pod, state

    world = sched.start(state([pc("low", 1), pc("high", 1000)], [node("n1")],
                              [pod("victim", 1, cls="low", on="n1", termination_grace_seconds=40)]),
                        "upstream", T0)
    course = trajectory(world, Step.model_validate({"createPod": {"name": "preemptor", "priorityClassName": "high"}}))
    assert [round(t) for t, _ in course] == [0, 40]
    first, last = course[0][1], course[-1][1]
    assert first["victim"].phase == "terminating" and first["preemptor"].phase == "pending"
    assert last["victim"].phase == "gone" and last["preemptor"].phase == "running"


def test_a_failed_runs_component_logs_are_copied_into_its_artifacts(tmp_path):
    """A fault step's restart that failed names logs in the cluster's directory, which goes with
    the cluster: the archive keeps their copies (the tail of a long one), a folder's logs too,
    and passes over one already gone."""
    from harness.run.artifacts import write
    from harness.run.pods.archive import component_logs

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kube-apiserver.log").write_text("bind: address already in use\n")
    (logs / "etcd.log").write_bytes(b"x" * 100 + b"tail")
    files = component_logs((logs / "kube-apiserver.log", logs, tmp_path / "gone.log"), most=4)
    assert files == {"cluster-logs/kube-apiserver.log": b"bind: address already in use\n"[-4:],
                     "cluster-logs/etcd.log": b"tail"}
    write(tmp_path / "artifacts", files)
    assert (tmp_path / "artifacts" / "cluster-logs" / "etcd.log").read_bytes() == b"tail"
