"""The rows of kubernetes default_preemption_test.go (TestDryRunPreemption, v1.34.4, v1.35.8 and
v1.37.2 alike) whose dry run may stop early: DefaultPreemptionArgs ask for fewer candidates than
there are nodes, and upstream walks the nodes from an offset its test draws from a seeded random
source. The model has no offset (a real scheduler draws it afresh each cycle), so these checks hold
it to what it does decide: each candidate's victims and PDB violations, how many candidates the
args ask for (reference.candidates.num_candidates), and which nodes may then be chosen
(reference.candidates.pick_nodes with that sample). Builders and conventions: upstream_tables.py.
"""

from __future__ import annotations

import pytest

from reference.candidates import num_candidates, pick_nodes

from tests.builders import T0
from tests.peers.default_preemption_rows import FOO
from tests.peers.upstream_tables import HIGH, LARGE, MID, VERY_HIGH, big_node, budget, cluster, dry_run, pod, verdict


def _five_nodes(labels=None, higher=None):
    """Five nodes of the very large size, each with one pod of the large size, mid unless ``higher``
    gives its priority; the high preemptor p, of the large size too, fits nowhere as it is."""
    nodes = [big_node(f"node{i}") for i in range(1, 6)]
    pods = [pod("p", HIGH, size=LARGE)] + [
        pod(f"p{i}", (higher or {}).get(i, MID), on=f"node{i}", size=LARGE, labels=(labels or {}).get(i))
        for i in range(1, 6)]
    return nodes, pods


def check_dry_run_looks_past_num_candidates(release: str) -> None:
    """TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB violating node is
    found": five nodes, each with one mid pod of the large size; those on node1, node2 and node5
    carry app=foo, whose budget allows no disruption. With at least 40% and at least 2 candidates
    wanted, upstream's dry run (from its seeded offset) returns node1 and node5 (one violation
    each) and goes on to node3 (none). The model checks those candidates' victims and violations,
    the number wanted, and that whatever sample the dry run stops at holds a candidate that breaks
    no budget, so the node chosen is one (node3 among them)."""
    nodes, pods = _five_nodes(labels={i: FOO for i in (1, 2, 5)})
    state = cluster(nodes, pods, [budget("pdb", FOO, 0)])
    found = dry_run(state, "p")
    assert {n: found[n] for n in ("node1", "node3", "node5")} == {
        "node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}
    sample = num_candidates(len(nodes), percentage=40, absolute=2)
    assert sample == 2
    verdicts = [verdict(state, "p", n.name, release) for n in nodes]
    chosen, _ = pick_nodes([v for v in verdicts if v.candidate], state, T0, sample)
    assert "node3" in chosen and chosen <= {"node3", "node4"}


LIMITED = [
    # all nodes are possible candidates, but DefaultPreemptionArgs limits to 2 (40%, at least 1):
    # from its seeded offset (node5) upstream returns node5 and node1, each with its own pod
    pytest.param({}, {"node1", "node5"}, id="args-limit-all-candidates"),
    # some nodes are not possible candidates, DefaultPreemptionArgs limits to 2: the pods on node2 and
    # node5 are very high; from the same offset upstream passes node5, takes node1, passes node2 and
    # takes node3
    pytest.param({2: VERY_HIGH, 5: VERY_HIGH}, {"node1", "node3"}, id="args-limit-some-candidates"),
]


def check_dry_run_limited_by_args(release: str, higher: dict[int, int], returned: set[str]) -> None:
    """TestDryRunPreemption, the rows whose args (at least 40% of the nodes, at least 1) ask for 2
    candidates of five nodes: every node whose pod is below the preemptor is a candidate with that
    pod its one victim and no violation; the two upstream returns are among them; the args ask for
    exactly that many; and since all candidates tie, whichever two the dry run stops at, either may
    be chosen."""
    nodes, pods = _five_nodes(higher=higher)
    state = cluster(nodes, pods)
    found = dry_run(state, "p")
    assert found == {f"node{i}": ([f"p{i}"], 0) for i in range(1, 6) if i not in higher}
    sample = num_candidates(len(nodes), percentage=40, absolute=1)
    assert sample == len(returned) == 2 and returned <= set(found)
    verdicts = [verdict(state, "p", n.name, release) for n in nodes]
    chosen, _ = pick_nodes([v for v in verdicts if v.candidate], state, T0, sample)
    assert chosen == set(found)
