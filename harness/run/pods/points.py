"""Named points of a preemption, read off the recorded history as it grows: when a ``during:``
fault is injected (harness.formats.pods.POINTS). Only versions recorded after the action count."""

from __future__ import annotations

import threading
import time
from typing import Callable

from harness.host import lifecycle
from harness.kube import disrupted_by_preemption
from harness.run.pods.history import PodLog, Version


def predicate(point: str, pod: str | None) -> Callable[[Version], bool]:
    """Whether one recorded version shows ``point``; ``pod``: the step's own pod, if it creates one."""
    if point == "victimMarked":
        return lambda v: v.kind != "DELETED" and disrupted_by_preemption(v.pod)
    if point == "victimDeleting":
        return lambda v: (v.kind != "DELETED" and disrupted_by_preemption(v.pod)
                          and v.pod.metadata.deletion_timestamp is not None)
    if point == "victimGone":
        return lambda v: v.kind == "DELETED" and disrupted_by_preemption(v.pod)
    if point == "nominated":
        return lambda v: (v.kind != "DELETED" and (pod is None or v.name == pod) and not v.pod.spec.node_name
                          and bool(v.pod.status and v.pod.status.nominated_node_name))
    raise ValueError(f"no point named {point!r}")


def wait_for(log: PodLog, point: str, pod: str | None, since: int, timeout: float,
             cancel: threading.Event | None = None) -> Version | None:
    """The first version after the ``since``-th that shows ``point``, as soon as it is recorded;
    None if none does within ``timeout`` seconds."""
    test = predicate(point, pod)
    deadline = time.monotonic() + timeout
    seen = since
    while True:
        versions = log.versions[seen:]  # appended to, never rewritten: a slice is a safe snapshot
        for v in versions:
            if test(v):
                return v
        seen += len(versions)
        log.check()
        if time.monotonic() >= deadline:
            return None
        lifecycle.check()
        if cancel is not None and cancel.is_set():
            raise lifecycle.StopRequested()
        # Woken by the next version: a kill must land within milliseconds of its point.
        log.wait_beyond(seen, min(0.5, max(0.0, deadline - time.monotonic())))


__all__ = ["predicate", "wait_for"]
