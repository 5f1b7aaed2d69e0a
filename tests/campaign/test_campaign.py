"""A campaign as an Indexed Job, without a cluster: the manifest, what each pod runs, the
collection and merge of the shards' results, the runner image's inputs, and bad input."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes import client

from harness.build import runner_image
from harness.campaign import collect, job, nodes, run
from harness.cli import main as cli_main
from harness.errors import KitError

PLAN = job.Plan(namespace="prioritykit-campaign-1", image="prioritykit/runner:v1.35.8-abc", shards=3,
                scheduler="upstream", pytest_args=("-k", "preempt and not slow"), run_id="r1")


# --- the manifest -------------------------------------------------------------------


def test_the_job_is_indexed_one_pod_per_shard_each_run_once():
    spec = job.job(PLAN)["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 3, 3)
    assert spec["backoffLimitPerIndex"] == 0  # one shard's failure neither stops nor repeats the others
    assert spec["activeDeadlineSeconds"] == PLAN.timeout + job.COLLECT_WINDOW
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and pod["automountServiceAccountToken"] is False
    assert job.job(PLAN)["metadata"]["namespace"] == PLAN.namespace == job.namespace(PLAN)["metadata"]["name"]
    assert job.namespace(PLAN)["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "priority-conformance", "app.kubernetes.io/component": "campaign",
        "priority-conformance.x-k8s.io/run": "r1"}


def test_the_pod_needs_no_privilege_and_says_what_it_uses():
    pod = job.job(PLAN)["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": runner_image.UID,
                                      "runAsGroup": runner_image.UID, "seccompProfile": {"type": "RuntimeDefault"}}
    (c,) = pod["containers"]
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert c["image"] == PLAN.image and c["imagePullPolicy"] == "Never"  # loaded, never pulled
    assert c["resources"] == {"requests": {"cpu": "1", "memory": "3Gi"}, "limits": {"memory": "5Gi"}}
    # Both builds in one shard run side by side: twice the memory; a third would wait its turn.
    both = job.resources(job.Plan(namespace="n", image="i", shards=2, scheduler="plugins,upstream"))
    assert both == {"requests": {"cpu": "1", "memory": "6Gi"}, "limits": {"memory": "10Gi"}}
    assert c["readinessProbe"]["exec"]["command"] == ["test", "-e", job.EXIT_CODE]
    assert c["volumeMounts"] == [{"name": "results", "mountPath": job.RESULTS}]
    assert pod["volumes"][0]["emptyDir"] == {"sizeLimit": "1Gi"}
    # Never on a kwok node a conformance run made (no kubelet there).
    term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchExpressions"] == [{"key": "type", "operator": "NotIn", "values": ["kwok"]}]
    # The image's entrypoint (tini) stays PID 1: the pod sets args, not command.
    assert "command" not in c and c["args"][:2] == ["bash", "-c"]


def test_each_pod_runs_its_shard_with_the_group_from_the_job_index():
    args = job.job(PLAN)["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:4] == ["bash", "-c", job.SCRIPT, "shard"]
    assert args[4:] == ["./kit", "conformance", "--scheduler", "upstream", "--splits", "3",
                        "--artifacts", "/results/artifacts", "--junitxml=/results/artifacts/junit.xml",
                        "-p", "no:cacheprovider", "-k", "preempt and not slow"]
    assert "--group" not in args  # pytest-split's group comes from JOB_COMPLETION_INDEX


def test_the_manifest_prints_as_yaml_for_kubectl():
    import yaml

    docs = list(yaml.safe_load_all(run.manifests(PLAN)))
    assert [d["kind"] for d in docs] == ["Namespace", "Job"]
    assert docs[1] == job.job(PLAN)
    assert "- |\n          mkdir -p /results/artifacts" in run.manifests(PLAN)  # the script reads as a block


@pytest.mark.parametrize("suite_exit", [0, 1, 4])
def test_the_pod_script_keeps_the_suite_s_exit_code_and_waits_to_be_collected(tmp_path, suite_exit):
    script = job.SCRIPT.replace(job.RESULTS, str(tmp_path))
    (tmp_path / ".collected").touch()  # collected already: the script ends at once
    done = subprocess.run(["bash", "-c", script, "shard", "sh", "-c", f"echo ran; echo oops >&2; exit {suite_exit}"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == suite_exit
    assert (tmp_path / "exit-code").read_text() == f"{suite_exit}\n"
    assert (tmp_path / "conformance.log").read_text() == "ran\noops\n"
    assert (tmp_path / "artifacts").is_dir() and not (tmp_path / "exit-code.tmp").exists()


def test_failed_indexes_name_the_kit_s_shards():
    assert job.indexes("0,2-4") == {1, 3, 4, 5}
    assert job.indexes(None) == set() == job.indexes("")


# --- pods' states and the collection ------------------------------------------------


def _pod(index: int, phase: str = "Running", ready: bool = False, node: str = "w1", waiting: str | None = None,
         terminated: tuple[int, str] | None = None, reason: str | None = None):
    conditions = [client.V1PodCondition(type="Ready", status="True" if ready else "False")]
    if phase == "Pending" and node == "":
        conditions = [client.V1PodCondition(type="PodScheduled", status="False", message="0/4 nodes are available")]
    state = None
    if waiting:
        state = client.V1ContainerState(waiting=client.V1ContainerStateWaiting(reason=waiting, message="not present"))
    if terminated:
        state = client.V1ContainerState(terminated=client.V1ContainerStateTerminated(exit_code=terminated[0],
                                                                                      reason=terminated[1]))
    statuses = [client.V1ContainerStatus(name="shard", image="i", image_id="", ready=ready, restart_count=0,
                                         state=state)] if state else []
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=f"campaign-{index}-x", annotations={job.INDEX_ANNOTATION: str(index)}),
        spec=client.V1PodSpec(containers=[], node_name=node or None),
        status=client.V1PodStatus(phase=phase, conditions=conditions, container_statuses=statuses, reason=reason))


def test_a_pod_s_state_says_what_the_collector_does_next():
    assert collect.state(_pod(0, ready=True)) == collect.PodState("campaign-0-x", 1, "w1", "ready")
    assert collect.state(_pod(1)).kind == "running"
    pending = collect.state(_pod(2, phase="Pending", node=""))
    assert (pending.kind, pending.detail, pending.shard) == ("pending", "not scheduled: 0/4 nodes are available", 3)
    stuck = collect.state(_pod(0, phase="Pending", waiting="ErrImageNeverPull"))
    assert (stuck.kind, stuck.detail) == ("stuck", "ErrImageNeverPull: not present")
    ended = collect.state(_pod(0, phase="Failed", terminated=(137, "OOMKilled")))
    assert (ended.kind, ended.detail) == ("ended", "container exited 137 (OOMKilled)")
    evicted = collect.state(_pod(0, phase="Failed", reason="Evicted"))
    assert evicted.detail == "Evicted"


def _archive(folder: Path) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(folder), arcname=".")
    return base64.b64encode(buf.getvalue()).decode()


def test_unpack_takes_plain_files_and_refuses_what_would_land_elsewhere(tmp_path):
    (tmp_path / "pod" / "artifacts").mkdir(parents=True)
    (tmp_path / "pod" / "artifacts" / "junit.xml").write_text("<testsuites/>")
    (tmp_path / "pod" / "exit-code").write_text("0\n")
    assert collect.unpack(_archive(tmp_path / "pod"), tmp_path / "shard-1") == ["artifacts/junit.xml", "exit-code"]
    assert (tmp_path / "shard-1" / "exit-code").read_text() == "0\n"
    for name, kind in (("../evil", tarfile.REGTYPE), ("link", tarfile.SYMTYPE)):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, "/etc/passwd"
            tar.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
        with pytest.raises(KitError, match="not a plain file or folder inside the results: refused"):
            collect.unpack(base64.b64encode(buf.getvalue()).decode(), tmp_path / "shard-2")
    assert not (tmp_path / "evil").exists()
    with pytest.raises(KitError, match="not base64"):
        collect.unpack("not base64!", tmp_path / "shard-3")


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="{n}">{cases}'
         '</testsuite></testsuites>')


def _shard_folder(root: Path, index: int, count: int, cases: dict[str, str], exit_code: int) -> Path:
    """What a pod's /results holds after `./kit conformance --splits`: JUnit, the shard's record, the exit code."""
    d = root / f"pod-{index}"
    (d / "artifacts").mkdir(parents=True)
    xml = "".join(f'<testcase classname="conformance.test_scenarios" name="{n}" time="1.0">{inner}</testcase>'
                  for n, inner in cases.items())
    (d / "artifacts" / "junit.xml").write_text(JUNIT.format(n=len(cases), cases=xml))
    (d / "artifacts" / "shard-conformance.json").write_text(json.dumps(
        {"campaign": "conformance", "index": index, "count": count, "host": f"campaign-{index - 1}-x",
         "started": "2026-01-01T00:00:00", "seconds": 60.0, "ran": list(cases)}))
    (d / "exit-code").write_text(f"{exit_code}\n")
    (d / "conformance.log").write_text("...\n")
    return d


class FakeCluster:
    """The API calls the collector makes, answered from scripted polls; exec serves the pod folders."""

    def __init__(self, polls: list[list], folders: dict[str, Path], failed_indexes: str | None = None):
        self.polls, self.folders, self.failed_indexes = polls, folders, failed_indexes
        self.collected: list[str] = []
        self.core = SimpleNamespace(list_namespaced_pod=self._list, read_namespaced_pod_log=lambda *a, **k: "Killed")
        self.batch = SimpleNamespace(read_namespaced_job=lambda *a: SimpleNamespace(
            status=SimpleNamespace(failed_indexes=self.failed_indexes)))

    def _list(self, namespace, label_selector):
        assert label_selector == f"job-name={job.JOB_NAME}"
        return SimpleNamespace(items=self.polls.pop(0) if len(self.polls) > 1 else self.polls[0])

    def exec_in(self, core, namespace, pod, command, timeout=300):
        if command == collect.archive_command():
            return 0, _archive(self.folders[pod]), ""
        assert command == ["touch", job.COLLECTED]
        self.collected.append(pod)
        return 0, "", ""


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(run, "POLL", 0)
    monkeypatch.setattr(run.time, "sleep", lambda s: None)


def test_ready_shards_are_collected_as_they_finish_and_merged_into_one_report(tmp_path, fast, monkeypatch, capsys):
    folders = {f"campaign-{i - 1}-x": _shard_folder(tmp_path, i, 3, {f"test_scenario[upstream-s{i}]": ""}, 0)
               for i in (1, 2, 3)}
    folders["campaign-2-x"] = _shard_folder(tmp_path / "b", 3, 3, {
        "test_scenario[upstream-s3]": '<failure message="s3: differs from the model">table</failure>'}, 1)
    cluster = FakeCluster([[_pod(0, ready=True), _pod(1), _pod(2, phase="Pending", node="")],
                           [_pod(0, ready=True), _pod(1, ready=True), _pod(2)],
                           [_pod(1, ready=True), _pod(2, ready=True)]], folders)
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    outcome = run.wait_and_collect(cluster, PLAN, tmp_path / "out", timeout=60)
    assert sorted(outcome.shards) == [1, 2, 3] and cluster.collected == ["campaign-0-x", "campaign-1-x", "campaign-2-x"]
    assert outcome.shards[3].exit_code == 1 and outcome.shards[1].folder == tmp_path / "out" / "shard-1"
    code = run.report(outcome, tmp_path / "out", 3)
    printed = capsys.readouterr().out
    assert code == 1  # a failed test, as `./kit merge` exits
    assert "shard 3/3: pod campaign-2-x on w1: the suite exited 1; results in " in printed
    assert "FAILED conformance.test_scenarios::test_scenario[upstream-s3] - s3: differs from the model" in printed
    assert "1 failed, 2 passed (over 3 JUnit file(s); merged in " in printed
    assert (tmp_path / "out" / "merged" / "junit.xml").is_file()
    assert json.loads((tmp_path / "out" / "campaign.json").read_text())["3"]["exit_code"] == 1


def test_a_shard_lost_before_collection_is_named_and_the_merge_says_it_is_missing(tmp_path, fast, monkeypatch, capsys):
    folders = {f"campaign-{i - 1}-x": _shard_folder(tmp_path, i, 3, {f"test_scenario[upstream-s{i}]": ""}, 0)
               for i in (1, 2)}
    cluster = FakeCluster([[_pod(0, ready=True), _pod(1, ready=True), _pod(2, phase="Failed", terminated=(137, "OOMKilled"))]],
                          folders)
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    outcome = run.wait_and_collect(cluster, PLAN, tmp_path / "out", timeout=60)
    assert outcome.shards[3].lost == "container exited 137 (OOMKilled)"
    assert run.report(outcome, tmp_path / "out", 3) == 1
    printed = capsys.readouterr()
    assert "shard 3/3: pod campaign-2-x on w1: LOST, container exited 137 (OOMKilled)" in printed.out
    assert "conformance: shard(s) 3/3 missing" in printed.out
    # Its last lines, which the kubelet keeps after the container ended, say what happened.
    assert ("pod campaign-2-x (shard 3, node w1) ended before its results were collected: container exited 137 "
            "(OOMKilled); its last lines:\nKilled") in printed.err


def test_all_shards_green_merge_to_exit_zero(tmp_path, fast, monkeypatch, capsys):
    folders = {f"campaign-{i - 1}-x": _shard_folder(tmp_path, i, 3, {f"test_scenario[upstream-s{i}]": ""}, 0)
               for i in (1, 2, 3)}
    cluster = FakeCluster([[_pod(i, ready=True) for i in range(3)]], folders)
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    assert run.report(run.wait_and_collect(cluster, PLAN, tmp_path / "out", 60), tmp_path / "out", 3) == 0
    assert "3 passed (over 3 JUnit file(s)" in capsys.readouterr().out


def test_a_pod_that_cannot_start_stops_the_campaign_naming_it(tmp_path, fast):
    cluster = FakeCluster([[_pod(0, phase="Pending", waiting="ErrImageNeverPull")]], {})
    with pytest.raises(KitError, match=r"pod campaign-0-x \(shard 1, node w1\) cannot start: ErrImageNeverPull.*"
                                       r"was the runner image loaded into that node\?"):
        run.wait_and_collect(cluster, PLAN, tmp_path / "out", 60)


def test_a_campaign_past_its_timeout_names_the_pods_still_at_work(tmp_path, fast, monkeypatch):
    clock = iter(range(0, 10_000, 50))
    monkeypatch.setattr(run.time, "monotonic", lambda: next(clock))
    cluster = FakeCluster([[_pod(0), _pod(1)]], {})
    with pytest.raises(KitError, match=r"did not finish within 2 min: pod campaign-0-x \(shard 1, node w1\) running; "
                                       r"pod campaign-1-x \(shard 2, node w1\) running; 1 pod\(s\) not created"):
        run.wait_and_collect(cluster, PLAN, tmp_path / "out", timeout=120)


def test_an_index_the_job_failed_with_no_pod_left_is_lost(tmp_path, fast, monkeypatch):
    folders = {"campaign-0-x": _shard_folder(tmp_path, 1, 3, {"test_scenario[upstream-s1]": ""}, 0)}
    cluster = FakeCluster([[_pod(0, ready=True)]], folders, failed_indexes="1-2")
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    outcome = run.wait_and_collect(cluster, PLAN, tmp_path / "out", 60)
    assert outcome.shards[2].lost == outcome.shards[3].lost == "the Job marked this shard failed and its pod is gone"


def test_no_results_at_all_is_one_error(tmp_path):
    outcome = run.Outcome({1: run.Shard(1, "p", "w1", lost="Evicted")})
    with pytest.raises(KitError, match="no shard's results came back"):
        run.report(outcome, tmp_path, 1)


# --- nodes --------------------------------------------------------------------------


def _node(name, taints=(), labels=None, annotations=None, unschedulable=None):
    return client.V1Node(metadata=client.V1ObjectMeta(name=name, labels=labels, annotations=annotations),
                         spec=client.V1NodeSpec(taints=[client.V1Taint(key=k, effect=e) for k, e in taints] or None,
                                                unschedulable=unschedulable))


def test_the_image_goes_only_to_nodes_a_shard_can_run_on():
    found = nodes.schedulable([
        _node("c-worker2"), _node("c-worker"),
        _node("c-control-plane", taints=[("node-role.kubernetes.io/control-plane", "NoSchedule")]),
        _node("kwok-1", labels={"type": "kwok"}, annotations={"kwok.x-k8s.io/node": "fake"}),
        _node("cordoned", unschedulable=True), _node("prefer", taints=[("x", "PreferNoSchedule")])])
    assert found == ["c-worker", "c-worker2", "prefer"]


def test_containerd_names_docker_s_short_image_names_in_full():
    assert nodes.refs("prioritykit/runner:v1-abc") == {"prioritykit/runner:v1-abc", "docker.io/prioritykit/runner:v1-abc"}
    assert nodes.refs("registry.example:5000/r:1") == {"registry.example:5000/r:1"}
    assert nodes.remove_command("n1", "prioritykit/runner:v1-abc")[-1] == "docker.io/prioritykit/runner:v1-abc"


# --- the runner image's inputs (no Docker) ------------------------------------------


def test_the_image_takes_the_kit_s_tracked_files_and_its_runtime_dependencies():
    files = runner_image.sources()
    assert "kit" in files and "harness/build/runner_image.py" in files and "pyproject.toml" in files
    assert not any(f.startswith((".venv/", "artifacts/")) for f in files)
    reqs = runner_image.requirements()
    assert any(r.startswith("kubernetes") for r in reqs) and any(r.startswith("setuptools") for r in reqs)
    assert not any(r.startswith(("freezegun", "selenium")) for r in reqs)  # test extras stay out


def test_wheels_are_chosen_for_every_manylinux_tag_up_to_the_image_s_glibc():
    got = runner_image.platforms("2.36", "x86_64")
    assert got[0] == "manylinux_2_36_x86_64" and "manylinux_2_17_x86_64" in got and "manylinux_2_5_x86_64" in got
    assert got[-3:] == ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
    assert "manylinux_2_37_x86_64" not in got


def test_the_tag_follows_the_content(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "wheel.whl").write_bytes(b"w")
    args = ("1.35", "suite: bookworm\n", "go1.26 linux amd64", ["a.py"], {}, [tmp_path / "wheel.whl"])
    tag = runner_image.tag_for(*args, repo=tmp_path)
    assert tag.startswith("prioritykit/runner:v1.35.") and tag == runner_image.tag_for(*args, repo=tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert runner_image.tag_for(*args, repo=tmp_path) != tag


# --- bad input ----------------------------------------------------------------------


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
