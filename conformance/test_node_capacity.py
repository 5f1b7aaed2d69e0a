"""The kind path's node-capacity patching, exercised on the local cluster.

On kind, scenario room is given to real nodes by patching the extended
resource into node status; here a kwok node stands in for a kind worker.
"""

from __future__ import annotations

import pytest
from kubernetes import client

from harness.kube import PAUSE_IMAGE, SLOT, Kube

from harness.host.wait import NotYet, wait_for
from harness.run.pods.nodes import RealNodes
from harness.targets import slug

pytestmark = [pytest.mark.cluster]


def test_slots_patched_into_node_status_are_what_the_scheduler_counts(kube: Kube, run_id: str, build: str):
    node, ns = f"lent-{slug(build)}-{run_id}", f"capacity-{slug(build)}-{run_id}"
    kube.create_node(node, slots=0, run_id=run_id)
    kube.create_namespace(ns, run_id)
    lender = RealNodes([node])
    try:
        claimed = lender.claim(kube, "ignored", 2, run_id, labels={"capacity-test": ns}, taints=[])
        assert claimed == node
        status = kube.core.read_node(node).status
        assert status.capacity[SLOT] == "2" and status.allocatable[SLOT] == "2"
        for i in range(3):
            kube.core.create_namespaced_pod(ns, client.V1Pod(
                metadata=client.V1ObjectMeta(name=f"p{i}"),
                spec=client.V1PodSpec(node_selector={"capacity-test": ns}, termination_grace_period_seconds=0,
                                      containers=[client.V1Container(name="c", image=PAUSE_IMAGE,
                                                  resources=client.V1ResourceRequirements(limits={SLOT: "1"}))])))

        def two_bound_one_refused():
            pods = kube.pods(ns)
            bound = [p for p in pods if p.spec.node_name == node]
            refused = [p for p in pods if any(c.type == "PodScheduled" and c.status == "False"
                                              for c in (p.status.conditions or []))]
            if len(bound) != 2 or len(refused) != 1:
                raise NotYet(f"{len(bound)} bound, {len(refused)} refused")
            return refused[0]

        refused = wait_for(two_bound_one_refused, 30, "two pods bound and the third refused for lack of slots")
        assert "Insufficient example.com/slot" in next(
            c.message for c in refused.status.conditions if c.type == "PodScheduled")
        kube.delete_namespace(ns)
        lender.release(kube, node)
        after = kube.core.read_node(node)
        assert SLOT not in (after.status.capacity or {}) and SLOT not in (after.status.allocatable or {})
        assert "capacity-test" not in (after.metadata.labels or {})
    finally:
        kube.delete_namespace(ns)
        kube.core.delete_node(node)
