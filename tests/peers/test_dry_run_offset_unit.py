"""Peer cases: kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
TestDryRunPreemption, "preemption offset across multiple scheduling cycles and wrap around" (v1.34.4,
v1.35.8 and v1.37.2 alike), through the model's dry run (reference.preemption.dry_run) and the
node-by-node walk it stands for (reference.candidates.visited_from). Each test names its upstream
case and is the ``test:`` of that case per release in peers/upstream-cases.yaml; the facts (five
nodes, the pods and their sizes, the args, each cycle's offset and candidates) are the upstream
row's, written anew.

Upstream draws each cycle's offset from a random source it seeds with 4 and checks the nodes one at
a time (no parallelism): the draws over five nodes are 4, 1 and 3, which the row's own comments
state. The model does not reproduce Go's random source; the row's draws are its input here, and the
model decides what the dry run holds when it stops from each. Builders: upstream_tables.py.
"""

from __future__ import annotations

import pytest

from reference import filter as flt
from reference import preemption
from reference.candidates import num_candidates, pick_nodes, visited_from

from tests.builders import T0
from tests.peers.upstream_tables import HIGH, LARGE, MID, UPSTREAM, big_node, cluster, names, pod

DRAWS = (4, 1, 3)  # the seeded source's offsets, cycle after cycle
EXPECTED = ({"node1", "node5"}, {"node2", "node3"}, {"node4", "node5"})


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.37"])
def test_offset_across_cycles_wraps_around(release):
    """Five nodes of the very large size, each running one mid pod of the large size; three high
    preemptors of the large size (tp1, tp2, tp3), one per cycle. The args ask for at least 40% of
    the nodes and at least 1: 2 candidates. Starting at offset 4 the walk takes node5 then wraps to
    node1; at 1, node2 and node3; at 3, node4 and node5; each candidate's one victim is its node's pod."""
    nodes = [big_node(f"node{i}") for i in range(1, 6)]
    running = [pod(f"p{i}", MID, on=f"node{i}", size=LARGE) for i in range(1, 6)]
    state = cluster(nodes, running + [pod(f"tp{c}", HIGH, size=LARGE) for c in (1, 2, 3)])
    wanted = num_candidates(len(nodes), percentage=40, absolute=1)
    assert wanted == 2
    for cycle, (offset, expected) in enumerate(zip(DRAWS, EXPECTED), start=1):
        preemptor = state.pod_keyed(f"default/tp{cycle}")
        statuses = {n.name: flt.Status(flt.UNSCHEDULABLE) for n in nodes}
        verdicts = preemption.dry_run(state, preemptor, UPSTREAM, T0, statuses)
        held = visited_from(verdicts, offset, wanted)
        assert {v.node for v in held} == expected, f"cycle {cycle}"
        assert all(names(v.victims) == [f"p{v.node[-1]}"] and v.pdb_violations == 0 for v in held)
        # Whatever the draw, the node chosen from such a sample is one pick_nodes allows.
        allowed, _ = pick_nodes([v for v in verdicts if v.candidate], state, T0, wanted)
        best, _ = pick_nodes(held, state, T0)
        assert best <= allowed
