"""A pod scenario's nodes, and the steps that change them (node events).

Each node step names a scenario node that exists by then (an initial node, or one an earlier
``addNode`` made, not deleted since); ``node_errors`` checks that in order, with the step's
path. What each event wakes is the model's (``reference/requeue.py``); how the cluster is made
to show it, the runner's (``harness/run/pods/nodes.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator

from harness.formats.common import Name, Strict
from harness.kube import NODE_MILLI_CPU

Labels = dict[Annotated[str, Field(min_length=1)], str]
# Labels the kit sets on every scenario node itself: a step may not change them.
RESERVED_LABELS = ("kubernetes.io/hostname", "priority-conformance.x-k8s.io/scenario", "type")


class TaintSpec(Strict):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodeSpec(Strict):
    name: Name
    slots: int = Field(default=1, ge=0, le=1000, description="room, in pods of one slot each")
    milliCPU: int = Field(default=NODE_MILLI_CPU, ge=1, le=NODE_MILLI_CPU, description="its cpu, in millicores")
    labels: Labels = {}
    taints: list[TaintSpec] = []
    unschedulable: bool = False  # cordoned (spec.unschedulable)

    @field_validator("labels")
    @classmethod
    def _own_labels(cls, v):
        taken = [k for k in v if k in RESERVED_LABELS]
        if taken:
            raise ValueError(f"{', '.join(taken)}: the kit sets this label on every node itself")
        return v


class LabelNode(Strict):
    """Set labels (a value) or remove them (null): one UpdateNodeLabel event."""

    node: Name
    labels: dict[Annotated[str, Field(min_length=1)], Optional[str]] = Field(min_length=1)

    @field_validator("labels")
    @classmethod
    def _own_labels(cls, v):
        return NodeSpec._own_labels(v)


class TaintNode(Strict):
    """Add a taint (one UpdateNodeTaint event). NoExecute is left out: the taint-eviction
    controller would then evict the node's pods, which the model does not cover."""

    node: Name
    key: str = Field(min_length=1)
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule"]


class UntaintNode(Strict):
    """Remove the taint with this key and effect (one UpdateNodeTaint event)."""

    node: Name
    key: str = Field(min_length=1)
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class ResizeNode(Strict):
    """Change the node's room (its allocatable): one UpdateNodeAllocatable event. Pods already
    there stay: the kubelet does not evict for an extended resource that shrank."""

    node: Name
    slots: int = Field(ge=0, le=1000)


NODE_ACTIONS = ("addNode", "deleteNode", "labelNode", "taintNode", "untaintNode", "cordon", "uncordon", "resizeNode")
# Steps only nodes the kit creates can take: kind's workers are real machines it borrows.
KWOK_ONLY = ("addNode", "deleteNode")


def node_named(step) -> str:
    """The scenario node a node step is about."""
    value = getattr(step, step.action)
    if isinstance(value, str):
        return value
    return value.name if isinstance(value, NodeSpec) else value.node


def after(nodes: dict[str, NodeSpec], step) -> dict[str, NodeSpec]:
    """The scenario's nodes (name -> spec) once a node step is done; other steps change none."""
    if step.action not in NODE_ACTIONS:
        return nodes
    out = dict(nodes)
    name = node_named(step)
    if step.addNode is not None:
        out[name] = step.addNode
    elif step.deleteNode is not None:
        out.pop(name, None)
    elif step.labelNode is not None:
        labels = dict(out[name].labels)
        for k, v in step.labelNode.labels.items():
            if v is None:
                labels.pop(k, None)
            else:
                labels[k] = v
        out[name] = out[name].model_copy(update={"labels": labels})
    elif step.taintNode is not None:
        t = step.taintNode
        kept = [x for x in out[name].taints if (x.key, x.effect) != (t.key, t.effect)]
        out[name] = out[name].model_copy(update={"taints": kept + [TaintSpec(key=t.key, value=t.value, effect=t.effect)]})
    elif step.untaintNode is not None:
        t = step.untaintNode
        out[name] = out[name].model_copy(update={"taints": [x for x in out[name].taints
                                                            if (x.key, x.effect) != (t.key, t.effect)]})
    elif step.cordon is not None or step.uncordon is not None:
        out[name] = out[name].model_copy(update={"unschedulable": step.cordon is not None})
    elif step.resizeNode is not None:
        out[name] = out[name].model_copy(update={"slots": step.resizeNode.slots})
    return out


def node_errors(initial: list[NodeSpec], steps) -> tuple[list[str], set[str]]:
    """Errors of node steps that name no node existing by then, and every node name the scenario
    ever has (for its expects)."""
    errors: list[str] = []
    now = {n.name for n in initial}
    ever = set(now)
    for i, step in enumerate(steps):
        if step.action not in NODE_ACTIONS:
            continue
        name = node_named(step)
        field = {"addNode": "addNode.name", "deleteNode": "deleteNode", "cordon": "cordon",
                 "uncordon": "uncordon"}.get(step.action, f"{step.action}.node")
        if step.action == "addNode":
            if name in ever:
                errors.append(f"steps[{i}].{field}: a node named {name!r} existed before (a name is used once)")
            now.add(name)
            ever.add(name)
        elif name not in now:
            errors.append(f"steps[{i}].{field}: no node named {name!r} exists by then "
                          f"(nodes: {', '.join(sorted(now)) or 'none'})")
        elif step.action == "deleteNode":
            now.discard(name)
            if not now:
                # A pod meeting no node at all fails with no rejector and is retried on its
                # backoff, not by events: a queue path the model leaves out.
                errors.append(f"steps[{i}].{field}: the scenario's last node; keep one")
    return errors, ever


__all__ = ["NodeSpec", "TaintSpec", "LabelNode", "TaintNode", "UntaintNode", "ResizeNode", "NODE_ACTIONS", "KWOK_ONLY",
           "node_named", "node_errors", "after"]
