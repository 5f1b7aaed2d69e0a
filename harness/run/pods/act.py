"""The client that performs a pod scenario's actions: the calls that create, change and delete
its objects (built by ``manifests``).

What the API server refuses (a class it will not admit, a pod naming a missing class) is a
scenario's outcome, not a failure: the refusal's message is kept in ``rejected`` for the
model to be held against.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from harness.formats import nodes as node_steps
from harness.formats.pods import ClassSpec, NodeSpec, PdbSpec, PodGroupSpec, PodSpec, Scenario, Step
from harness.formats.resources import ResizePod
from harness.host import lifecycle
from harness.kube import Kube, write_once
from harness.host.wait import NotYet, wait_for
from harness.run.names import SCENARIO_LABEL, Names
from harness.run.pods.manifests import admission_probe, pod_group_api, v1_class, v1_pod, v1_pod_group
from harness.run.pods.nodes import KwokNodes, NodeSource
from reference.queue import UNSCHEDULABLE_MAX_STAY

REFUSED = (400, 403, 409, 422)  # the API server's refusals a scenario may provoke
# How long the API server's admission may take to see a class change: its informer is told at
# once on a quiet machine, in well under a second on a loaded one.
ADMISSION_BOUND = 30.0


class PodClient:
    """Performs one scenario's actions in its namespace, and remembers what it made and what was refused."""

    def __init__(self, kube: Kube, scenario: Scenario, names: Names, image: str, release: str = "",
                 nodes: NodeSource | None = None, run_id: str = "", flush: timedelta = UNSCHEDULABLE_MAX_STAY):
        self.kube, self.s, self.names, self.image, self.release = kube, scenario, names, image, release
        self.nodes, self.run_id, self.flush = nodes or KwokNodes(), run_id, flush
        # The scenario's nodes as its own steps left them: nothing else changes what the model reads
        # of them (their labels, taints, cordon and room), as with the classes it made.
        self.node_specs: dict[str, NodeSpec] = {n.name: n for n in scenario.nodes}
        self.claimed: dict[str, str] = {}  # scenario node -> cluster node, for teardown
        self.pod_specs: dict[str, PodSpec] = {p.name: p for p in scenario.pods}
        self.class_specs: dict[str, ClassSpec] = {c.name: c for c in scenario.priorityClasses}
        self.created_classes: set[str] = set()
        self.rejected: dict[str, str] = {}  # pod or class name -> the API server's refusal
        self.group_specs: list[PodGroupSpec] = []  # the pod groups made so far, initial ones first

    def create_class(self, c: ClassSpec) -> str | None:
        try:
            name = self.names.class_name(c.name)
            write_once(lambda: self.kube.scheduling.create_priority_class(v1_class(c, self.names)),
                       lambda: self.kube.exists(self.kube.scheduling.read_priority_class, name), f"creating PriorityClass {name}")
        except ApiException as e:
            if e.status in REFUSED:
                return api_message(e)
            raise
        self.created_classes.add(self.names.class_name(c.name))
        self.class_specs[c.name] = c
        self.wait_admission_sees(c)
        return None

    def wait_admission_sees(self, c: ClassSpec, deleted: bool = False) -> None:
        """Until the API server's Priority admission resolves the class as it now is.

        Admission reads classes from the API server's informer, which learns of a change a moment
        after the write returns: a pod or PodGroup created at once may be refused ("no PriorityClass
        with name ... was found") or given the old value. A dry-run pod goes through the same
        admission and is stored nowhere, so it shows what the next real object will meet."""
        name = self.names.class_name(c.name)

        def admitted(class_name: str | None) -> None:
            try:
                pod = self.kube.core.create_namespaced_pod(self.names.namespace, admission_probe(class_name, self.image),
                                                           dry_run="All")
            except ApiException as e:
                if deleted and e.status == 403:
                    return
                raise NotYet(f"a pod of class {class_name} is refused: {api_message(e)}") from None
            if deleted:
                raise NotYet(f"a pod of the deleted class {class_name} is still admitted")
            if pod.spec.priority != c.value:
                raise NotYet(f"a pod of class {class_name or '(global default)'} gets priority {pod.spec.priority}, "
                             f"not {c.value}")

        what = f"the API server's admission to see PriorityClass {name} {'deleted' if deleted else 'as written'}"
        wait_for(lambda: admitted(name), ADMISSION_BOUND, what)
        if c.globalDefault and not deleted:
            wait_for(lambda: admitted(None), ADMISSION_BOUND, what + " as the global default")

    def update_class(self, c: ClassSpec, patch: bool = False) -> str | None:
        name = self.names.class_name(c.name)
        desired = v1_class(c, self.names)
        try:
            # A class the API server refused to create is not there to update: its NotFound is
            # the outcome, as the model's admission says (validate_class_update).
            if patch:
                body = self.kube.api.sanitize_for_serialization(desired)
                body["metadata"].pop("name", None)
                # The class as written, as update sends it: a description or annotation left out
                # is removed (null), not kept as a merge would keep it.
                body["description"] = c.description or None
                before = self.class_specs.get(c.name)
                gone = {k: None for k in (before.annotations if before else {}) if k not in c.annotations}
                if gone:
                    body["metadata"]["annotations"] = {**body["metadata"].get("annotations", {}), **gone}
                self.kube.scheduling.patch_priority_class(name, body)
            else:
                desired.metadata.resource_version = self.kube.scheduling.read_priority_class(name).metadata.resource_version
                self.kube.scheduling.replace_priority_class(name, desired)
        except ApiException as e:
            if e.status in REFUSED or e.status == 404:
                return api_message(e)
            raise
        self.class_specs[c.name] = c
        self.wait_admission_sees(c)
        return None

    def create_pod_group(self, g: PodGroupSpec) -> str | None:
        """Create it; the API server's refusal (its admission), as its message, else None."""
        group, version = pod_group_api(self.release)
        api, ns = client.CustomObjectsApi(self.kube.api), self.names.namespace
        try:
            write_once(lambda: api.create_namespaced_custom_object(group, version, ns, "podgroups",
                                                                   v1_pod_group(g, self.names, self.release)),
                       lambda: self.kube.exists(api.get_namespaced_custom_object, group, version, ns, "podgroups", g.name),
                       f"creating PodGroup {g.name}")
        except ApiException as e:
            if e.status in REFUSED:
                return api_message(e)
            raise
        self.group_specs.append(g)
        return None

    def create_pod(self, p: PodSpec, node_name: str | None = None, pin_to: str | None = None) -> str | None:
        self.pod_specs[p.name] = p
        body = v1_pod(p, self.names, self.image, node_name, pin_to)
        if p.group:
            # The client's V1PodSpec predates spec.schedulingGroup: the field goes in as JSON.
            body = self.kube.api.sanitize_for_serialization(body)
            body["spec"]["schedulingGroup"] = {"podGroupName": p.group}
        try:
            ns = self.names.namespace
            write_once(lambda: self.kube.core.create_namespaced_pod(ns, body),
                       lambda: self.kube.exists(self.kube.core.read_namespaced_pod, p.name, ns), f"creating pod {p.name}")
        except ApiException as e:
            if e.status in (400, 403, 422):
                return api_message(e)
            raise
        return None

    def pdb_specs(self) -> list[PdbSpec]:
        return self.s.pdbs + [s.createPdb for s in self.s.steps if s.createPdb]

    def create_pdb(self, b: PdbSpec) -> None:
        ns = self.names.namespace
        body = client.V1PodDisruptionBudget(metadata=client.V1ObjectMeta(name=b.name), spec=client.V1PodDisruptionBudgetSpec(
            min_available=b.minAvailable, selector=client.V1LabelSelector(match_labels=dict(b.selector))))
        write_once(lambda: self.kube.policy.create_namespaced_pod_disruption_budget(ns, body),
                   lambda: self.kube.exists(self.kube.policy.read_namespaced_pod_disruption_budget, b.name, ns),
                   f"creating PodDisruptionBudget {b.name}")

    def wait_pdbs_current(self) -> None:
        """The disruption controller must have counted the pods as they are now.

        Read directly, PDBs and pods together: the count is compared with the status the
        controller wrote, at one moment, and no verdict rests on it."""
        ns = self.names.namespace

        def current():
            for pdb in self.kube.policy.list_namespaced_pod_disruption_budget(ns).items:
                st = pdb.status
                if st is None or st.observed_generation != pdb.metadata.generation:
                    raise NotYet(f"PDB {pdb.metadata.name} not observed yet")
                spec = next(b for b in self.pdb_specs() if b.name == pdb.metadata.name)
                healthy = sum(1 for p in self.kube.pods(ns)
                              if not p.metadata.deletion_timestamp and p.status.phase == "Running"
                              and all((p.metadata.labels or {}).get(k) == v for k, v in spec.selector.items()))
                if st.current_healthy != healthy:
                    raise NotYet(f"PDB {pdb.metadata.name} counts {st.current_healthy} healthy, pods say {healthy}")
        wait_for(current, 30, "PodDisruptionBudget status to catch up")

    def perform(self, step: Step, cancel: threading.Event | None = None) -> None:
        if step.createPod is not None:
            self._refused(step.createPod.name, self.create_pod(step.createPod))
        elif step.deletePod is not None:
            # A pod the API server refused never existed: deleting it changes nothing.
            ns = self.names.namespace
            ignore_missing(lambda: write_once(
                lambda: self.kube.core.delete_namespaced_pod(step.deletePod, ns),
                lambda: self.deleting(step.deletePod), f"deleting pod {step.deletePod}"))
        elif step.createClass is not None:
            self._refused(step.createClass.name, self.create_class(step.createClass))
        elif step.updateClass is not None:
            self._refused(step.updateClass.name, self.update_class(step.updateClass))
        elif step.patchClass is not None:
            self._refused(step.patchClass.name, self.update_class(step.patchClass, patch=True))
        elif step.deleteClass is not None:
            name = self.names.class_name(step.deleteClass)
            ignore_missing(lambda: write_once(
                lambda: self.kube.scheduling.delete_priority_class(name),
                lambda: not self.kube.exists(self.kube.scheduling.read_priority_class, name), f"deleting PriorityClass {name}"))
            if step.deleteClass in self.class_specs:
                self.wait_admission_sees(self.class_specs[step.deleteClass], deleted=True)
        elif step.createPodGroup is not None:
            self._refused(step.createPodGroup.name, self.create_pod_group(step.createPodGroup))
        elif step.createPdb is not None:
            self.create_pdb(step.createPdb)
            self.wait_pdbs_current()
        elif step.wait is not None:
            # Time passing is the step itself: nothing to observe instead.
            lifecycle.pause(step.wait.at(self.flush).total_seconds(), cancel)
        elif step.resizePod is not None:
            self.resize_pod(step.resizePod)
        elif step.action in node_steps.NODE_ACTIONS:
            self.perform_node_step(step)

    def claim_node(self, n: NodeSpec) -> None:
        self.claimed[n.name] = self.nodes.claim(self.kube, self.names.prefix + n.name, n.slots, self.run_id,
                                                labels={SCENARIO_LABEL: self.names.namespace, **n.labels},
                                                taints=[t.model_dump() for t in n.taints], milli_cpu=n.milliCPU)
        self.names = self.names.with_nodes({n.name: self.claimed[n.name]})
        if n.unschedulable:
            self.nodes.cordon(self.kube, self.claimed[n.name], True)

    def perform_node_step(self, step: Step) -> None:
        name = node_steps.node_named(step)
        node = self.names.node_name(name)
        if step.addNode is not None:
            self.claim_node(step.addNode)
        elif step.deleteNode is not None:
            self.nodes.remove(self.kube, node)
            self.claimed.pop(name, None)
        elif step.labelNode is not None:
            self.nodes.label(self.kube, node, dict(step.labelNode.labels))
        elif step.taintNode is not None:
            t = step.taintNode
            self.nodes.set_taints(self.kube, node, [{k: v for k, v in (("key", t.key), ("value", t.value),
                                                                        ("effect", t.effect)) if v}], set())
        elif step.untaintNode is not None:
            self.nodes.set_taints(self.kube, node, [], {(step.untaintNode.key, step.untaintNode.effect)})
        elif step.cordon is not None or step.uncordon is not None:
            self.nodes.cordon(self.kube, node, step.cordon is not None)
        elif step.resizeNode is not None:
            self.nodes.resize(self.kube, node, step.resizeNode.slots)
        self.node_specs = node_steps.after(self.node_specs, step)

    def resize_pod(self, r: ResizePod) -> None:
        """Through the pods/resize subresource (a patch of the pod itself is refused for resources);
        a Guaranteed pod's limits move with its requests, so its QoS class stays."""
        spec = self.pod_specs[r.name]
        change = {k: v for k, v in (("cpu", f"{r.milliCPU}m" if r.milliCPU else None),
                                    ("memory", str(r.memoryRequest) if r.memoryRequest else None)) if v}
        resources = {"requests": change, **({"limits": change} if spec.qos == "Guaranteed" else {})}
        self.kube.core.patch_namespaced_pod_resize(r.name, self.names.namespace,
                                                   {"spec": {"containers": [{"name": "c", "resources": resources}]}})
        update = {"milliCPU": r.milliCPU or spec.milliCPU, "memoryRequest": r.memoryRequest or spec.memoryRequest}
        self.pod_specs[r.name] = spec.model_copy(update=update)

    def deleting(self, pod: str) -> bool:
        """A delete landed: the pod is gone, or terminating (its grace period runs)."""
        p = self.kube.pod_or_none(self.names.namespace, pod)
        return p is None or p.metadata.deletion_timestamp is not None

    def _refused(self, name: str, message: str | None) -> None:
        if message:
            self.rejected[name] = message

    def teardown_actions(self) -> list:
        """What removes the scenario's objects, in order; each is tried even when one before failed."""
        ns = self.names.namespace
        return [
            # Pods first, without grace: the scenario is over, and the sooner the
            # namespace is gone the sooner an `alone` scenario may start.
            lambda: self.kube.core.delete_collection_namespaced_pod(ns, grace_period_seconds=0),
            lambda: self.kube.delete_namespace(ns),
            *[(lambda c=c: self.kube.scheduling.delete_priority_class(c)) for c in self.created_classes],
        ]


def ignore_missing(call) -> None:
    try:
        call()
    except ApiException as e:
        if e.status != 404:
            raise


def api_message(e: ApiException) -> str:
    try:
        return json.loads(e.body).get("message", e.reason)
    except (TypeError, ValueError):
        return str(e.reason)
