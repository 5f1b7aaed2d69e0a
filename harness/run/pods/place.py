"""Placing a pod scenario: its nodes claimed from a node source, its initial pods where it says."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from harness.errors import KitError
from harness.formats.pods import Scenario
from harness.host import lifecycle
from harness.run.pods.act import PodClient
from harness.run.pods.history import PodLog, Version

INITIAL_POD_TIMEOUT = 30.0


def claim_nodes(scenario: Scenario, act: PodClient) -> None:
    """Claim a cluster node for each scenario node; the client's ``claimed`` (scenario node ->
    cluster node) fills as it goes, so a failure half-way still releases the ones claimed."""
    for n in scenario.nodes:
        act.claim_node(n)


def place_initial_pods(scenario: Scenario, act: PodClient, history: PodLog,
                       cancel: threading.Event | None = None) -> None:
    """Initial pods land where the scenario says, through the real scheduler (so they get PodScheduled).

    Each is pinned to its node by the node's hostname label. Changing nodes instead (a taint,
    a cordon) would be a node event, and every node event retries every parked pod in the
    cluster: with scenarios side by side, the kit's own placement kept waking other
    scenarios' preemptors, which provoked the scheduler's repeated-preemption race far more
    often than a cluster sees. bypassScheduler pods are bound directly. Each pod is waited
    for in the recorded history, so the first step's world is read from versions already there.
    """
    last_start: dict[str, datetime] = {}
    gangs = {g.name for g in scenario.podGroups if g.minCount and g.minCount > 1}
    created: set[str] = set()
    for p in scenario.pods:
        target = act.names.node_name(p.node)
        if p.name in created:
            pass  # created with the rest of its gang, which binds none before minCount exist
        elif p.group in gangs:
            for q in scenario.pods:
                if q.group == p.group:
                    act.create_pod(q, pin_to=act.names.node_name(q.node))
                    created.add(q.name)
        elif p.node in last_start:
            # The model places initial pods in order, each starting after the one before, and
            # victims on a node are ranked by start time among equal priorities. The API keeps
            # whole seconds, so two pods of one node started in the same second would tie, and
            # the scheduler's order among them would be its free choice: start a second later.
            lifecycle.pause((last_start[p.node] + timedelta(seconds=1) - datetime.now(timezone.utc)).total_seconds(),
                            cancel)
        if p.name in created:
            pass
        elif p.bypassScheduler:
            act.create_pod(p, node_name=target)
        else:
            act.create_pod(p, pin_to=target)

        def settled(v: Version, target=target) -> bool:
            return bool(v.pod.spec.node_name and v.pod.spec.node_name != target) or v.pod.status.phase == "Running"

        pod = history.first(p.name, settled, INITIAL_POD_TIMEOUT, f"initial pod {p.name} to run on {p.node}", cancel).pod
        if pod.spec.node_name != target:
            raise KitError(f"initial pod {p.name} landed on {pod.spec.node_name}, not {target}")
        if pod.status.start_time is not None:
            last_start[p.node] = pod.status.start_time
    if scenario.pdbs:
        act.wait_pdbs_current()
