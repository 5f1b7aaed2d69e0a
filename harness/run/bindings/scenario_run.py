"""Run one Karmada scenario on a real Karmada control plane and compare each expect with the model.

The split follows Jepsen's: ``BindingClient`` turns scenario actions into API
calls (and owns the names of what it creates), ``BindingHistory`` records
what Karmada did, and ``compare`` holds an observation against the model's
prediction. The file's own ``expect`` is a reading aid: the verdict is the
model's (the unit tests keep the two in agreement).

Scenarios on one control plane run one at a time: they stop and start the one
karmada-scheduler, and they read member capacity as a whole.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.utils import parse_quantity

from reference.binding.objects import SCHEDULED, binding_name
from reference.binding.predict import UNSET, BindingExpectation, StepExpectation, predict

from harness.host import lifecycle
from harness.run.bindings.history import BindingHistory, Observed
from harness.formats.bindings import KarmadaScenario
from harness.errors import KitError
from harness.clusters.karmada import KarmadaPlane
from harness.kube import KIT_LABEL, PAUSE_IMAGE, Kube, NotYet, wait_for

HOLD = 3.0  # an expectation must hold this long: "absent" or "waiting" right after an action proves little
POLICY_GROUP = ("policy.karmada.io", "v1alpha1", "propagationpolicies")


@dataclass
class BindingClient:
    """Creates and removes one scenario's objects on Karmada and on its members."""

    plane: KarmadaPlane
    scenario: KarmadaScenario
    run_id: str
    namespace: str = ""
    member_of: dict[str, str] = field(default_factory=dict)  # scenario member -> Karmada Cluster name

    def __post_init__(self) -> None:
        self.namespace = f"kb-{self.run_id}-{self.scenario.id}"[:63].rstrip("-")
        plane_members = list(self.plane.members)
        if len(self.scenario.members) > len(plane_members):
            raise KitError(f"{self.scenario.id}: needs {len(self.scenario.members)} member clusters; "
                           f"the control plane has {len(plane_members)}")
        self.member_of = {m.name: plane_members[i] for i, m in enumerate(self.scenario.members)}
        self.kube = Kube(self.plane.kubeconfig)
        self.objects = client.CustomObjectsApi(self.kube.api)
        self.apps = client.AppsV1Api(self.kube.api)
        self.members = {name: Kube(c.kubeconfig) for name, c in self.plane.members.items()}
        self.classes: set[str] = set()

    def class_name(self, name: str) -> str:
        return f"{self.namespace}-{name}"[:253]

    def node_name(self, member: str) -> str:
        return f"{self.namespace}-{member}"[:63]

    # -- set-up and tear-down --------------------------------------------------------------

    def set_up(self) -> None:
        self.kube.create_namespace(self.namespace, self.run_id)
        for m in self.scenario.members:
            self.members[self.member_of[m.name]].create_node(self.node_name(m.name), 0, self.run_id, cpu_milli=m.cpu)
        for c in self.scenario.priorityClasses:
            self.create_class(c.name, c.value)
        want = {self.member_of[m.name]: m.cpu for m in self.scenario.members}
        for cluster in self.plane.members:
            wait_for(lambda c=cluster: self._room_is(c, want.get(c, 0)), 60,
                     f"Karmada to see member {cluster} with {want.get(cluster, 0)}m CPU free")

    def _room_is(self, cluster: str, cpu_milli: int) -> None:
        c = self.objects.get_cluster_custom_object("cluster.karmada.io", "v1alpha1", "clusters", cluster)
        summary = c.get("status", {}).get("resourceSummary") or {}
        have = _milli(summary.get("allocatable", {}).get("cpu", "0"))
        used = sum(_milli(summary.get(k, {}).get("cpu", "0")) for k in ("allocated", "allocating"))
        if have - used != cpu_milli or used:
            raise NotYet(f"allocatable {have}m, in use {used}m")

    def tear_down(self) -> None:
        """Remove everything, even after a failure half-way; the next scenario needs empty members."""
        errors = []
        for step in (self._delete_namespace, self._delete_nodes, self._delete_classes):
            try:
                step()
            except Exception as e:
                errors.append(f"{step.__name__}: {e}")
        for k in (self.kube, *self.members.values()):
            k.close()
        if errors:
            raise KitError(f"{self.scenario.id}: clean-up failed: {'; '.join(errors)}")

    def _delete_namespace(self) -> None:
        self.kube.delete_namespace(self.namespace)
        # Karmada removes the propagated namespace (and its Deployments) from the members.
        for name, member in self.members.items():
            wait_for(lambda m=member: _gone(lambda: m.core.read_namespace(self.namespace)), 90,
                     f"namespace {self.namespace} to leave member {name}")
        wait_for(lambda: _gone(lambda: self.kube.core.read_namespace(self.namespace)), 90,
                 f"namespace {self.namespace} to go from Karmada")

    def _delete_nodes(self) -> None:
        for m in self.scenario.members:
            try:
                self.members[self.member_of[m.name]].core.delete_node(self.node_name(m.name))
            except ApiException as e:
                if e.status != 404:
                    raise

    def _delete_classes(self) -> None:
        for name in list(self.classes):
            self.delete_class(name)

    # -- actions ------------------------------------------------------------------------------

    def create_class(self, name: str, value: int) -> None:
        self.kube.scheduling.create_priority_class(client.V1PriorityClass(
            metadata=client.V1ObjectMeta(name=self.class_name(name), labels={KIT_LABEL: self.run_id}), value=value))
        self.classes.add(name)

    def delete_class(self, name: str) -> None:
        try:
            self.kube.scheduling.delete_priority_class(self.class_name(name))
        except ApiException as e:
            if e.status != 404:
                raise
        self.classes.discard(name)

    def propagate(self, name: str, replicas: int, cpu: int, class_name: str | None) -> None:
        labels = {"app": name}
        self.apps.create_namespaced_deployment(self.namespace, client.V1Deployment(
            metadata=client.V1ObjectMeta(name=name, labels=labels),
            spec=client.V1DeploymentSpec(
                replicas=replicas, selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    # Member pods go at once when their app goes: kwok would keep them Terminating
                    # for the default 30 s, and the next scenario waits for empty members.
                    spec=client.V1PodSpec(termination_grace_period_seconds=0, containers=[client.V1Container(
                        name="c", image=PAUSE_IMAGE,
                        resources=client.V1ResourceRequirements(requests={"cpu": f"{cpu}m"},
                                                                limits={"cpu": f"{cpu}m"}))])))))
        spec: dict = {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
            "placement": {
                "clusterAffinity": {"clusterNames": sorted(self.member_of.values())},
                "replicaScheduling": {"replicaSchedulingType": "Divided",
                                      "replicaDivisionPreference": "Aggregated"},
            },
        }
        if class_name is not None:
            spec["schedulePriority"] = {"priorityClassSource": "KubePriorityClass",
                                        "priorityClassName": self.class_name(class_name)}
        self.objects.create_namespaced_custom_object(*POLICY_GROUP[:2], self.namespace, POLICY_GROUP[2], {
            "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": name}, "spec": spec})

    def scale(self, name: str, replicas: int) -> None:
        self.apps.patch_namespaced_deployment(name, self.namespace, {"spec": {"replicas": replicas}})

    def delete(self, name: str) -> None:
        self.apps.delete_namespaced_deployment(name, self.namespace)
        self.objects.delete_namespaced_custom_object(*POLICY_GROUP[:2], self.namespace, POLICY_GROUP[2], name)

    def observed_clusters(self, obs: Observed) -> tuple[tuple[str, int], ...]:
        """Karmada's Cluster names back to the scenario's member names."""
        back = {v: k for k, v in self.member_of.items()}
        return tuple(sorted((back.get(c, c), n) for c, n in obs.clusters))


# -- the checker ------------------------------------------------------------------------------


def compare(app: str, want: BindingExpectation, obs: Observed, clusters: tuple[tuple[str, int], ...]) -> str | None:
    """None if the observation is one the model allows; else what differs, with the model's reason."""
    problems = []
    if obs.state != want.state:
        problems.append(f"state {obs.state}, expected {want.state}")
    if want.priority is not UNSET and obs.state != "absent" and obs.priority != want.priority:
        problems.append(f"priority {_p(obs.priority)}, expected {_p(want.priority)}")
    if want.clusters is not None and obs.state == SCHEDULED and clusters not in want.clusters:
        allowed = " or ".join(str(dict(c)) for c in sorted(want.clusters))
        problems.append(f"clusters {dict(clusters)}, expected {allowed}")
    if not problems:
        return None
    return f"{app} ({binding_name(app)}): {'; '.join(problems)} [{want.reason}]"


def _p(priority) -> str:
    return "absent" if priority is None else str(priority)


@dataclass(frozen=True)
class StepVerdict:
    index: int
    differences: tuple[str, ...]


@dataclass
class BindingRun:
    """One scenario, start to end: set up, drive the steps, check each expect, clean up."""

    plane: KarmadaPlane
    scenario: KarmadaScenario
    run_id: str
    verdicts: list[StepVerdict] = field(default_factory=list)
    history_lines: list[str] = field(default_factory=list)

    def run(self) -> list[StepVerdict]:
        predictions = {p.index: p for p in predict(self.scenario)}
        gates = self.scenario.gates.model_dump()
        if not self.plane.scheduler_running() or self.plane.scheduler_gates != self.plane.gates_for(gates):
            self.plane.start_scheduler(gates)
        kc = BindingClient(self.plane, self.scenario, self.run_id)
        history = None
        try:
            kc.set_up()
            history = BindingHistory(kc.kube.api, kc.namespace)
            for i, step in enumerate(self.scenario.steps):
                lifecycle.check()
                self._act(kc, step)
                if i in predictions:
                    self.verdicts.append(self._check(kc, history, predictions[i], list(step.expect.order),
                                                     step.settle_time.total_seconds()))
            return self.verdicts
        finally:
            if history is not None:
                history.close()
                self.history_lines = history.lines()
            try:
                if not self.plane.scheduler_running() or self.plane.scheduler_gates != self.plane.gates_for({}):
                    self.plane.start_scheduler({})
            finally:
                kc.tear_down()

    def _act(self, kc: BindingClient, step) -> None:
        if step.createClass:
            kc.create_class(step.createClass.name, step.createClass.value)
        elif step.deleteClass:
            kc.delete_class(step.deleteClass)
        elif step.propagate:
            p = step.propagate
            kc.propagate(p.name, p.replicas, p.cpu, p.class_name)
        elif step.scale:
            kc.scale(step.scale.name, step.scale.replicas)
        elif step.delete:
            kc.delete(step.delete)
        elif step.scheduler == "stopped":
            self.plane.stop_scheduler()
        elif step.scheduler == "running":
            self.plane.start_scheduler()
        elif step.wait is not None:
            lifecycle.pause(step.wait.total_seconds())

    def _check(self, kc: BindingClient, history: BindingHistory, want: StepExpectation, apps: list[str],
               settle: float) -> StepVerdict:
        deadline = time.monotonic() + settle
        held_since: float | None = None
        while True:
            diffs = self._differences(kc, history, want, apps)
            now = time.monotonic()
            if diffs:
                held_since = None
            elif held_since is None:
                held_since = now
            if held_since is not None and now - held_since >= HOLD:
                return StepVerdict(want.index, ())
            if now > deadline and held_since is None:
                return StepVerdict(want.index, tuple(diffs))
            lifecycle.pause(0.25)

    @staticmethod
    def _differences(kc: BindingClient, history: BindingHistory, want: StepExpectation, apps: list[str]) -> list[str]:
        diffs = []
        for app, exp in sorted(want.bindings.items()):
            obs = history.now(app)
            d = compare(app, exp, obs, kc.observed_clusters(obs))
            if d:
                diffs.append(d)
        if want.orders is not None:
            seen = history.first_scheduled(apps)
            if seen not in want.orders:
                allowed = " or ".join(" < ".join(o) for o in sorted(want.orders))
                diffs.append(f"first scheduled in the order {' < '.join(seen) or '(none yet)'}, expected {allowed}")
        return diffs


def _gone(read) -> None:
    try:
        read()
    except ApiException as e:
        if e.status == 404:
            return
        raise
    raise NotYet("still there")



def _milli(q: str) -> int:
    return int(parse_quantity(q) * 1000)
