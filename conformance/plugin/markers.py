"""The suite's markers, registered by the plugin itself: a run from another repository (``pytest
--pyargs conformance``) reads that repository's pytest configuration, not the kit's, and
``--strict-markers`` there must still know ``-m toleration``."""

from __future__ import annotations

import pytest

from reference import podgroup

MARKERS = [
    "cluster: needs a running cluster (the conformance suite)",
    "smoke: the minimal end-to-end check of a scheduler build",
    "admission: priority admission and PriorityClass validation",
    "queue: scheduling queue order and retries",
    "preemption: victim and node choice",
    "nonpreempting: preemptionPolicy Never",
    "pdb: PodDisruptionBudgets during preemption",
    "toleration: the PreemptionToleration policy",
    "filter: which nodes are preemption candidates",
    "eviction: the kubelet's node-pressure eviction ranking, and preemption ignoring QoS",
    f"podgroup: pod groups: gang scheduling and workload-aware preemption ({podgroup.SINCE}+, feature gates)",
    "needs_kubelet: node pressure: runs only on real kubelets (--cluster kind), skipped elsewhere",
    "karmada: Karmada binding priority (--system karmada)",
    "real_kubelets: a scenario again on a kind cluster's real kubelets (--cluster kind)",
    "local_clusters: starts local clusters of its own (not run with --cluster kind or --kubeconfig)",
]


def names() -> set[str]:
    return {m.split(":")[0] for m in MARKERS}


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
