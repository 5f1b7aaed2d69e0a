"""Node-pressure scenarios: the format, the model's step, the objects the kit makes and what it
reads back (no cluster: the kind side is exercised by `./kit conformance --cluster kind -m eviction`)."""

from __future__ import annotations

import textwrap

import pytest
from kubernetes import client

from harness.clusters import kind, pressure
from harness.formats.common import ScenarioError
from harness.formats.pods import load
from harness.run.names import Names
from harness.run.pods.manifests import v1_pod
from harness.run.pods.check import evicted_for_pressure
from harness.run.pods.expectation import check_expect, simulate
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
  - {{name: a, class: low, node: n1, writes: {a}}}
  - {{name: b, class: high, node: n1, writes: 300Mi}}
steps:
  - pressure: {{node: {node}}}
    expect: {{evicted: [a]}}
"""


def scenario(tmp_path, name="case", a="200Mi", node="n1", extra=""):
    return load(written(tmp_path, BASE, name, extra, a=a, node=node))


def error_of(tmp_path, **kw) -> str:
    with pytest.raises(ScenarioError) as e:
        scenario(tmp_path, **kw)
    return str(e.value)


def test_a_pressure_scenario_loads_needs_a_kubelet_and_the_model_evicts_by_the_ranking(tmp_path):
    s = scenario(tmp_path)
    assert s.needs_kubelet and s.pods[0].writes == 200 * MI
    worlds = simulate(s, "upstream")
    seen = view(worlds[-1])
    assert seen["a"].phase == "evicted" and seen["a"].node == "n1" and seen["b"].phase == "running"
    assert check_expect(s.steps[0].expect, seen, {}) == []
    assert any("the kubelet ranks: a (over its request by 200Mi, priority 1)" in line for line in worlds[-1].log)


def test_bad_quantities_and_dangling_nodes_are_named(tmp_path):
    assert "pods[0].writes" in error_of(tmp_path, a="lots") and "not a quantity" in error_of(tmp_path, a="lots")
    assert "whole mebibytes" in error_of(tmp_path, a="1000k")
    assert "steps[0].pressure.node: no node named 'n9'" in error_of(tmp_path, node="n9")


def test_pressure_is_the_last_action(tmp_path):
    extra = "  - createPod: {name: late, class: low}\n"
    assert "steps[0].pressure: node pressure must be the scenario's last action" in error_of(tmp_path, extra=extra)


def test_a_tie_in_the_ranking_is_an_error_naming_the_step(tmp_path):
    # Same priority, same use over the same (no) request: the kubelet's choice would be chance.
    s = scenario(tmp_path)
    tied = s.model_copy(update={"pods": [p.model_copy(update={"priorityClassName": "low", "writes": 300 * MI})
                                         for p in s.pods]})
    with pytest.raises(ScenarioError, match=r"steps\[0\].pressure: the kubelet's ranking ties between default/a, default/b"):
        simulate(tied, "upstream")


def test_system_classes_need_not_be_declared_and_make_a_critical_pod(tmp_path):
    s = scenario(tmp_path)
    crit = s.model_copy(update={"pods": [s.pods[0].model_copy(update={"priorityClassName": "system-node-critical",
                                                                        "writes": 400 * MI}), s.pods[1]]})
    # The critical pod ranks first (over its request, most over) but is passed over.
    seen = view(simulate(crit, "upstream")[-1])
    assert seen["a"].phase == "running" and seen["b"].phase == "evicted"


def test_pod_objects_carry_qos_storage_request_and_the_writer():
    s_pod = load_pod(qos="Guaranteed", storageRequest=100 * MI, writes=200 * MI)
    pod = v1_pod(s_pod, Names.for_pods("x", "r"), "img")
    c = pod.spec.containers[0]
    assert c.resources.requests["cpu"] == c.resources.limits["cpu"] and c.resources.requests["memory"]
    assert c.resources.requests["ephemeral-storage"] == str(100 * MI) and "ephemeral-storage" not in c.resources.limits
    assert "count=200" in c.command[-1] and c.volume_mounts[0].mount_path == "/data"
    assert pod.spec.volumes[0].empty_dir.size_limit is None  # a sizeLimit would evict by limit, not by rank
    burstable = v1_pod(load_pod(qos="Burstable"), Names.for_pods("x", "r"), "img").spec.containers[0].resources
    assert "cpu" in burstable.requests and "cpu" not in (burstable.limits or {})
    plain = v1_pod(load_pod(), Names.for_pods("x", "r"), "img")
    assert plain.spec.volumes is None and plain.spec.containers[0].command is None


def load_pod(**fields):
    from harness.formats.pods import PodSpec

    return PodSpec(name="p", **fields)


def evicted_pod(message="The node was low on resource: ephemeral-storage. ", disruption="TerminationByKubelet"):
    conds = [client.V1PodCondition(type="DisruptionTarget", status="True", reason=disruption)] if disruption else []
    return client.V1Pod(status=client.V1PodStatus(phase="Failed", reason="Evicted", message=message, conditions=conds))


def test_only_a_pressure_eviction_counts_as_evicted():
    assert evicted_for_pressure(evicted_pod())
    # A limit eviction: no DisruptionTarget, another message. A pod refused under pressure: "Pod was rejected".
    assert not evicted_for_pressure(evicted_pod("Pod ephemeral local storage usage exceeds the total limit", None))
    assert not evicted_for_pressure(evicted_pod("Pod was rejected: The node had condition: [DiskPressure]. ", None))


def test_the_threshold_comes_from_kind_config():
    from harness.kube import NODE_STORAGE

    # The fixed node filesystem leaves pods more than the model's room for them (ext4's own
    # overhead is a few percent) ...
    assert pressure.NODEFS_SIZE - kind.NODEFS_THRESHOLD > NODE_STORAGE * 1.5
    # ... and the threshold is no less than all they may write: any shortfall fits above an empty disk.
    assert kind.NODEFS_THRESHOLD >= NODE_STORAGE


def test_all_pods_together_write_no_more_than_a_node_holds(tmp_path):
    extra = "  - expect: {running: {b: n1}}\n"
    assert "writes: the scenario's pods write 1600Mi in all" in error_of(tmp_path, a="1300Mi", extra=extra)


def test_a_batch_on_kwok_nodes_reports_node_pressure_as_not_run_and_runs_the_rest(tmp_path, monkeypatch):
    """Run on kwok nodes a pressure scenario could only error, and with -x that error would stop
    every other scenario of the batch (seen in a kill matrix: mutants 'survived' a stopped batch)."""
    from types import SimpleNamespace

    from harness.run.pods import batch as batch_module
    from harness.run.pods.nodes import KwokNodes, RealNodes
    from harness.run.pods.verdict import Verdict, verdict

    pressure_scenario = scenario(tmp_path, "needs-kubelet")
    plain = load_plain(tmp_path)
    ran = []

    class FakeRun:
        def __init__(self, s):
            self.s = s
            self.result = SimpleNamespace(gates="")
            self.cancel = SimpleNamespace(set=lambda: None)

        def run(self):
            from harness.run.pods.result import Result
            ran.append(self.s.id)
            return Result(self.s, "upstream")

    b = batch_module.Batch([pressure_scenario, plain], kube=SimpleNamespace(kubeconfig=tmp_path / "kc"), local=None,
                           build="upstream", run_id="r", nodes=KwokNodes(), stop_at_first_failure=True, release="1.35")
    monkeypatch.setattr(b, "_run", lambda kubeconfig, s, copy, log, cluster=None: FakeRun(s))
    b.run()
    assert ran == [plain.id]
    result = b.results[pressure_scenario.id, 0]
    assert "needs real kubelets" in result.unmet and verdict(result, "upstream", "1.35") is Verdict.UNMET
    assert RealNodes([]).kubelets and not KwokNodes().kubelets


def load_plain(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(textwrap.dedent("""
        id: plain
        title: t
        spec: s
        areas: [preemption]
        nodes: [{name: n1}]
        steps: [{wait: 1s}]
    """))
    return load(path)
