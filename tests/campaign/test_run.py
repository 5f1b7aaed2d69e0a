"""./kit campaign: its errors, and what it removes on an interrupt or a refusal."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.campaign.fakes import FakeCluster, PLAN, _node, _pod, _shard_folder
from harness.campaign import collect, job, nodes, run
from harness.cli import main as cli_main
from harness.errors import KitError


def _one_error_line(capsys, argv: list[str]) -> str:
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_missing_kubeconfig_is_one_clear_error(capsys, tmp_path):
    err = _one_error_line(capsys, ["campaign", "--shards", "3", "--kubeconfig", str(tmp_path / "nope")])
    assert err == f"priority-conformance: error: --kubeconfig {tmp_path / 'nope'}: no such file"


def test_no_cluster_named_is_one_clear_error(capsys):
    assert "say where the campaign runs: --kubeconfig FILE" in _one_error_line(capsys, ["campaign", "--shards", "3"])


def test_an_unreachable_cluster_is_one_clear_error_before_anything_is_built(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(run, "_runner_image", lambda release: pytest.fail("built an image for an unreachable cluster"))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    err = _one_error_line(capsys, ["campaign", "--shards", "3", "--kubeconfig", str(kubeconfig)])
    assert err.startswith("priority-conformance: error: cluster at https://127.0.0.1:1 (kubeconfig ") and "unreachable" in err


@pytest.mark.parametrize("argv, message", [
    (["--shards", "0", "--kind"], "--shards 0: one or more"),
    (["--shards", "2", "--kind", "--", "--splits", "4"], "--splits: the campaign sets it for every shard"),
    (["--shards", "2", "--kind", "--no-load"], "--no-load runs an image the nodes already have: name it with --image"),
    (["--shards", "2", "--kind", "--no-load", "--image", "x"], "--no-load with --kind: the kind cluster made"),
    (["--shards", "2", "--kind", "--scheduler", "nope"], "--scheduler: choose from"),
])
def test_bad_options_are_one_clear_error(capsys, argv, message):
    assert message in _one_error_line(capsys, ["campaign", *argv])


# --- nothing left behind, whatever happens --------------------------------------------


class FakeKube:
    """The calls campaign() makes on a cluster, recorded; the namespace is gone once deleted."""

    def __init__(self, job_error: Exception | None = None):
        from kubernetes.client.exceptions import ApiException

        self.kubeconfig = Path("kubeconfig")
        self.calls: list[tuple] = []
        self.job_error = job_error

        def read_namespace(name):
            if ("delete", name) in self.calls:
                raise ApiException(status=404)
            return SimpleNamespace()

        self.core = SimpleNamespace(list_node=lambda: SimpleNamespace(items=[_node("w1"), _node("w2")]),
                                    read_namespace=read_namespace)
        self.batch = SimpleNamespace(create_namespaced_job=self._create_job)

    def create_namespace(self, name, run_id, labels=None):
        self.calls.append(("create", name))

    def delete_namespace(self, name):
        self.calls.append(("delete", name))

    def _create_job(self, namespace, body):
        if self.job_error is not None:
            raise self.job_error
        self.calls.append(("job", namespace))


@pytest.fixture
def no_watchdog(monkeypatch):
    monkeypatch.setattr(run, "_watch_over", lambda *a, **k: None)


def test_an_interrupt_while_waiting_still_deletes_the_namespace_and_unloads_the_image(tmp_path, no_watchdog,
                                                                                     monkeypatch):
    unloaded = []
    monkeypatch.setattr(nodes, "lacking", lambda targets, image: ["w2"])  # w1 had it: it keeps it
    monkeypatch.setattr(nodes, "load", lambda *a: None)
    monkeypatch.setattr(nodes, "unload", lambda names, image: unloaded.append(names) or [])

    def interrupted(*a, **k):
        raise KeyboardInterrupt  # what SIGINT, SIGTERM and SIGHUP raise in the kit (lifecycle)

    monkeypatch.setattr(run, "wait_and_collect", interrupted)
    monkeypatch.setattr(run.time, "sleep", lambda s: None)
    kube = FakeKube()
    with pytest.raises(KeyboardInterrupt):
        run.campaign(kube, PLAN, tmp_path, "kind-c", run.Options(shards=3, kind=True))
    assert kube.calls == [("create", PLAN.namespace), ("job", PLAN.namespace), ("delete", PLAN.namespace)]
    assert unloaded == [["w2"]]


def test_a_job_the_cluster_refuses_is_one_line_and_the_namespace_still_goes(tmp_path, no_watchdog, monkeypatch):
    from kubernetes.client.exceptions import ApiException

    refusal = ApiException(status=403, reason="Forbidden")
    refusal.body = json.dumps({"message": 'jobs.batch is forbidden: User "u" cannot create resource "jobs"'})
    kube = FakeKube(job_error=refusal)
    with pytest.raises(KitError) as e:
        run.campaign(kube, PLAN, tmp_path, None, run.Options(shards=3, kubeconfig=Path("k")))
    assert str(e.value) == (f'creating the Job in {PLAN.namespace}: the cluster said 403 jobs.batch is forbidden: '
                            'User "u" cannot create resource "jobs"')
    assert kube.calls == [("create", PLAN.namespace), ("delete", PLAN.namespace)]


def test_a_half_done_load_is_undone(tmp_path, no_watchdog, monkeypatch):
    unloaded = []
    monkeypatch.setattr(nodes, "lacking", lambda targets, image: ["w1", "w2"])
    monkeypatch.setattr(nodes, "unload", lambda names, image: unloaded.append(names) or [])

    def fails(*a):
        raise KitError("kind could not load it into w2")

    monkeypatch.setattr(nodes, "load", fails)
    from harness.build import toolchain

    monkeypatch.setattr(toolchain, "ensure_module", lambda m: {"kind": Path("kind")})
    kube = FakeKube()
    with pytest.raises(KitError, match="could not load"):
        run.campaign(kube, PLAN, tmp_path, "kind-c", run.Options(shards=3, kind=True))
    assert unloaded == [["w1", "w2"]] and kube.calls == []


def test_the_api_server_s_hiccups_and_a_failed_copy_are_tried_again(tmp_path, fast, monkeypatch):
    folders = {"campaign-0-x": _shard_folder(tmp_path, 1, 1, {"test_scenario[upstream-s1]": ""}, 0)}
    cluster = FakeCluster([[_pod(0, ready=True)]], folders)
    answers = iter([TimeoutError("read timed out"), None, None, None])
    real_list = cluster.core.list_namespaced_pod

    def flaky_list(namespace, label_selector):
        e = next(answers)
        if e is not None:
            raise e
        return real_list(namespace, label_selector)

    cluster.core.list_namespaced_pod = flaky_list
    copies = iter([(1, "", "tar: short read"), None])

    def flaky_exec(core, namespace, pod, command, timeout=300):
        if command == collect.archive_command():
            failure = next(copies)
            if failure is not None:
                return failure
        return cluster.exec_in(core, namespace, pod, command)

    monkeypatch.setattr(collect, "exec_in", flaky_exec)
    one = job.Plan(namespace="n", image="i", shards=1)
    outcome = run.wait_and_collect(cluster, one, tmp_path / "out", 60)
    assert outcome.shards[1].exit_code == 0 and not outcome.shards[1].lost
