"""Recording without a cluster: the watch feed's continuity, and the pod history folded into the views
the runner judges by."""

import json
import threading
import time
from datetime import datetime, timezone

import pytest
from kubernetes import client

from harness.errors import KitError
from harness.run import record
from harness.run.names import Names
from harness.run.pods import check
from harness.run.pods.history import PodLog
from reference.scheduler import PodView

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


# --- the watch feed -------------------------------------------------------------------------


def raw_pod(name, rv):
    return {"metadata": {"name": name, "resourceVersion": str(rv)}, "spec": {"containers": [{"name": "c"}]}}


class Response:
    """A watch response as urllib3 gives it: lines of JSON events."""

    status = 200

    def __init__(self, events):
        self.events = events

    def stream(self, amt=None, decode_content=False):
        if not self.events:
            time.sleep(0.02)  # a quiet watch that times out
        for kind, obj in self.events:
            yield (json.dumps({"type": kind, "object": obj}) + "\n").encode()

    def close(self):
        pass

    def release_conn(self):
        pass


class FakePods:
    def __init__(self, lists, watches):
        self.lists, self.watches = lists, watches
        self.watched_from: list[str] = []

    def list(self, namespace, **kw):
        """:rtype: V1PodList"""
        if kw.get("watch"):
            self.watched_from.append(kw["resource_version"])
            return Response(self.watches.pop(0) if self.watches else [])
        rv, pods = self.lists.pop(0)
        return client.V1PodList(metadata=client.V1ListMeta(resource_version=str(rv)),
                                items=[client.ApiClient().deserialize(json.dumps(p), "V1Pod", "application/json") for p in pods])


def test_the_feed_resumes_where_it_was_and_relists_after_410():
    api = FakePods(lists=[(2, [raw_pod("a", 1), raw_pod("b", 2)]), (5, [raw_pod("a", 3), raw_pod("c", 5)])],
                   watches=[[("MODIFIED", raw_pod("a", 3)),
                             ("ERROR", {"code": 410, "reason": "Expired", "message": "too old"})]])
    seen, done = [], threading.Event()

    def sink(kind, pod):
        seen.append((kind, pod.metadata.name, pod.metadata.resource_version))
        if len(seen) == 5:
            done.set()

    feed = record.WatchFeed(api.list, ("ns",), sink, "pods in ns")
    assert done.wait(5)
    time.sleep(0.1)
    feed.stop()
    assert not feed._thread.is_alive(), "stop joins the watch thread"
    assert seen == [("ADDED", "a", "1"), ("ADDED", "b", "2"), ("MODIFIED", "a", "3"),
                    ("DELETED", "b", "2"), ("ADDED", "c", "5")]
    assert api.watched_from[:2] == ["2", "5"], "the first watch starts at the list, the next at the relist"
    assert set(api.watched_from[2:]) <= {"5"}
    feed.check()


def test_a_watch_that_keeps_failing_is_reported(monkeypatch):
    monkeypatch.setattr(record, "FAILING_FOR", 0.1)
    monkeypatch.setattr(record, "RETRY", 0.02)

    class Broken(FakePods):
        def list(self, namespace, **kw):
            """:rtype: V1PodList"""
            if kw.get("watch"):
                raise ConnectionError("refused")
            return super().list(namespace, **kw)

    feed = record.WatchFeed(Broken([(1, [])], []).list, ("ns",), lambda k, o: None, "pods in ns")
    try:
        time.sleep(0.3)
        with pytest.raises(KitError, match="the watch on pods in ns has failed.*refused"):
            feed.check()
    finally:
        feed.stop()
    assert not feed._thread.is_alive()


# --- the pod history folded into views ------------------------------------------------------


def pod(name, node="", nominated="", deleting=False, conditions=(), priority=0, rv=1):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, resource_version=str(rv), creation_timestamp=T0,
                                     deletion_timestamp=T0 if deleting else None),
        spec=client.V1PodSpec(containers=[], node_name=node or None, priority=priority),
        status=client.V1PodStatus(nominated_node_name=nominated or None, conditions=[
            client.V1PodCondition(type=t, status=s, reason=r, message=m, last_transition_time=T0)
            for t, s, r, m in conditions]))


def event(name, reason, involved, message=""):
    return client.CoreV1Event(metadata=client.V1ObjectMeta(name=name), reason=reason, message=message,
                              involved_object=client.V1ObjectReference(name=involved))


NAMES = Names.for_pods("s", "r1").with_nodes({"n1": "node-a"})


def test_phases_nodes_and_priorities_come_from_each_pods_latest_version():
    log = PodLog()
    log.add("ADDED", pod("p", priority=5))
    log.add("MODIFIED", pod("p", nominated="node-a", priority=5, rv=2))
    log.add("ADDED", pod("q", node="node-a", priority=7))
    log.add("MODIFIED", pod("q", node="node-a", deleting=True, priority=7, rv=2))
    log.add("ADDED", pod("r", node="node-a"))
    log.add("DELETED", pod("r", node="node-a", rv=2))
    views, priorities = check.pod_views(log, NAMES, {"refused": "no such class"})
    assert views == {"p": PodView("pending", "", "n1", False), "q": PodView("terminating", "n1", "", False),
                     "refused": PodView("rejected")}
    assert priorities == {"p": 5, "q": 7}
    assert [p.metadata.name for p in log.pods()] == ["p", "q"]


def test_preempted_by_event_or_by_condition_stays_preempted_once_gone():
    log = PodLog()
    log.add("ADDED", pod("v1", node="node-a"))
    log.add("ADDED", pod("v2", node="node-a"))
    log.add("ADDED", pod("v3", node="node-a"))
    log.add_event("ADDED", event("v1.1", "Preempted", "v1", "Preempted by pod u1 on node node-a"))
    # A short-lived version a poll could miss: the condition, then the deletion at once.
    log.add("MODIFIED", pod("v2", node="node-a", rv=2,
                            conditions=[("DisruptionTarget", "True", "PreemptionByScheduler", "")]))
    log.add("DELETED", pod("v2", node="node-a", rv=3))
    log.add("MODIFIED", pod("v3", node="node-a", rv=2, conditions=[("DisruptionTarget", "True", "EvictionByEvictionAPI", "")]))
    log.add_event("ADDED", event("v3.1", "Scheduled", "v3"))
    views, _ = check.pod_views(log, NAMES, {})
    assert views["v1"] == PodView("running", "n1", "", True)
    assert views["v2"] == PodView("gone", preempted=True)
    assert views["v3"] == PodView("running", "n1", "", False), "only the scheduler's DisruptionTarget counts"
    assert [e.metadata.name for e in log.preempted_events()] == ["v1.1"]


def test_messages_and_attempts_come_from_podscheduled():
    log = PodLog()
    log.add("ADDED", pod("new"))
    log.add("ADDED", pod("parked", conditions=[("PodScheduled", "False", "Unschedulable", "0/1 nodes are available")]))
    log.add("ADDED", pod("bound", node="node-a", conditions=[("PodScheduled", "True", "", "")]))
    log.add("ADDED", pod("gone"))
    log.add("DELETED", pod("gone", rv=2))
    assert check.messages(log) == {"parked": "0/1 nodes are available"}
    assert [n for n in ("new", "parked", "bound", "gone", "unseen") if check.was_attempted(log, n)] == \
        ["parked", "bound", "gone"]


def test_faults_are_read_from_the_recorded_preempted_events():
    log = PodLog()
    for i, node in enumerate(("n1", "n2")):
        e = event(f"v{i}.1", "Preempted", f"v{i}", f"Preempted by pod u1 on node {node}")
        e.first_timestamp = T0
        log.add_event("ADDED", e)
    faults = check.faults(log, "1.35", "upstream")
    assert [f.name for f in faults] == ["one preemptor, victims on two nodes"] and faults[0].fails


def test_first_waits_for_a_version_fed_later():
    log = PodLog()
    threading.Timer(0.1, lambda: log.add("ADDED", pod("late", node="node-a"))).start()
    assert log.first("late", lambda v: bool(v.pod.spec.node_name), 5, "the late pod").pod.metadata.name == "late"
    with pytest.raises(KitError, match="timed out after 0 s waiting for never; versions of never seen: none"):
        log.first("never", lambda v: True, 0.1, "never")


def test_preempting_again_after_the_kit_restarted_the_scheduler_is_no_fault():
    from datetime import timedelta

    log = PodLog()
    for i, node in enumerate(("n1", "n2")):
        e = event(f"v{i}.1", "Preempted", f"v{i}", f"Preempted by pod u1 on node {node}")
        e.event_time = T0 + timedelta(seconds=10 * i)
        log.add_event("ADDED", e)
    assert [f.name for f in check.faults(log, "1.35", "upstream")] == ["one preemptor, victims on two nodes"]
    assert check.faults(log, "1.35", "upstream", (T0 + timedelta(seconds=5),)) == []
