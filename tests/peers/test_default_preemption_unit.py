"""Peer cases: kubernetes v1.35.8 pkg/scheduler/framework/plugins/defaultpreemption
default_preemption_test.go, through the model's preemption (reference.preemption,
reference.candidates) at release "1.35". Each test names its upstream function and case, and is
the ``test:`` of that case in peers/upstream-cases.yaml; the facts (capacities, requests,
priorities, start times, labels, budgets, expected victims, nodes and messages) are the upstream
rows', written anew. The rows are those 1.37.2 has too (default_preemption_rows.py); the builders,
conventions and harness are upstream_tables.py's.
"""

from __future__ import annotations

import pytest

from tests.peers.default_preemption_rows import (
    DRY_RUN,
    ELIGIBLE,
    FAKE_FILTERS,
    POST_FILTER,
    PREEMPT,
    SELECT_BEST,
    check_dry_run_looks_past_num_candidates,
    check_dry_run_with_test_filter,
    check_eligible,
    check_post_filter,
    check_preempt,
    check_select_best,
)
from tests.peers.upstream_tables import cluster, dry_run

RELEASE = "1.35"


@pytest.mark.parametrize("row, nominated, victims, message", POST_FILTER)
def test_post_filter(monkeypatch, row, nominated, victims, message):
    """TestPostFilter: PostFilter with the row's filter statuses nominates ``nominated`` (or, when
    empty, clears the nomination and fails with ``message``)."""
    check_post_filter(monkeypatch, RELEASE, row, nominated, victims, message)


@pytest.mark.parametrize("nodes, pods, pdbs, candidates", DRY_RUN)
def test_dry_run_preemption(nodes, pods, pdbs, candidates):
    """TestDryRunPreemption: the dry run over every node finds these candidates (victims, PDB violations)."""
    assert dry_run(cluster(nodes, pods, pdbs), "p") == candidates


@pytest.mark.parametrize("plugin, preemptor", FAKE_FILTERS)
def test_dry_run_preemption_with_test_filter(monkeypatch, plugin, preemptor):
    """TestDryRunPreemption, the rows whose profile has one test filter plugin and no NodeResourcesFit."""
    check_dry_run_with_test_filter(monkeypatch, plugin, preemptor)


def test_dry_run_looks_past_num_candidates_for_a_pdb_clean_node():
    """TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB violating node is found"."""
    check_dry_run_looks_past_num_candidates(RELEASE)


@pytest.mark.parametrize("n, preemptor, pods, best", SELECT_BEST)
def test_select_best_candidate(n, preemptor, pods, best):
    """TestSelectBestCandidate: the node chosen is one of ``best``."""
    check_select_best(RELEASE, n, preemptor, pods, best)


@pytest.mark.parametrize("preemptor, pods, groups, nodes, nominated_status, gates, want", ELIGIBLE)
def test_pod_eligible_to_preempt_others(preemptor, pods, groups, nodes, nominated_status, gates, want):
    """TestPodEligibleToPreemptOthers: whether the pod may preempt at all."""
    check_eligible(RELEASE, preemptor, pods, groups, nodes, nominated_status, gates, want)


@pytest.mark.parametrize("policy, nominated, victims", PREEMPT)
def test_preempt(monkeypatch, policy, nominated, victims):
    """TestPreempt: the preemptor's nomination and victims, then no second preemption."""
    check_preempt(monkeypatch, RELEASE, policy, nominated, victims)
