"""Peer cases: kubernetes pkg/scheduler/framework/plugins/defaultpreemption default_preemption_test.go
at v1.34.4 and v1.35.8, through the model's preemption (reference.preemption, reference.candidates)
at releases "1.34" and "1.35". Each test names its upstream function and case, and is the ``test:``
of that case, at each release it is parametrized by (the id's suffix), in peers/upstream-cases.yaml;
the facts (capacities, requests, priorities, start times, labels, budgets, expected victims, nodes
and messages) are the upstream rows', written anew.

The two releases' rows have the same facts (v1.34.4 differs only in type names: its filter status
map is still called NodeToStatusMap, and TestPodEligibleToPreemptOthers carries an unused feature
field), and 1.37.2 has them too: they are default_preemption_rows.py's and
default_preemption_sampling.py's. Where the model's answer depends on the release, it is the
model's release switches (reference.release) that decide, never the row. The builders, conventions
and harness are upstream_tables.py's.
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
    check_dry_run_with_test_filter,
    check_eligible,
    check_post_filter,
    check_preempt,
    check_select_best,
)
from tests.peers.default_preemption_sampling import (
    LIMITED,
    check_dry_run_limited_by_args,
    check_dry_run_looks_past_num_candidates,
)
from tests.peers.upstream_tables import cluster, dry_run

RELEASES = pytest.mark.parametrize("release", ["1.34", "1.35"])


@RELEASES
@pytest.mark.parametrize("row, nominated, victims, message", POST_FILTER)
def test_post_filter(monkeypatch, release, row, nominated, victims, message):
    """TestPostFilter: PostFilter with the row's filter statuses nominates ``nominated`` (or, when
    empty, clears the nomination and fails with ``message``)."""
    check_post_filter(monkeypatch, release, row, nominated, victims, message)


@RELEASES
@pytest.mark.parametrize("nodes, pods, pdbs, candidates", DRY_RUN)
def test_dry_run_preemption(release, nodes, pods, pdbs, candidates):
    """TestDryRunPreemption: the dry run over every node finds these candidates (victims, PDB
    violations); neither release weighs victims as pod groups, so the answer is the same."""
    assert dry_run(cluster(nodes, pods, pdbs), "p") == candidates


@RELEASES
@pytest.mark.parametrize("plugin, preemptor", FAKE_FILTERS)
def test_dry_run_preemption_with_test_filter(monkeypatch, release, plugin, preemptor):
    """TestDryRunPreemption, the rows whose profile has one test filter plugin and no NodeResourcesFit."""
    check_dry_run_with_test_filter(monkeypatch, plugin, preemptor)


@RELEASES
def test_dry_run_looks_past_num_candidates_for_a_pdb_clean_node(release):
    """TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB violating node is found"."""
    check_dry_run_looks_past_num_candidates(release)


@RELEASES
@pytest.mark.parametrize("higher, returned", LIMITED)
def test_dry_run_limited_by_preemption_args(release, higher, returned):
    """TestDryRunPreemption, the rows whose DefaultPreemptionArgs limit the dry run to 2 candidates."""
    check_dry_run_limited_by_args(release, higher, returned)


@RELEASES
@pytest.mark.parametrize("n, preemptor, pods, best", SELECT_BEST)
def test_select_best_candidate(release, n, preemptor, pods, best):
    """TestSelectBestCandidate: the node chosen is one of ``best``."""
    check_select_best(release, n, preemptor, pods, best)


@RELEASES
@pytest.mark.parametrize("preemptor, pods, groups, nodes, nominated_status, gates, want", ELIGIBLE)
def test_pod_eligible_to_preempt_others(release, preemptor, pods, groups, nodes, nominated_status, gates, want):
    """TestPodEligibleToPreemptOthers: whether the pod may preempt at all."""
    check_eligible(release, preemptor, pods, groups, nodes, nominated_status, gates, want)


@RELEASES
@pytest.mark.parametrize("policy, nominated, victims", PREEMPT)
def test_preempt(monkeypatch, release, policy, nominated, victims):
    """TestPreempt: the preemptor's nomination and victims, then no second preemption."""
    check_preempt(monkeypatch, release, policy, nominated, victims)
