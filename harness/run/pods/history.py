"""A namespace's pods as a history: every version the API server sent, in its order.

Polling sees whatever state happens to be current when it looks, so under load
it misses short-lived states (a nomination followed quickly by a binding) and
times things by when it looked. A watch delivers every change of every pod in
resourceVersion order, so verdicts about order ("the condition came before the
deletion", "the preemptor was bound after its victim was gone") are read off
what the server recorded.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from kubernetes import client, watch

from harness.host import lifecycle
from harness.errors import KitError
from harness.kube import Kube


@dataclass(frozen=True)
class Version:
    seq: int  # position in the stream
    kind: str  # ADDED, MODIFIED, DELETED
    pod: client.V1Pod
    seen_at: float  # time.time() when it arrived

    @property
    def name(self) -> str:
        return self.pod.metadata.name


class PodHistory:
    def __init__(self, kube: Kube, namespace: str):
        self.kube, self.namespace = kube, namespace
        self.versions: list[Version] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._error: Exception | None = None
        listing = kube.core.list_namespaced_pod(namespace)
        self._rv = listing.metadata.resource_version
        for p in listing.items:
            self._add("ADDED", p)
        self._thread = threading.Thread(target=self._run, name=f"history-{namespace}", daemon=True)
        self._thread.start()

    def _add(self, kind: str, pod: client.V1Pod) -> None:
        with self._cond:
            self.versions.append(Version(len(self.versions), kind, pod, time.time()))
            self._cond.notify_all()

    def _run(self) -> None:
        w = watch.Watch()
        try:
            while not self._stop.is_set():
                for ev in w.stream(self.kube.core.list_namespaced_pod, self.namespace,
                                   resource_version=self._rv, timeout_seconds=5, allow_watch_bookmarks=False):
                    self._rv = ev["object"].metadata.resource_version
                    self._add(ev["type"], ev["object"])
                    if self._stop.is_set():
                        break
        except Exception as e:  # surfaced to the waiting test, not lost in a thread
            if not self._stop.is_set():
                self._error = e
                with self._cond:
                    self._cond.notify_all()
        finally:
            w.stop()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def of(self, name: str) -> list[Version]:
        with self._cond:
            return [v for v in self.versions if v.name == name]

    def first(self, name: str, predicate: Callable[[Version], bool], timeout: float, what: str) -> Version:
        """The first version of pod ``name`` for which ``predicate`` holds, waiting for it if need be."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for v in self.versions:
                    if v.name == name and predicate(v):
                        return v
                if self._error is not None:
                    raise KitError(f"the watch on {self.namespace} failed while waiting for {what}: {self._error}")
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [_describe(v) for v in self.versions if v.name == name]
                    raise KitError(f"timed out after {timeout:.0f} s waiting for {what}; versions of {name} seen: "
                                   + ("; ".join(seen) or "none"))
                lifecycle.check()
                self._cond.wait(min(left, 0.5))


def _describe(v: Version) -> str:
    p = v.pod
    conds = ",".join(f"{c.type}={c.status}" for c in (p.status.conditions or []))
    return (f"#{v.seq} {v.kind} node={p.spec.node_name or '-'} nominated={p.status.nominated_node_name or '-'} "
            f"deleting={'yes' if p.metadata.deletion_timestamp else 'no'} [{conds}]")
