"""Each preemption's phases, read from a recorded history (harness.run.pods.timings), and the
run's summary of them (conformance.plugin.reporting)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from unittest import mock

from kubernetes import client

from conformance.plugin.reporting import latency_lines, write_timings
from harness.run.pods.history import PodLog
from harness.run.pods.timings import preemptions

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pod(name: str, uid: str, node: str = "", nominated: str = "", deleting: bool = False, phase: str = "Pending"):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, uid=uid, creation_timestamp=T,
                                     deletion_timestamp=T if deleting else None),
        spec=client.V1PodSpec(containers=[], node_name=node or None),
        status=client.V1PodStatus(phase=phase, nominated_node_name=nominated or None))


def preempted(victim: str, preemptor_uid: str, node: str):
    return client.CoreV1Event(metadata=client.V1ObjectMeta(name=f"{victim}.1"), reason="Preempted",
                              involved_object=client.V1ObjectReference(name=victim),
                              message=f"Preempted by pod {preemptor_uid} on node {node}")


def test_phases_are_read_from_the_versions_in_the_order_they_arrived():
    log = PodLog()
    clock = iter([100.0, 100.5, 100.6, 101.0, 106.0, 106.2])
    with mock.patch("harness.run.pods.history.time.time", side_effect=lambda: next(clock)):
        log.add("ADDED", pod("p", "u-p"))                              # 100.0 created
        log.add("MODIFIED", pod("p", "u-p", nominated="n1"))           # 100.5 nominated
        log.add("ADDED", pod("v", "u-v", node="n1"))                   # 100.6 (the victim, first seen)
        log.add("MODIFIED", pod("v", "u-v", node="n1", deleting=True))  # 101.0 deletion asked for
        log.add("DELETED", pod("v", "u-v", node="n1", deleting=True))   # 106.0 gone
        log.add("MODIFIED", pod("p", "u-p", node="n1", nominated="n1"))  # 106.2 bound
    log.add_event("ADDED", preempted("v", "u-p", "n1"))
    [t] = preemptions(log)
    assert (t.preemptor, t.node, t.victims) == ("p", "n1", ("v",))
    assert (t.nominated, t.victims_deleting, t.victims_gone, t.bound) == (0.5, 1.0, 6.0, 6.2)


def test_a_victim_still_terminating_leaves_gone_and_bound_open():
    log = PodLog()
    log.add("ADDED", pod("p", "u-p", nominated="n1"))
    log.add("ADDED", pod("v", "u-v", node="n1", deleting=True))
    log.add_event("ADDED", preempted("v", "u-p", "n1"))
    [t] = preemptions(log)
    assert t.victims_gone is None and t.bound is None and t.nominated == 0.0


def test_the_summary_gives_median_and_worst_per_build(tmp_path):
    records = [{"build": "plugins", "nominated": 0.1, "bound": b} for b in (1.0, 2.0, 9.0)]
    records += [{"build": "upstream", "nominated": 0.2, "bound": None}]
    lines = latency_lines(records)
    assert lines[0] == ("[plugins] 3 preemptions; created to nominated: median 0.10 s, worst 0.10 s; "
                        "created to bound: median 2.00 s, worst 9.00 s")
    assert lines[1] == "[upstream] 1 preemptions; created to nominated: median 0.20 s, worst 0.20 s"
    assert json.loads(write_timings(records, tmp_path).read_text()) == records
