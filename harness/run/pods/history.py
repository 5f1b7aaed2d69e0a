"""A namespace's pods and events as a history: every version the API server sent, in its order.

The runner's verdicts are read from here, not from polls: a watch delivers every change of
every pod in resourceVersion order, so short-lived states (a nomination followed quickly by
a binding, a DisruptionTarget condition on a victim deleted at once) are never missed, and
verdicts about order ("the condition came before the deletion") are read off what the
server recorded. ``PodLog`` folds the versions into what the runner asks (the pods as they
are now, who was preempted, the Preempted events); ``PodHistory`` feeds it from two watches.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

from kubernetes import client

from harness.errors import KitError
from harness.host import lifecycle
from harness.kube import Kube, disrupted_by_preemption
from harness.run.pods.invariants import History
from harness.run.record import WatchFeed


@dataclass(frozen=True)
class Version:
    seq: int  # position in the stream
    kind: str  # ADDED, MODIFIED, DELETED
    pod: client.V1Pod
    seen_at: float  # time.time() when it arrived

    @property
    def name(self) -> str:
        return self.pod.metadata.name


class PodLog:
    """Recorded pod versions and events, and what they add up to; safe to read while being fed."""

    def __init__(self) -> None:
        self.versions: list[Version] = []
        self._cond = threading.Condition()
        self._now: dict[str, client.V1Pod] = {}  # pods that exist, at their latest version
        self._events: dict[str, client.CoreV1Event] = {}  # by event name, latest version
        self._preempted: set[str] = set()

    # -- feeding ---------------------------------------------------------------------

    def add(self, kind: str, pod: client.V1Pod) -> None:
        with self._cond:
            self.versions.append(Version(len(self.versions), kind, pod, time.time()))
            if kind == "DELETED":
                self._now.pop(pod.metadata.name, None)
            else:
                self._now[pod.metadata.name] = pod
            if disrupted_by_preemption(pod):
                self._preempted.add(pod.metadata.name)
            self._cond.notify_all()

    def add_event(self, kind: str, event: client.CoreV1Event) -> None:
        with self._cond:
            if kind == "DELETED":  # events expire; what they said stays said
                self._events.pop(event.metadata.name, None)
            else:
                self._events[event.metadata.name] = event
            if event.reason == "Preempted" and event.involved_object is not None:
                self._preempted.add(event.involved_object.name)
            self._cond.notify_all()

    # -- reading ---------------------------------------------------------------------

    def check(self) -> None:
        """Raise if the history can no longer be trusted."""

    @property
    def complete(self) -> bool:
        """Every version is here: the watch never lost its place."""
        return True

    def history(self) -> History:
        """The record as the history rules read it (harness.run.pods.invariants), as far as it goes."""
        with self._cond:
            versions = tuple(self.versions)
            events = tuple(self._events[n] for n in sorted(self._events) if self._events[n].reason == "Preempted")
        return History(versions, events, self.complete)

    def pods(self) -> list[client.V1Pod]:
        """The pods that exist now, at their latest recorded version, by name (as a list call orders them)."""
        self.check()
        with self._cond:
            return [self._now[n] for n in sorted(self._now)]

    def pod(self, name: str) -> client.V1Pod | None:
        with self._cond:
            return self._now.get(name)

    def seen(self, name: str) -> bool:
        with self._cond:
            return any(v.name == name for v in self.versions)

    def preempted(self) -> set[str]:
        """Pods that a Preempted event names, or that ever carried DisruptionTarget by preemption."""
        with self._cond:
            return set(self._preempted)

    def events(self) -> list[client.CoreV1Event]:
        self.check()
        with self._cond:
            return [self._events[n] for n in sorted(self._events)]

    def preempted_events(self) -> list[client.CoreV1Event]:
        return [e for e in self.events() if e.reason == "Preempted"]

    def of(self, name: str) -> list[Version]:
        with self._cond:
            return [v for v in self.versions if v.name == name]

    def first(self, name: str, predicate: Callable[[Version], bool], timeout: float, what: str,
              cancel: threading.Event | None = None) -> Version:
        """The first version of pod ``name`` for which ``predicate`` holds, waiting for it if need be."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for v in self.versions:
                    if v.name == name and predicate(v):
                        return v
                try:
                    self.check()
                except KitError as e:
                    raise KitError(f"{e} (while waiting for {what})") from None
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [describe(v) for v in self.versions if v.name == name]
                    raise KitError(f"timed out after {timeout:.0f} s waiting for {what}; versions of {name} seen: "
                                   + ("; ".join(seen) or "none"))
                lifecycle.check()
                if cancel is not None and cancel.is_set():
                    raise lifecycle.StopRequested()
                self._cond.wait(min(left, 0.5))

    def wait_beyond(self, count: int, timeout: float) -> None:
        """Return once more than ``count`` versions are recorded, or after ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: len(self.versions) > count, timeout)

    def lines(self) -> list[str]:
        """The history as a failing scenario's artifact shows it."""
        with self._cond:
            return [f"{v.name}: {describe(v)}" for v in self.versions]


class PodHistory(PodLog):
    """A watch on one namespace's pods and one on its events, kept from construction to ``close``."""

    def __init__(self, kube: Kube, namespace: str):
        super().__init__()
        self.namespace = namespace
        self._outage = False
        self._feeds: list[WatchFeed] = []
        try:
            self._feeds.append(WatchFeed(kube.core.list_namespaced_pod, (namespace,), self.add, f"pods in {namespace}"))
            self._feeds.append(WatchFeed(kube.core.list_namespaced_event, (namespace,), self.add_event,
                                         f"events in {namespace}"))
        except BaseException:
            self.close()
            raise

    def check(self) -> None:
        if self._outage:
            return
        for f in self._feeds:
            f.check()

    @contextmanager
    def outage(self):
        """The API server down on purpose (a fault step): the watches' failures meanwhile are no
        reason to distrust the history; they resume, or list again, once it is back."""
        self._outage = True
        try:
            yield
        finally:
            for f in self._feeds:
                f.forgive()
            self._outage = False

    @property
    def complete(self) -> bool:
        return not any(f.relisted for f in self._feeds)

    def close(self) -> None:
        for f in self._feeds:
            f.stop()


def describe(v: Version) -> str:
    p = v.pod
    conds = ",".join(f"{c.type}={c.status}" for c in (p.status.conditions or [])) if p.status else ""
    return (f"#{v.seq} {v.kind} node={p.spec.node_name or '-'} "
            f"nominated={(p.status.nominated_node_name if p.status else None) or '-'} "
            f"deleting={'yes' if p.metadata.deletion_timestamp else 'no'} [{conds}]")
