"""The cluster events the explorer draws besides pod and class changes: node events and in-place
pod resizes, the events the plugins' queueing hints react to (reference/requeue.py), and the cpu
that makes a resize matter.

Every event it draws is valid whatever the scheduler did before it: a node is deleted only once
drained (no pod is ever on it), and a pod is resized only while it is certainly running (an
initial pod that no pod the scenario may create by then can preempt, not deleted by a step).
"""

from __future__ import annotations

from hypothesis import strategies as st

ZONES = ("a", "b")
TAINT = {"key": "dedicated", "value": "x"}
# Keeps every pod off a node it is on: the only nodes the generator deletes (a node with pods left
# on it is not deleted: what removes them, the pod garbage collector, is not modelled).
DRAIN = {"key": "drain", "value": "x", "effect": "NoSchedule"}
# A scenario that counts cpu gives its nodes little of it (a kwok node has 32 cores otherwise), so
# that NodeResourcesFit rejects for cpu and a resize down makes room.
SMALL_CPU = (1000, 2000)
CPU_STEP = 100


def cpu_amount(draw, most: int) -> int:
    """A cpu request in steps of 100m, at most ``most`` (at least 100m)."""
    return CPU_STEP * draw(st.integers(1, max(1, most // CPU_STEP)))


@st.composite
def node_step(draw, nodes_now: dict[str, dict], index: int) -> dict:
    """One node event on the scenario's nodes (``nodes_now``, changed in place): a node added
    (sometimes drained, to be deleted later), relabelled, tainted or untainted, cordoned or
    uncordoned, resized, or a drained node deleted."""
    kinds = ["addNode", "labelNode", "taintNode", "untaintNode", "cordon", "uncordon", "resizeNode"]
    if any(DRAIN in n.get("taints", []) for n in nodes_now.values()):
        kinds += ["deleteNode"] * len(kinds)  # a drained node is there to be deleted
    kind = draw(st.sampled_from(kinds))
    names = sorted(n for n, spec in nodes_now.items() if DRAIN not in spec.get("taints", []))
    if kind == "addNode" or not names:
        n: dict = {"name": f"m{index + 1}", "slots": draw(st.integers(0, 4))}
        if any("milliCPU" in spec for spec in nodes_now.values()):
            n["milliCPU"] = draw(st.sampled_from(SMALL_CPU))
        if draw(st.booleans()):
            n["labels"] = {"zone": draw(st.sampled_from(ZONES))}
        if draw(st.integers(0, 2)) == 0:
            n["taints"] = [dict(DRAIN)]
        elif draw(st.integers(0, 3)) == 0:
            n["taints"] = [{**TAINT, "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))}]
        nodes_now[n["name"]] = n
        return {"addNode": n}
    if kind == "deleteNode":
        name = draw(st.sampled_from(sorted(n for n, spec in nodes_now.items() if DRAIN in spec.get("taints", []))))
        del nodes_now[name]
        return {"deleteNode": name}
    name = draw(st.sampled_from(names))
    spec = nodes_now[name] = dict(nodes_now[name])
    if kind == "labelNode":
        zone = draw(st.sampled_from([*ZONES, None]))
        spec["labels"] = {k: v for k, v in {**spec.get("labels", {}), "zone": zone}.items() if v is not None}
        return {"labelNode": {"node": name, "labels": {"zone": zone}}}
    if kind == "taintNode":
        effect = draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))
        spec["taints"] = [t for t in spec.get("taints", []) if t["effect"] != effect] + [{**TAINT, "effect": effect}]
        return {"taintNode": {"node": name, **TAINT, "effect": effect}}
    if kind == "untaintNode":
        effect = draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))
        spec["taints"] = [t for t in spec.get("taints", []) if t["effect"] != effect]
        return {"untaintNode": {"node": name, "key": TAINT["key"], "effect": effect}}
    if kind in ("cordon", "uncordon"):
        return {kind: name}
    spec["slots"] = draw(st.integers(0, 4))
    return {"resizeNode": {"node": name, "slots": spec["slots"]}}


def _priority(pod: dict, values: dict[str, int]) -> int:
    return values[pod["class"]] if "class" in pod else 0


def resizable(initial: list[dict], live: list[str], start_values: dict[str, int], highest: int,
              defaulted: bool) -> list[dict]:
    """The initial pods a resize may name now: Burstable (a BestEffort pod may not get a request),
    not deleted by a step, and of a priority no pod the scenario may have created by now exceeds
    (``highest``: the largest class value so far), so that nothing can have preempted them. A pod
    of no class is left out where a global default may have given it a value."""
    return [p for p in initial if p.get("qos") == "Burstable" and p["name"] in live
            and not (defaulted and "class" not in p) and _priority(p, start_values) >= highest]


@st.composite
def resize_step(draw, name: str, now: int, small_node: bool) -> dict:
    """Pod ``name``, asking ``now`` millicores, resized in place to ask another amount. On a node
    with little cpu only down: a resize the node has no room for is deferred by a kubelet, which
    neither the model nor the kit's kwok stages do."""
    if small_node:
        new = cpu_amount(draw, now - CPU_STEP)
    else:
        new = draw(st.sampled_from([x for x in range(CPU_STEP, 1001, CPU_STEP) if x != now]))
    return {"resizePod": {"name": name, "milliCPU": new}}


__all__ = ["ZONES", "TAINT", "DRAIN", "SMALL_CPU", "cpu_amount", "node_step", "resizable", "resize_step"]
