"""The campaign's Indexed Job: one pod per shard, what each pod runs and needs."""

from __future__ import annotations

import subprocess

import pytest

from tests.campaign.fakes import PLAN
from harness.build import runner_image
from harness.campaign import job, run


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
