"""How long the model takes to predict one preemption on large generated clusters.

Prints one line per cluster size. Target: <= 200 ms at 1,000 nodes.
Run: ./kit bench model
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference.objects import ClusterState, Node, Pod, PriorityClass  # noqa: E402
from reference.preemption import predict  # noqa: E402

from harness.kube import SLOT  # noqa: E402
from harness.targets import BUILDS  # noqa: E402

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PODS_PER_NODE = 30


def cluster(nodes: int, seed: int = 1) -> ClusterState:
    rng = random.Random(seed)
    classes = tuple(PriorityClass(f"c{v}", v) for v in (10, 20, 30, 40))
    ns = tuple(Node(f"n{i}", allocatable=(("pods", 110), (SLOT, PODS_PER_NODE))) for i in range(nodes))
    pods = []
    for n in ns:
        for j in range(PODS_PER_NODE):
            c = rng.choice(classes)
            t = NOW - timedelta(seconds=rng.randint(1, 10_000))
            pods.append(Pod(f"{n.name}-p{j}", priority_class_name=c.name, priority=c.value, requests=((SLOT, 1),),
                            node_name=n.name, scheduled_at=t, start_time=t))
    pods.append(Pod("preemptor", priority=1000, requests=((SLOT, 3),)))
    return ClusterState(classes, ns, tuple(pods))


def main() -> None:
    print(f"one preemption prediction, {PODS_PER_NODE} pods per node (median of repeated runs on one state)")
    for nodes in (100, 1_000, 5_000):
        for build in BUILDS:
            state = cluster(nodes)  # fresh: the first call also builds the state's indexes
            t0 = time.perf_counter()
            predict(state, "default/preemptor", build, NOW)
            first = time.perf_counter() - t0
            runs = []
            for _ in range(3 if nodes >= 5000 else 5):
                t0 = time.perf_counter()
                pr = predict(state, "default/preemptor", build, NOW)
                runs.append(time.perf_counter() - t0)
            print(f"  {nodes:>5} nodes, {nodes * PODS_PER_NODE:>6} pods, {build:<8}: "
                  f"{statistics.median(runs) * 1000:8.1f} ms  (first call, with indexing: {first * 1000:7.1f} ms)"
                  f"  -> {pr.outcome} on {len(pr.nodes)} node(s)")


if __name__ == "__main__":
    main()
