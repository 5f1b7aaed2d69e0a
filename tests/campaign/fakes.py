"""What the campaign's tests share: a plan, pods and nodes as the API returns them, a shard's
results folder, and a cluster that answers as a campaign's would."""

from __future__ import annotations

import base64
import io
import json
import tarfile
from pathlib import Path
from types import SimpleNamespace

from kubernetes import client

from harness.campaign import collect, job

PLAN = job.Plan(namespace="prioritykit-campaign-1", image="prioritykit/runner:v1.35.8-abc", shards=3,
                scheduler="upstream", pytest_args=("-k", "preempt and not slow"), run_id="r1")


# --- the manifest -------------------------------------------------------------------


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


def _node(name, taints=(), labels=None, annotations=None, unschedulable=None):
    return client.V1Node(metadata=client.V1ObjectMeta(name=name, labels=labels, annotations=annotations),
                         spec=client.V1NodeSpec(taints=[client.V1Taint(key=k, effect=e) for k, e in taints] or None,
                                                unschedulable=unschedulable))


def _archive(folder: Path) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(folder), arcname=".")
    return base64.b64encode(buf.getvalue()).decode()
