"""`./kit matrix --kubeconfig`: the preemption matrix of a real cluster's classes, read only.

The seed use case's classes (KEP, PreemptionToleration) are created under a run
prefix; the command reads every class of the cluster and must give, for those,
what the model gives; it must change nothing.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from harness.cli import main as cli_main
from harness.kube import Kube

pytestmark = [pytest.mark.cluster, pytest.mark.toleration]

ANN = "preemption-toleration.scheduling.x-k8s.io/"
KEP = {  # name: (value, minimum-preemptable-priority, toleration-seconds)
    "system-critical": (10000, None, None),
    "high": (9000, None, None),
    "low-non-preempted": (8000, 10000, -1),
    "low-non-preempted-10min": (8000, 10000, 600),
    "low": (8000, None, None),
}


def test_the_matrix_of_a_live_cluster_reads_its_classes_and_changes_nothing(kube: Kube, run_id: str, capsys):
    names = {n: f"matrix-{run_id}-{n}" for n in KEP}
    try:
        for n, (value, mpp, ts) in KEP.items():
            ann = {k: str(v) for k, v in ((ANN + "minimum-preemptable-priority", mpp), (ANN + "toleration-seconds", ts))
                   if v is not None}
            kube.scheduling.create_priority_class(client.V1PriorityClass(
                metadata=client.V1ObjectMeta(name=names[n], annotations=ann or None), value=value))
        # Only this test's classes: scenarios on the same cluster create, change and delete theirs meanwhile.
        before = _versions(kube, names.values())
        capsys.readouterr()
        assert cli_main(["matrix", "--kubeconfig", str(kube.kubeconfig), "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        after = _versions(kube, names.values())
        assert before == after, "the matrix must only read"
        got = {(r["build"], r["preemptor"], r["victim"]): r["verdict"] for r in rows}
        want = {
            ("plugins", "high", "low-non-preempted"): "never",
            ("plugins", "high", "low-non-preempted-10min"): "after 600s",
            ("plugins", "high", "low"): "immediately",
            ("plugins", "system-critical", "low-non-preempted"): "immediately",
            ("plugins", "low", "high"): "no",
            ("upstream", "high", "low-non-preempted"): "immediately",
            ("upstream", "high", "low-non-preempted-10min"): "immediately",
        }
        assert {k: got[k[0], names[k[1]], names[k[2]]] for k in want} == want
    finally:
        for name in names.values():
            try:
                kube.scheduling.delete_priority_class(name)
            except client.exceptions.ApiException as e:
                if e.status != 404:
                    raise


def _versions(kube: Kube, names) -> dict[str, str]:
    mine = set(names)
    return {pc.metadata.name: pc.metadata.resource_version
            for pc in kube.scheduling.list_priority_class().items if pc.metadata.name in mine}
