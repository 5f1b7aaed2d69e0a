"""PID-pressure scenarios: the format, the model's ranking by priority then processes, the pod
objects that run processes, and the kubelet configuration the kit writes (no cluster: the kind side
is exercised by `./kit conformance --cluster kind -m eviction -k pids`)."""

from __future__ import annotations

import pytest
import yaml

from harness.clusters import kubelet
from harness.formats.common import ScenarioError
from harness.formats.pods import PodSpec, load
from harness.run.names import Names
from harness.run.pods.manifests import v1_pod
from harness.run.pods.expectation import simulate
from reference.scheduler import view

from tests.formats.files import written

BASE = """
id: {id}
title: t
spec: s
areas: [eviction]
priorityClasses:
  - {{name: low, value: 1}}
  - {{name: high, value: 9}}
nodes:
  - {{name: n1, slots: 3}}
pods:
  - {{name: a, class: low, node: n1, processes: {a}}}
  - {{name: b, class: high, node: n1, processes: 400, qos: Burstable, memoryRequest: 1Gi}}
  - {{name: c, class: low, node: n1, writes: 900Mi, memory: 500Mi}}
steps:
  - pressure: {{node: n1, resource: pids}}
    expect: {{evicted: [{victim}]}}
"""


def scenario(tmp_path, a="100", victim="a"):
    return load(written(tmp_path, BASE, a=a, victim=victim))


def test_pid_pressure_ranks_by_priority_then_processes_with_no_requests_step(tmp_path):
    # b runs the most processes but is of the higher priority; c runs none, holds the most memory
    # and disk: of the low pods a goes, and no request (b's memory) enters the ranking.
    s = scenario(tmp_path)
    assert s.needs_kubelet and s.pods[0].processes == 100
    seen = view(simulate(s, "upstream")[-1])
    assert seen["a"].phase == "evicted" and seen["b"].phase == "running" and seen["c"].phase == "running"


def test_processes_are_checked_with_their_place(tmp_path):
    with pytest.raises(ScenarioError, match=r"pods\[0\]\.processes"):
        scenario(tmp_path, a="-1")
    with pytest.raises(ScenarioError, match=r"pods\[0\]\.processes"):
        scenario(tmp_path, a="5000")


def test_a_pod_with_processes_starts_that_many_sleepers_and_holds_on():
    pod = v1_pod(PodSpec(name="p", processes=40), Names.for_pods("x", "r"), "img")
    script = pod.spec.containers[0].command[-1]
    assert "-lt 40 ]; do /busybox sleep 86400 &" in script
    assert script.endswith("while :; do /busybox sleep 1; done")  # it still ignores SIGTERM and stays


def test_the_pid_threshold_is_added_to_the_kubelets_own():
    conf = yaml.safe_load("evictionHard: {nodefs.available: 1Gi}\nkind: KubeletConfiguration\n")
    out = kubelet.with_threshold(conf, "pid.available", "32000")
    assert out["evictionHard"] == {"nodefs.available": "1Gi", "pid.available": "32000"}
    assert conf["evictionHard"] == {"nodefs.available": "1Gi"}  # the original, put back after, untouched
