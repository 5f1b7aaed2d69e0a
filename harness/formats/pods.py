"""The pod scenario format (scenarios/*.yaml): one behaviour per YAML file, validated before anything runs.

scenarios/README.md documents the format for people; this module is its
schema (its bridge to the model, reference.objects, is harness.formats.pod_model). Reading, errors and
the id rule are the shared reader's (harness.formats.common): unknown fields,
wrong types, dangling names and impossible values are a ``ScenarioError``
naming the file, the path inside it and what was expected.
"""

from __future__ import annotations

from harness import SCENARIOS

from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator, model_validator

from reference import podgroup
from reference.admission import SYSTEM_CLASSES
from reference.queue import UNSCHEDULABLE_MAX_STAY as RELEASE_FLUSH
from reference.release import DEFAULT_RELEASE, RELEASES, in_range, minor, parse_range

from harness import gates
from harness.formats import common
from harness.formats.faults import FAULT_ACTIONS, DuringFault, FaultFields, fault_errors
from harness.formats.resources import PodResources, ResizePod
from harness.formats.common import PODS, Name, ScenarioId, SpanField, Strict, dupes, field_path
from harness.formats.nodes import (KWOK_ONLY, NODE_ACTIONS, LabelNode, NodeSpec, ResizeNode, TaintNode,
                                   UntaintNode, node_errors)
from harness.kube import NODE_MILLI_CPU, NODE_STORAGE, POD_MEMORY
from harness.targets import BUILDS

EPHEMERAL_STORAGE = "ephemeral-storage"
MEMORY = "memory"
PIDS = "pids"  # a pressure resource only: no pod requests it
CPU = "cpu"  # in millicores, as the model counts it
AREAS = ("admission", "queue", "preemption", "nonpreempting", "pdb", "toleration", "filter", "eviction", "podgroup")
# A scenario with pod groups names the gates as their first release does; 1.37 folded the last
# two into the first (harness.gates.FOLDED), and a release without them reports the scenario as not run.
GROUP_GATES = podgroup.GATES[podgroup.SINCE]

TOPOLOGY = {"hostname": "kubernetes.io/hostname", "zone": "topology.kubernetes.io/zone"}

Labels = dict[Annotated[str, Field(min_length=1)], str]


class ClassSpec(Strict):
    name: Name
    value: int = Field(ge=-(2**31), le=2**31 - 1)
    globalDefault: bool = False
    preemptionPolicy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    description: str = ""
    annotations: dict[str, str] = {}


class TolerationSpec(Strict):
    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""


class AffinityTerm(Strict):
    labels: Labels = Field(min_length=1)
    topology: Literal["hostname", "zone"] = "hostname"


class PodGroupSpec(Strict):
    """A PodGroup (scheduling.k8s.io; v1alpha2 in 1.36, v1beta1 in 1.37: the kit writes the release's)."""

    name: Name
    # A gang: none of its pods binds until this many fit at once. Unset: the basic policy.
    minCount: int | None = Field(default=None, ge=1, le=100)
    priorityClassName: str = Field(default="", alias="class")
    # "all": a preemptor takes every running pod of the group or none (1.36 PodGroup, 1.37 {all: {}});
    # "single": each pod is a victim of its own (1.36 Pod, 1.37 {single: {}}; the default).
    disruptionMode: Literal["single", "all"] = "single"
    # spec.preemptionPolicy: 1.37 with the PodGroupPreemptionPolicy gate (else dropped); must be its class's
    preemptionPolicy: Literal["PreemptLowerPriority", "Never"] | None = None


class PodSpec(PodResources):
    name: Name
    priorityClassName: str = Field(default="", alias="class")
    group: str = ""  # the pod group it belongs to (spec.schedulingGroup.podGroupName)
    slots: int = Field(default=1, ge=0, le=1000)
    labels: Labels = {}
    grace: int = Field(default=5, ge=0, le=600, description="terminationGracePeriodSeconds")
    node: str = ""  # where an initial pod must run
    bypassScheduler: bool = False  # bind with spec.nodeName: no PodScheduled condition
    priority: int | None = Field(default=None, ge=-(2**31), le=2**31 - 1)  # spec.priority, set explicitly
    preemptionPolicy: Literal["PreemptLowerPriority", "Never"] | None = None
    nodeSelector: Labels = {}
    tolerations: list[TolerationSpec] = []
    podAffinity: list[AffinityTerm] = []
    podAntiAffinity: list[AffinityTerm] = []


class PdbSpec(Strict):
    """Scenario pods have no controller, so only an integer minAvailable makes a budget."""

    name: Name
    selector: Labels = {}
    minAvailable: int = Field(ge=0)


class PressureSpec(Strict):
    """The node's kubelet runs short of a resource, by just enough that ``evictions`` pods must go
    (the kit sizes the shortage from the model's ranking: a wrong ranking evicts other pods, or more)."""

    node: Name
    resource: Literal["ephemeral-storage", "memory", "pids"] = "ephemeral-storage"
    evictions: int = Field(default=1, ge=1, le=5)


PodSet = Union[str, list[str]]  # one node, or the set the scheduler may choose from


class Expect(Strict):
    running: dict[str, PodSet] = {}
    preempted: list[str] = []
    notPreempted: list[str] = []
    pending: list[str] = []
    nominated: dict[str, PodSet] = {}  # "" for no nomination (status.nominatedNodeName empty)
    rejected: dict[str, str] = {}  # pod or class name -> part of the message
    priority: dict[str, int] = {}
    message: dict[str, str] = {}  # pending pod -> part of its scheduling failure message
    evicted: list[str] = []  # evicted by its node's kubelet for pressure (Failed, reason Evicted)


ACTIONS = ("createPod", "deletePod", "createClass", "updateClass", "patchClass", "deleteClass", "createPdb", "createPodGroup",
           "pressure", "wait", "resizePod", *NODE_ACTIONS, *FAULT_ACTIONS)


class Step(FaultFields):
    """Exactly one action per step."""

    createPod: PodSpec | None = None
    deletePod: str | None = None
    createClass: ClassSpec | None = None
    updateClass: ClassSpec | None = None
    # The same change as a merge patch (PATCH), not a replace (PUT): upstream's Conformance test checks both.
    patchClass: ClassSpec | None = None
    deleteClass: str | None = None
    createPdb: PdbSpec | None = None
    # Its pods may be created before it: the gang plugin holds them until it exists.
    createPodGroup: PodGroupSpec | None = None
    pressure: PressureSpec | None = None
    wait: SpanField | None = None
    resizePod: ResizePod | None = None
    addNode: NodeSpec | None = None
    deleteNode: Name | None = None
    labelNode: LabelNode | None = None
    taintNode: TaintNode | None = None
    untaintNode: UntaintNode | None = None
    cordon: Name | None = None
    uncordon: Name | None = None
    resizeNode: ResizeNode | None = None
    # restartScheduler, pauseScheduler, restartApiserver, failover, disconnectScheduler: FaultFields.
    # A fault at a named point of what the action starts (a preemption): see DuringFault.
    during: DuringFault | None = None
    expect: Expect | None = None
    settle: SpanField | None = Field(
        default=None, description="how long after the action its outcome is looked at (or flush+N)"
    )

    @model_validator(mode="after")
    def one_action(self) -> Step:
        actions = [k for k in ACTIONS if getattr(self, k) is not None]
        if len(actions) > 1:
            raise ValueError(f"a step does one thing; this one has {', '.join(actions)}")
        if not actions and self.expect is None:
            raise ValueError("a step needs an action or an expect")
        if self.during is not None and (not actions or actions[0] in FAULT_ACTIONS or actions[0] == "wait"):
            raise ValueError("during: goes with an action that starts something (createPod, deletePod, a node step...), "
                             f"not {actions[0] if actions else 'a step without one'}")
        return self

    @property
    def action(self) -> str | None:
        return next((k for k in ACTIONS if getattr(self, k) is not None), None)

    @property
    def disconnect(self) -> timedelta | None:
        """How long the step cuts the scheduler's connection, as its own action or its during:'s."""
        return self.disconnectScheduler or (self.during.disconnectScheduler if self.during else None)


class Scenario(Strict):
    id: ScenarioId
    title: str = Field(min_length=1)
    spec: str = Field(min_length=1, description="where the rule comes from")
    areas: list[Literal[AREAS]] = Field(min_length=1)  # type: ignore[valid-type]
    builds: list[Literal[BUILDS]] = list(BUILDS)  # type: ignore[valid-type]
    # The Kubernetes releases whose behaviour this scenario specifies (">=1.35", "<1.35"; all if
    # unset), or such a range per build ({upstream: ">=1.35"}: the plugins build on every release).
    # On another release a difference is expected, and no difference is news.
    releases: str | dict[Literal[BUILDS], str] = ""  # type: ignore[valid-type]
    alone: bool = False  # touches cluster-wide state (a globalDefault class)
    # Feature gates it needs (every component) and API versions the API server must serve: it
    # runs on a local cluster of its own started with them, and is skipped, saying why, where
    # they cannot be had (a release without the gate, a cluster the kit did not start).
    gates: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9]+$")], bool] = {}
    apis: list[Annotated[str, Field(pattern=r"^[a-z0-9.-]+/v\d+((alpha|beta)\d+)?$")]] = []
    priorityClasses: list[ClassSpec] = []
    podGroups: list[PodGroupSpec] = []
    nodes: list[NodeSpec] = Field(min_length=1)
    pods: list[PodSpec] = []
    pdbs: list[PdbSpec] = []
    steps: list[Step] = Field(min_length=1)

    @field_validator("releases")
    @classmethod
    def _release_range(cls, v):
        for text in (v.values() if isinstance(v, dict) else [v]):
            if text:
                parse_range(text)
        return v

    def releases_of(self, build: str) -> str:
        """The range of releases this scenario specifies for ``build`` ("" for all). A scenario
        with pod groups specifies no release before pod groups exist (reference.podgroup.SINCE)."""
        given = self.releases.get(build, "") if isinstance(self.releases, dict) else self.releases
        return given or (f">={podgroup.SINCE}" if self.all_pod_groups else "")

    @property
    def all_pod_groups(self) -> list[PodGroupSpec]:
        """The initial pod groups and those its steps create."""
        return self.podGroups + [s.createPodGroup for s in self.steps if s.createPodGroup]

    @model_validator(mode="after")
    def names_resolve(self) -> Scenario:
        errors = []
        node_names = [n.name for n in self.nodes]
        dupes(node_names, "nodes", errors)
        classes = {c.name for c in self.priorityClasses}
        dupes([c.name for c in self.priorityClasses], "priorityClasses", errors)
        pods: dict[str, PodSpec] = {}  # the pods made so far, by name
        groups = {g.name: g for g in self.podGroups}
        group_names = [g.name for g in self.all_pod_groups]
        dupes(group_names, "podGroups", errors)
        for i, g in enumerate(self.podGroups):
            if g.priorityClassName and g.priorityClassName not in classes | set(SYSTEM_CLASSES):
                errors.append(f"podGroups[{i}].class: no priority class named {g.priorityClassName!r}")
        lacking = [g for g in GROUP_GATES if not self.gates.get(g)]
        if group_names and lacking:
            errors.append(f"gates: pod groups need {', '.join(f'{g}: true' for g in lacking)} "
                          "(1.37 folds the last two into GenericWorkload; the kit leaves them out there)")
        members = [(f"pods[{i}]", p) for i, p in enumerate(self.pods)] + [
            (f"steps[{i}].createPod", s.createPod) for i, s in enumerate(self.steps) if s.createPod]
        for where, p in members:
            # A pod may name a group a later step creates: it waits for it.
            if p.group and p.group not in group_names:
                errors.append(f"{where}.group: no pod group named {p.group!r} (podGroups: {', '.join(group_names) or 'none'})")
        for i, p in enumerate(self.pods):
            g = groups.get(p.group)
            if g is not None and p.priorityClassName != g.priorityClassName and not p.bypassScheduler:
                # 1.37 fails the whole group's cycle on such a pod: the set-up could not place it
                # (one bound directly, by nodeName, never meets that check).
                errors.append(f"pods[{i}].class: an initial pod of group {g.name!r} has its group's class "
                              f"({g.priorityClassName or 'none'}), unless it is bound directly (bypassScheduler: true)")
        for i, p in enumerate(self.pods):
            if p.name in pods:
                errors.append(f"pods[{i}].name: {p.name!r} is defined twice")
            pods[p.name] = p
            if not p.node:
                errors.append(f"pods[{i}].node: an initial pod must say which node it runs on")
            elif p.node not in node_names:
                errors.append(f"pods[{i}].node: no node named {p.node!r} (nodes: {', '.join(node_names)})")
        step_errors, ever = node_errors(self.nodes, self.steps)
        errors += step_errors
        if any(c.globalDefault for c in self.priorityClasses) and not self.alone:
            errors.append("alone: a scenario with a globalDefault class changes cluster-wide state and must say alone: true")
        errors += fault_errors(self.steps)
        created_groups: set[str] = set()  # a PodGroup a step creates can be refused: rejected: may name it
        for i, step in enumerate(self.steps):
            where = f"steps[{i}]"
            if step.createPod:
                if step.createPod.name in pods:
                    errors.append(f"{where}.createPod.name: {step.createPod.name!r} is defined twice")
                pods[step.createPod.name] = step.createPod
                if step.createPod.node:
                    errors.append(f"{where}.createPod.node: only initial pods are placed; the scheduler places this one")
            if step.createClass:
                if step.createClass.globalDefault and not self.alone:
                    errors.append(f"{where}.createClass.globalDefault: needs alone: true")
                classes.add(step.createClass.name)
            if step.pressure:
                if step.pressure.node not in node_names:
                    errors.append(f"{where}.pressure.node: no node named {step.pressure.node!r} (nodes: {', '.join(node_names)})")
                if any(s.action for s in self.steps[i + 1:]):
                    # What follows is the node's pressure condition and taint, which the model leaves out.
                    errors.append(f"{where}.pressure: node pressure must be the scenario's last action")
            if step.resizePod and step.resizePod.name not in pods:
                errors.append(f"{where}.resizePod.name: no pod named {step.resizePod.name!r} exists by then")
            elif step.resizePod and pods[step.resizePod.name].qos == "BestEffort":
                errors.append(f"{where}.resizePod: {step.resizePod.name} is BestEffort, and a resize may not change "
                              "its QoS class: give it qos: Burstable")
            if step.deletePod and step.deletePod not in pods:
                errors.append(f"{where}.deletePod: no pod named {step.deletePod!r} exists by then")
            for kind, change in (("updateClass", step.updateClass), ("patchClass", step.patchClass)):
                if change and change.name not in classes:
                    errors.append(f"{where}.{kind}.name: no class named {change.name!r} exists by then")
            if step.createPodGroup:
                created_groups.add(step.createPodGroup.name)
            if step.expect:
                known = set(pods) | classes
                e = step.expect
                for field_name in ("running", "preempted", "notPreempted", "pending", "nominated", "rejected", "priority",
                                   "message", "evicted"):
                    for name in getattr(e, field_name):
                        if name not in known and not (field_name == "rejected" and name in created_groups):
                            errors.append(f"{where}.expect.{field_name}: no pod or class named {name!r} exists by then")
                for field_name in ("running", "nominated"):
                    for pod_name, nodes in getattr(e, field_name).items():
                        for n in [nodes] if isinstance(nodes, str) else nodes:
                            if n not in ever and not (field_name == "nominated" and n == ""):
                                errors.append(f"{field_path('steps', i, 'expect', field_name, pod_name)}: no node named {n!r}")
        if sum(p.memory for p in self.all_pods) > POD_MEMORY:
            errors.append(f"memory: the scenario's pods hold more than {POD_MEMORY >> 20}Mi in all")
        written = sum(p.writes for p in self.all_pods)
        if written > NODE_STORAGE:
            errors.append(f"writes: the scenario's pods write {written >> 20}Mi in all, more than a node holds for "
                          f"them ({NODE_STORAGE >> 20}Mi)")
        for i, p in enumerate(self.pods):
            if p.priorityClassName and p.priorityClassName not in {c.name for c in self.priorityClasses} | set(SYSTEM_CLASSES):
                errors.append(f"pods[{i}].class: no priority class named {p.priorityClassName!r}")
        if errors:
            raise ValueError("; ".join(errors))
        return self

    def applies_to(self, build: str, release: str = DEFAULT_RELEASE) -> bool:
        return build in self.builds and in_range(release, self.releases_of(build))

    def semantics(self, build: str, release: str = DEFAULT_RELEASE) -> tuple[str, str]:
        """The (build, release) whose behaviour the model predicts for a run on ``build`` at
        ``release``: the run's own where the scenario applies, else the nearest it specifies
        (so that the report shows what the build or release does differently)."""
        if build not in self.builds:
            build = self.builds[0]
        if not in_range(release, self.releases_of(build)):
            inside = [r for r in RELEASES if in_range(r, self.releases_of(build))]
            release = min(inside, key=lambda r: abs(minor(r)[1] - minor(release)[1]))
        return build, release

    def cluster_settings(self) -> gates.Settings:
        """The gates and API versions its cluster must start with."""
        return gates.Settings(tuple(("", g, v) for g, v in self.gates.items()), tuple(self.apis))

    @property
    def needs_kubelet(self) -> bool:
        """Whether a real kubelet must run it: node pressure (kwok nodes have no eviction manager)."""
        return any(step.pressure is not None for step in self.steps)

    @property
    def faults(self) -> tuple[str, ...]:
        """The faults it injects (restartScheduler, a during: fault): they need the scheduler's process."""
        return tuple(s.action if s.action in FAULT_ACTIONS else f"during.{s.during.action}"
                     for s in self.steps if s.action in FAULT_ACTIONS or s.during is not None)

    @property
    def all_pods(self) -> list[PodSpec]:
        """The initial pods and those its steps create."""
        return self.pods + [s.createPod for s in self.steps if s.createPod]

    @property
    def needs_standby(self) -> bool:
        """Whether it fails over to a second scheduler (harness.clusters.standby)."""
        return any(s.failover or (s.during and s.during.failover) for s in self.steps)

    @property
    def needs_link(self) -> bool:
        """Whether it cuts the scheduler's own connection to the API server (harness.clusters.link)."""
        return any(s.disconnect for s in self.steps)

    @property
    def needs_kwok(self) -> str:
        """What only nodes the kit creates can do (a node added or deleted, a cpu of the scenario's
        choosing, a resize no kubelet actuates), as "its ... ", or ""."""
        if any(n.milliCPU != NODE_MILLI_CPU for n in self.nodes + [s.addNode for s in self.steps if s.addNode]):
            return "node's milliCPU"
        return next((f"{s.action} step" for s in self.steps if s.action in KWOK_ONLY + ("resizePod",)), "")

    def least_seconds(self, flush: timedelta = RELEASE_FLUSH) -> float:
        """A lower bound of the scenario's run time at flush interval ``flush``: the time its steps
        make pass on purpose."""
        return common.least_seconds(self.steps, flush)


CATALOGUE = SCENARIOS


def load(path: str | Path) -> Scenario:
    return common.load_model(path, Scenario, PODS)


def load_all(directory: str | Path) -> list[Scenario]:
    return common.load_folder(directory, load)


def load_sources(sources: list[Path] | None = None) -> list[Scenario]:
    """Every scenario in ``sources`` (files or folders; default: the kit's catalogue)."""
    return common.load_sources(sources or [CATALOGUE], load)
