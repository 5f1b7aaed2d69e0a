"""Node events: a node added, changed or deleted, and what the scheduler does with each.

The scheduler's cache takes the node as it is now; the scheduling queue gets one event per
kind of change (``pkg/scheduler/eventhandlers.go`` addNodeToCache, updateNodeInCache and
``framework.NodeSchedulingPropertiesChange``), and each event moves back the parked pods whose
rejectors' hints say so (``reference.requeue``). Pods already on a node are not touched by
any of it: a node that shrinks keeps its pods (the kubelet does not evict for an extended
resource), a cordoned or tainted node keeps its pods (NoExecute is left out of the scenarios).
"""

from __future__ import annotations

from dataclasses import replace

from .objects import Node, Taint
from .requeue import node_added, node_deleted, node_updated
from .world import World, wake

# A node joins tainted not-ready (kubelets register so; the kit creates its kwok nodes so) and the
# node lifecycle controller takes the taint off once it sees the node Ready: two events, NodeAdd
# of the tainted node and an UpdateNodeTaint (node_lifecycle_controller.go doNoScheduleTaintingPass).
NOT_READY = Taint("node.kubernetes.io/not-ready", "NoSchedule")

# The kinds of change updateNodeInCache tells apart, in the order it makes their events.
UPDATE_NODE_ALLOCATABLE = "UpdateNodeAllocatable"
UPDATE_NODE_LABEL = "UpdateNodeLabel"
UPDATE_NODE_TAINT = "UpdateNodeTaint"
UPDATE_NODE_PREEMPTION_POLICY = "UpdateNodePreemptionPolicy"


def node_changes(old: Node, new: Node) -> tuple[str, ...]:
    """The events one update of a node makes. A cordon (spec.unschedulable) counts as a taint
    change: it is one for the queue (NodeSpecUnschedulableChange's action type)."""
    out = []
    if old.unschedulable != new.unschedulable:
        out.append(UPDATE_NODE_TAINT)
    if old.allocatable_map != new.allocatable_map:
        out.append(UPDATE_NODE_ALLOCATABLE)
    if old.label_map != new.label_map:
        out.append(UPDATE_NODE_LABEL)
    if set(old.taints) != set(new.taints) and UPDATE_NODE_TAINT not in out:
        out.append(UPDATE_NODE_TAINT)
    if old.resize_preemption_disabled != new.resize_preemption_disabled:
        out.append(UPDATE_NODE_PREEMPTION_POLICY)  # 1.37 (events.go extractNodePreemptionPolicyChange)
    return tuple(out)


def add_node(world: World, node: Node) -> World:
    from .scheduler import run_queue

    if world.state.node_named(node.name) is not None:
        raise ValueError(f"node {node.name} exists already")
    joining = replace(node, taints=node.taints + (NOT_READY,))
    world = replace(world, state=world.state.with_node(joining)).note(f"node {node.name} added, tainted not-ready")
    world = run_queue(wake(world, node_added(joining)), set())
    world = replace(world, state=world.state.with_node(node)).note(f"node {node.name} Ready: its not-ready taint taken off")
    return run_queue(wake(world, node_updated(UPDATE_NODE_TAINT, joining, node)), set())


def update_node(world: World, node: Node) -> World:
    from .scheduler import run_queue

    old = world.state.node_named(node.name)
    if old is None:
        raise ValueError(f"no node {node.name} to change")
    changes = node_changes(old, node)
    if not changes:
        return world
    world = replace(world, state=world.state.with_node(node)).note(f"node {node.name} changed: {', '.join(changes)}")
    for action in changes:
        world = wake(world, node_updated(action, old, node))
    return run_queue(world, set())


def delete_node(world: World, name: str, pods_stay: bool = False) -> World:
    """A node deleted. By default it must have no pod left (the scenario format's rule: what removes
    the pods of a deleted node on a real cluster, the pod garbage collector, is not modelled).

    ``pods_stay``: its pods stay in the API, bound to a node that is gone, until something deletes
    them (a cluster without the garbage collector, as upstream's integration tests run). The
    scheduler's cache keeps them under the node's name but its snapshot leaves the node out
    (cache.go RemoveNode keeps a node with pods as an entry without a node; UpdateSnapshot drops
    it): no filter, no dry run and no victim search sees the node or its pods, while a pending pod
    may still be nominated to it (the nomination stays until its next cycle). When such a pod is
    deleted its room is freed as any assigned pod's (reference.requeue.assigned_pod_gone)."""
    node = world.state.node_named(name)
    if node is None:
        raise ValueError(f"no node {name} to delete")
    held = [p.key for p in world.state.pods_on(name)]
    if held and not pods_stay:
        raise NodeNotEmpty(f"node {name} still has {', '.join(sorted(held))}: delete them first (what removes a "
                           "deleted node's pods, the pod garbage collector, is not modelled)")
    stays = f" ({', '.join(sorted(held))} stay bound to it)" if held else ""
    world = replace(world, state=world.state.without_node(name)).note(f"node {name} deleted{stays}")
    return wake(world, node_deleted(node))


class NodeNotEmpty(ValueError):
    """A deleteNode step on a node that still has pods."""


__all__ = ["add_node", "update_node", "delete_node", "node_changes", "NodeNotEmpty", "UPDATE_NODE_ALLOCATABLE",
           "UPDATE_NODE_LABEL", "UPDATE_NODE_TAINT"]
