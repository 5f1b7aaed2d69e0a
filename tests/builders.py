"""Terse constructors for model states in unit tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from reference.objects import (
    ClusterState,
    LabelSelector,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
)
from reference.toleration import DEFAULT_PREFIX

from harness.kube import SLOT
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pc(name: str, value: int, *, never: bool = False, default: bool = False, mpp=None, ts=None,
       prefix: str = DEFAULT_PREFIX) -> PriorityClass:
    ann = {}
    if mpp is not None:
        ann[prefix + "minimum-preemptable-priority"] = str(mpp)
    if ts is not None:
        ann[prefix + "toleration-seconds"] = str(ts)
    return PriorityClass(name, value, global_default=default,
                         preemption_policy="Never" if never else "PreemptLowerPriority",
                         annotations=tuple(sorted(ann.items())))


def node(name: str, slots: int = 1, **kw) -> Node:
    return Node(name, allocatable=(("pods", 110), (SLOT, slots)), **kw)


def pod(name: str, prio: int = 0, *, cls: str = "", on: str = "", slots: int = 1, age: float | None = None,
        now: datetime = T0, labels: dict | None = None, never: bool = False, **kw) -> Pod:
    """A pod; ``on`` binds it, ``age`` seconds ago (scheduled and started then)."""
    when = now - timedelta(seconds=age) if age is not None else None
    if on and when is None:
        when = now - timedelta(seconds=3600)
    return Pod(name, priority_class_name=cls, priority=prio, requests=((SLOT, slots),) if slots else (),
               node_name=on, scheduled_at=kw.pop("scheduled_at", when), start_time=kw.pop("start_time", when),
               labels=tuple(sorted((labels or {}).items())),
               preemption_policy="Never" if never else "PreemptLowerPriority", **kw)


def pdb(name: str, match: dict, allowed: int, ns: str = "default", disrupted=()) -> PodDisruptionBudget:
    return PodDisruptionBudget(name, ns, LabelSelector(tuple(sorted(match.items()))), allowed, tuple(disrupted))


def state(classes=(), nodes=(), pods=(), pdbs=(), groups=()) -> ClusterState:
    return ClusterState(tuple(classes), tuple(nodes), tuple(pods), tuple(pdbs), tuple(groups))


# A valid Karmada scenario (``{id}`` to fill in): one member, one class, one app scheduled whole;
# tests change one piece of it to provoke one error.
KARMADA_SCENARIO = """
id: {id}
title: t
spec: s
members:
  - {{name: m1, cpu: 2000}}
priorityClasses:
  - {{name: high, value: 1000}}
steps:
  - propagate: {{name: app-a, replicas: 2, cpu: 1000, class: high}}
    expect:
      bindings:
        app-a: {{state: scheduled, priority: 1000, clusters: {{m1: 2}}}}
"""
