"""What Karmada did to one scenario's bindings, as a watch recorded it, and how it compares.

Verdicts come only from this history: every ResourceBinding version the API
server sent, in its order. "First scheduled" is the first version that
carries clusters, and the order of those versions' resourceVersions is the
order the (single-worker) scheduler wrote them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kubernetes import client

from reference.binding.objects import BINDING_SUFFIX

from harness.run.record import WatchFeed


@dataclass(frozen=True)
class BindingVersion:
    seq: int  # order of arrival on the watch
    kind: str  # ADDED, MODIFIED, DELETED
    app: str
    resource_version: int
    priority: int | None  # spec.schedulePriority.priority; None when the field is absent
    clusters: tuple[tuple[str, int], ...]
    scheduled: str  # the Scheduled condition as "True", "False/<reason>" or ""


@dataclass(frozen=True)
class Observed:
    """One app's binding now."""

    state: str  # absent | scheduled | unschedulable | waiting
    priority: int | None
    clusters: tuple[tuple[str, int], ...]
    condition: str

    def describe(self) -> str:
        if self.state == "absent":
            return "no binding"
        return (f"{self.state}, priority {'absent' if self.priority is None else self.priority}, "
                f"clusters {dict(self.clusters) or '{}'}" + (f", Scheduled={self.condition}" if self.condition else ""))


def _version(seq: int, kind: str, obj: dict) -> BindingVersion:
    meta, spec, status = obj.get("metadata", {}), obj.get("spec", {}), obj.get("status", {})
    prio = (spec.get("schedulePriority") or {}).get("priority")
    clusters = tuple(sorted((c["name"], int(c.get("replicas", 0))) for c in spec.get("clusters") or []))
    cond = next((c for c in status.get("conditions") or [] if c.get("type") == "Scheduled"), None)
    scheduled = "" if cond is None else (cond["status"] if cond["status"] == "True" else f"{cond['status']}/{cond.get('reason', '')}")
    name = meta.get("name", "")
    app = name[: -len(BINDING_SUFFIX)] if name.endswith(BINDING_SUFFIX) else name
    return BindingVersion(seq, kind, app, int(meta.get("resourceVersion", "0")), prio, clusters, scheduled)


class BindingLog:
    """Recorded binding versions, and what they add up to; safe to read while being fed."""

    def __init__(self) -> None:
        self.versions: list[BindingVersion] = []
        self._lock = threading.Lock()

    def add(self, kind: str, obj: dict) -> None:
        with self._lock:
            self.versions.append(_version(len(self.versions), kind, obj))

    def check(self) -> None:
        """Raise if the history can no longer be trusted."""

    def now(self, app: str) -> Observed:
        self.check()
        with self._lock:
            mine = [v for v in self.versions if v.app == app]
        if not mine or mine[-1].kind == "DELETED":
            return Observed("absent", None, (), "")
        v = mine[-1]
        if v.clusters:
            state = "scheduled"
        elif v.scheduled.startswith("False/"):
            state = "unschedulable"
        else:
            state = "waiting"
        return Observed(state, v.priority, v.clusters, v.scheduled)

    def first_scheduled(self, apps: list[str]) -> tuple[str, ...]:
        """The apps (of ``apps``) in the order their bindings first got clusters; unscheduled ones left out."""
        with self._lock:
            firsts: dict[str, int] = {}
            for v in self.versions:
                if v.app in apps and v.clusters and v.app not in firsts:
                    firsts[v.app] = v.resource_version
        return tuple(sorted(firsts, key=firsts.__getitem__))

    def lines(self) -> list[str]:
        """The history as a failing scenario's artifact shows it."""
        with self._lock:
            return [f"{v.seq:4d} rv={v.resource_version} {v.kind:8s} {v.app}: priority="
                    f"{'absent' if v.priority is None else v.priority} clusters={dict(v.clusters)} "
                    f"Scheduled={v.scheduled or '-'}" for v in self.versions]


class BindingHistory(BindingLog):
    """A watch on one namespace's ResourceBindings, kept from start to ``close``."""

    def __init__(self, api: client.ApiClient, namespace: str):
        super().__init__()
        self.namespace = namespace
        objects = client.CustomObjectsApi(api)
        self._feed = WatchFeed(objects.list_namespaced_custom_object,
                               ("work.karmada.io", "v1alpha2", namespace, "resourcebindings"),
                               self.add, f"bindings in {namespace}")

    def check(self) -> None:
        self._feed.check()

    def close(self) -> None:
        self._feed.stop()
