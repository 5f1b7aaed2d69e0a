"""The client that performs a Karmada scenario's actions: its objects on Karmada and on its
members, the calls that change them, and their removal."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.utils import parse_quantity

from harness.clusters.karmada import KarmadaPlane
from harness.errors import KitError
from harness.formats.bindings import KarmadaScenario
from harness.kube import KIT_LABEL, PAUSE_IMAGE, Kube
from harness.host.wait import NotYet, wait_for
from harness.run.bindings.history import Observed
from harness.run.names import Names

POLICY_GROUP = ("policy.karmada.io", "v1alpha1", "propagationpolicies")


@dataclass
class BindingClient:
    """Creates and removes one scenario's objects on Karmada and on its members."""

    plane: KarmadaPlane
    scenario: KarmadaScenario
    run_id: str
    names: Names = field(init=False)
    member_of: dict[str, str] = field(default_factory=dict)  # scenario member -> Karmada Cluster name

    def __post_init__(self) -> None:
        self.names = Names.for_bindings(self.scenario.id, self.run_id)
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

    @property
    def namespace(self) -> str:
        return self.names.namespace

    def class_name(self, name: str) -> str:
        return self.names.class_name(name)

    def node_name(self, member: str) -> str:
        return self.names.node_name(member)

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
