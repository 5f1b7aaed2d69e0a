"""Kubernetes releases, and the behaviour changes between them that a scenario can observe.

Each change is a named switch with the release it starts in and the upstream
change that made it; the model asks ``has(release, SWITCH)`` where behaviour
differs. Research behind the table: docs/research/releases-behaviour.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The release the kit models and runs unless told otherwise: `explain`, the model's defaults,
# `./kit conformance` and `./kit cluster up` alike. It must be a release on which both scheduler
# builds run (harness.build.pins.default_release() checks the wrappers have it).
DEFAULT_RELEASE = "1.35"
# The releases whose scheduler code was read for the switches below (docs/research/releases-behaviour.md).
# 1.38 is a preview: Kubernetes v1.38.0-alpha.0, the only 1.38 tag served here (the kit's build of it
# says so: harness.build.toolchain.prerelease); never the default.
RELEASES = ("1.34", "1.35", "1.36", "1.37", "1.38")


@dataclass(frozen=True)
class Switch:
    name: str
    since: str  # first minor release with the new behaviour
    upstream: str
    what: str
    # The feature gate that turns the behaviour on, where there is one, and the component that
    # reads it: a cluster started with the gate set has the behaviour the gate says, whatever
    # the release's default.
    gate: str = ""
    component: str = ""
    # The behaviour is in the code from ``since`` on, behind ``gate``, which is off by default
    # there: a cluster has it only with the gate on, and no gate brings it to an earlier release.
    needs_gate: bool = False


TERMINATING_VICTIMS_SKIPPED = Switch(
    "terminating-victims-skipped", "1.35", "kubernetes#134927",
    "a victim already terminating (its owner deleted it) is left alone: no DisruptionTarget "
    "condition, no second delete, no Preempted event; with async preemption, when every victim "
    "is already terminating, lower-priority pods nominated to the node keep their nomination")
NOMINATION_CLEARED_ON_BINDING = Switch(
    "nomination-cleared-on-binding", "1.35", "kubernetes#132443, #135103",
    "the API server clears status.nominatedNodeName when a pod is bound",
    gate="ClearingNominatedNodeNameAfterBinding", component="kube-apiserver")
ONE_PREEMPTION_AT_A_TIME = Switch(
    "one-preemption-at-a-time", "1.35", "kubernetes#134294, #134730",
    "a preemptor whose async preemption is still deleting victims is not tried again, so it "
    "cannot preempt the same victim twice")

PREBIND_VICTIMS_CANCELLED = Switch(
    "prebind-victims-cancelled", "1.36", "kubernetes#135502, #135719",
    "a victim still in PreBind is preempted in the scheduler's memory (its binding cancelled): no "
    "DisruptionTarget patch, no delete; before, it got both, like a bound pod (a victim waiting in "
    "Permit was rejected in memory in every release)")
LAST_VICTIM_SKIPPED_AFTER_FAILURE = Switch(
    "last-victim-skipped-after-failure", "1.36", "kubernetes#135495",
    "with async preemption, when preempting any victim but the last fails, the last victim gets no "
    "call and the preemptor is activated at once; before, the last victim was preempted all the same")
PREEMPTOR_ACTIVATED_AFTER_IN_MEMORY_LAST = Switch(
    "preemptor-activated-after-in-memory-last-victim", "1.37", "kubernetes#140054 (issue #140082)",
    "with async preemption, a preemptor whose last victim was preempted in memory (in Permit or "
    "PreBind: no delete event will come) is activated when its preemption ends")

NOMINATED_PODS_IN_AFFINITY_HINTS = Switch(
    "nominated-pods-in-affinity-hints", "1.36", "kubernetes#135325, #135392",
    "InterPodAffinity's queueing hint counts a nominated pending pod's deletion or nomination change, and a "
    "deleted pod's own anti-affinity against the parked pod: such a pod is retried at once, not at the flush")
ANY_TERM_IN_AFFINITY_HINTS = Switch(
    "any-term-in-affinity-hints", "1.37", "kubernetes#139161",
    "InterPodAffinity's queueing hint wakes a parked pod when a deleted pod matches any of its anti-affinity "
    "terms, not only all of them")
TAINT_EVENT_FOR_NODE_ADD_PLUGINS = Switch(
    "taint-event-for-node-add-plugins-removed", "1.37", "kubernetes#138708 (issue #109437)",
    "a taint change or an uncordon wakes a parked pod only through its rejectors' own hints; before, "
    "NodeAffinity, NodeResourcesFit and InterPodAffinity (every plugin registering NodeAdd but not "
    "UpdateNodeTaint) were given an UpdateNodeTaint registration that always says Queue")
PREEMPTION_SUCCESS_MESSAGE = Switch(
    "preemption-success-message", "1.37", "kubernetes#140180",
    "a preemptor left pending after a successful preemption has a message that ends with "
    "'preemption: found a potential placement for pod on node N, preempting K victims' (K counts "
    "every victim of the chosen node, already terminating ones too); before, the filter reasons only")

# Pod groups (gang scheduling and workload-aware preemption), alpha in 1.36 and beta in 1.37: the
# beta reworked the preemption search and the queue (docs/research/workload-aware-preemption.md).
GROUP_PRIORITY_MUST_MATCH = Switch(
    "group-priority-must-match", "1.37", "kubernetes#139920, #140356",
    "every pod of a pod group must have its group's priority: otherwise the whole group fails each "
    "cycle with a SchedulerError, before any filter runs (1.36 does not check)")
GROUP_POLICY_FROM_GROUP = Switch(
    "group-policy-from-group", "1.37", "kubernetes#139240, #140359 (KEP-5710; the PodGroupPreemptionPolicy gate, alpha)",
    "a pod group preempts by its own spec.preemptionPolicy (admission writes it from the group's "
    "class; unset means PreemptLowerPriority), and each of its pods must have that same policy, else "
    "the cycle fails; with the gate off the group's policy is Never when any of its pods has Never, "
    "and 1.37 requires its pods to agree among themselves",
    gate="PodGroupPreemptionPolicy", component="kube-scheduler", needs_gate=True)
GROUP_PLACEMENT_FIXED = Switch(
    "group-placement-fixed", "1.37", "kubernetes#138757",
    "workload-aware preemption places the group once with every lower-priority unit removed and keeps "
    "that placement; a victim is spared when every placed pod still passes the filters with it back "
    "(1.36 re-runs the whole group placement for each victim it tries to spare)")
GROUP_MEMBERS_AT_GROUP_PRIORITY = Switch(
    "group-members-at-group-priority", "1.37", "kubernetes#139030, #137981",
    "as a victim, any pod of a pod group counts at its group's priority (1.36: only pods of a group "
    "disrupted as a whole; the others at their own priority)")
GROUP_NOMINATED_WHERE_PLACED = Switch(
    "group-nominated-where-placed", "1.37", "kubernetes#140590",
    "after workload-aware preemption each placed pod of the group is nominated to the node the "
    "preemption placed it on (1.36 nominates the pods that fitted in the failed attempt, to the node "
    "they fitted on there)")
GROUP_ONGOING_PREEMPTION = Switch(
    "group-ongoing-preemption", "1.37", "kubernetes#138710, #140641",
    "a pod group that fails its cycle does not preempt while a pod of it is nominated to a node where a "
    "pod below the group's priority (its own group's, where it names one) is terminating by preemption: "
    "it keeps its nominations and finds no new victims (1.36 has no such check)")
GROUP_REST_RETRIED_AT_ONCE = Switch(
    "group-rest-retried-at-once", "1.37", "kubernetes#138567, #139613",
    "after a pod-group cycle that binds some of the group's pods, the pods it could not place go "
    "straight back to the active queue, keeping their place and with no backoff: the next cycle, "
    "at once, preempts for them (1.36 parks each in the unschedulable pool, where binding its "
    "group's other pods does not wake it)")
LONE_PREEMPTOR_GROUP_VICTIMS = Switch(
    "lone-preemptor-group-victims", "1.37", "kubernetes#137981",
    "a lone preemptor (a pod in no pod group) weighs its victims as pod-group preemption does: a pod "
    "that names a pod group at its group's priority, and the running pods of a group disrupted as a "
    "whole as one victim, preempted whole on every node they run on (1.36, or the gate off: each pod "
    "on the node a victim of its own at its own priority)",
    gate="GenericWorkload", component="kube-scheduler", needs_gate=True)
COMPOSITE_POD_GROUPS = Switch(
    "composite-pod-groups", "1.37", "kubernetes#139596, #140634 (KEP-6012, scheduling.k8s.io/v1alpha3; the CompositePodGroup gate, alpha)",
    "pod groups nest under composite pod groups: a pod counts at its root group's priority, a victim "
    "is every running pod under its highest ancestor disrupted as a whole (a composite group's such "
    "victim ranks above a pod group's), and a composite group preempts as one for all its pod groups' "
    "pods; with the gate off the scheduler lists no composite group and each pod group stands alone",
    gate="CompositePodGroup", component="kube-scheduler", needs_gate=True)
DEFERRED_RESIZE_PREEMPTION = Switch(
    "deferred-resize-preemption", "1.37", "kubernetes#140000 (KEP-5836)",
    "a running pod whose in-place resize the kubelet deferred is queued and scheduled again, bound to its "
    "own node: only NodeName, DeferredPodScheduling (the node's disableResizePreemption) and "
    "NodeResourcesFit judge it, and when it does not fit it preempts lower-priority pods of that node, "
    "without a nomination; before (or with the gate off) the scheduler leaves it alone",
    gate="InPlacePodVerticalScalingSchedulerPreemption", component="kube-scheduler", needs_gate=True)
SWITCHES = (TERMINATING_VICTIMS_SKIPPED, NOMINATION_CLEARED_ON_BINDING, ONE_PREEMPTION_AT_A_TIME,
            PREBIND_VICTIMS_CANCELLED, LAST_VICTIM_SKIPPED_AFTER_FAILURE, PREEMPTOR_ACTIVATED_AFTER_IN_MEMORY_LAST,
            NOMINATED_PODS_IN_AFFINITY_HINTS, ANY_TERM_IN_AFFINITY_HINTS, TAINT_EVENT_FOR_NODE_ADD_PLUGINS,
            PREEMPTION_SUCCESS_MESSAGE,
            GROUP_PRIORITY_MUST_MATCH, GROUP_POLICY_FROM_GROUP,
            GROUP_PLACEMENT_FIXED, GROUP_MEMBERS_AT_GROUP_PRIORITY, GROUP_NOMINATED_WHERE_PLACED, GROUP_ONGOING_PREEMPTION,
            GROUP_REST_RETRIED_AT_ONCE, LONE_PREEMPTOR_GROUP_VICTIMS, COMPOSITE_POD_GROUPS,
            DEFERRED_RESIZE_PREEMPTION)


def minor(release: str) -> tuple[int, int]:
    """(1, 35) from "1.35", "v1.35.8" or "1.35.8"."""
    parts = release.lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a Kubernetes release: {release!r} (expected like 1.35 or v1.35.8)") from None


Gates = tuple[tuple[str, str, bool], ...]  # (component, or "" for all; gate; value), later wins


def has(release: str, switch: Switch, gates: Gates = ()) -> bool:
    """Whether ``release`` behaves the new way: by its gate where one is set, else by the release
    (for a switch that ``needs_gate``: by the release and the gate both)."""
    value = minor(release) >= minor(switch.since)
    gated: bool | None = None
    for component, gate, on in gates:
        if switch.gate and gate == switch.gate and component in ("", switch.component):
            gated = on
    if switch.needs_gate:
        return value and bool(gated)
    return value if gated is None else gated


_RANGE = re.compile(r"^\s*(>=|<)\s*(\d+\.\d+)\s*$")


def parse_range(text: str) -> tuple[str, str]:
    """A scenario's ``releases:``, ">=1.35" or "<1.35", as (operator, release)."""
    m = _RANGE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a release range: write >=1.35 or <1.35")
    return m.group(1), m.group(2)


def in_range(release: str, text: str) -> bool:
    """Whether ``release`` is in a range ("" is every release)."""
    if not text:
        return True
    op, bound = parse_range(text)
    return (minor(release) >= minor(bound)) == (op == ">=")
