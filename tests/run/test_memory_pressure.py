"""Memory-pressure scenarios: the format, the model's ranking by memory, the pod objects that hold
memory, and the kubelet configuration the kit writes (no cluster: the kind side is exercised by
`./kit conformance --cluster kind -m eviction`)."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from harness.clusters.memory_pressure import squeezed
from harness.formats.common import ScenarioError
from harness.formats.pods import PodSpec, load
from harness.kube import QOS_MEMORY
from harness.run.names import Names
from harness.run.pods.manifests import v1_pod
from harness.run.pods.expectation import simulate
from reference.scheduler import view

from tests.formats.files import written

MI = 1 << 20

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
  - {{name: a, class: low, node: n1, memory: {a}}}
  - {{name: b, class: high, node: n1, memory: 600Mi, {b}}}
  - {{name: c, class: low, node: n1, writes: 900Mi}}
steps:
  - pressure: {{node: n1, resource: memory}}
    expect: {{evicted: [{victim}]}}
"""


def scenario(tmp_path, a="300Mi", b="qos: BestEffort", victim="a"):
    return load(written(tmp_path, BASE, a=a, b=b, victim=victim))


def test_memory_pressure_ranks_by_memory_not_by_disk(tmp_path):
    # c writes the most to disk and holds no memory: under memory pressure it is not the one to go.
    s = scenario(tmp_path)
    assert s.needs_kubelet and s.pods[0].memory == 300 * MI
    seen = view(simulate(s, "upstream")[-1])
    assert seen["a"].phase == "evicted" and seen["c"].phase == "running" and seen["b"].phase == "running"


def test_a_pod_within_its_memory_request_goes_after_one_over_it(tmp_path):
    # b, of the higher priority, is within its request: the low pods over theirs go first, the one
    # furthest over (a, 700Mi over nothing) before c (nothing held, nothing over).
    s = scenario(tmp_path, a="700Mi", b="qos: Burstable, memoryRequest: 1Gi")
    world = simulate(s, "upstream")[-1]
    assert view(world)["a"].phase == "evicted"
    assert any("b (within its request by 424Mi, priority 9)" in line for line in world.log)


def test_memory_fields_are_checked_with_their_place(tmp_path):
    with pytest.raises(ScenarioError, match=r"pods\[1\].*memoryRequest.*not BestEffort"):
        scenario(tmp_path, b="memoryRequest: 1Gi")
    with pytest.raises(ScenarioError, match=r"pods\[1\].*Guaranteed pod's memory limit is its request \(32Mi\)"):
        scenario(tmp_path, b="qos: Guaranteed")
    with pytest.raises(ScenarioError, match=r"pods\[0\]\.memory"):
        scenario(tmp_path, a="lots")
    with pytest.raises(ScenarioError, match="memory: the scenario's pods hold more than 2048Mi in all"):
        scenario(tmp_path, a="1500Mi")


def test_a_pod_holding_memory_gets_a_memory_backed_volume_and_its_request():
    pod = v1_pod(PodSpec(name="p", qos="Burstable", memoryRequest=256 * MI, memory=300 * MI, writes=100 * MI),
                 Names.for_pods("x", "r"), "img")
    c = pod.spec.containers[0]
    assert c.resources.requests["memory"] == str(256 * MI) and "memory" not in (c.resources.limits or {})
    mem = next(v for v in pod.spec.volumes if v.name == "mem")
    assert mem.empty_dir.medium == "Memory" and mem.empty_dir.size_limit is None
    assert {m.mount_path for m in c.volume_mounts} == {"/data", "/mem"}
    assert "of=/mem/fill bs=1M count=300" in c.command[-1] and "of=/data/fill bs=1M count=100" in c.command[-1]
    guaranteed = v1_pod(PodSpec(name="g", qos="Guaranteed"), Names.for_pods("x", "r"), "img").spec.containers[0]
    assert guaranteed.resources.limits["memory"] == guaranteed.resources.requests["memory"] == str(QOS_MEMORY)


def test_the_squeezed_kubelet_configuration_moves_only_the_memory_threshold_and_allocatable_enforcement():
    kind_config = yaml.safe_load(textwrap.dedent("""
        kind: KubeletConfiguration
        evictionHard: {nodefs.available: 1536Mi, imagefs.available: 0%}
        enforceNodeAllocatable: [pods]
        evictionPressureTransitionPeriod: 10s
    """))
    out = squeezed(kind_config, 5 << 30)
    assert out["evictionHard"] == {"nodefs.available": "1536Mi", "imagefs.available": "0%", "memory.available": str(5 << 30)}
    # Under a threshold near the host's size, the pods' allocatable signal would evict every pod.
    assert out["enforceNodeAllocatable"] == ["none"]
    assert out["evictionPressureTransitionPeriod"] == "10s" and kind_config["enforceNodeAllocatable"] == ["pods"]
