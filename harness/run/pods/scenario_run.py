"""Run one scenario on a real cluster and compare each step with the model.

Before every step the runner reads the cluster (pods with their real
scheduled and start times, classes, PDB status) into a model world, applies
the step to that world, performs the step on the cluster, waits until the
cluster shows the model's settled outcome or the step's time runs out, and
records any difference. So the model is always asked about the state the
cluster really had, never about an idealised one.

Isolation: a namespace per scenario, its own nodes and prefixed class names;
every pod selects its scenario's nodes, so concurrent scenarios never meet.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from harness.errors import KitError
from harness.formats.pods import ClassSpec, PodSpec, Scenario, Step, to_class, to_node, to_pdb, to_pod
from harness.host import lifecycle
from harness.kube import SLOT, Kube, NotYet, condition, disrupted_by_preemption, wait_for
from harness.run.faults import Fault, preempted_again
from harness.run.pods.compare import compare
from harness.run.pods.expectation import Mismatch, apply_step, check_expect
from harness.run.pods.nodes import KwokNodes, NodeSource
from harness.run.pods.result import Result, StepRecord
from reference import scheduler as sched
from reference.objects import ClusterState
from reference.preemption import PLUGINS
from reference.release import PINNED
from reference.scheduler import PodView, World

SCENARIO_LABEL = "priority-conformance.x-k8s.io/scenario"
QUIET = 2.0  # seconds a settled outcome must hold before it is taken as final
DEFAULT_SETTLE = 30.0


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class ScenarioRun:
    def __init__(self, kubeconfig: Path, scenario: Scenario, build: str, run_id: str,
                 artifacts_dir: Path | None = None, scheduler_log: Path | None = None, label: str | None = None,
                 nodes: NodeSource | None = None, copy: int = 0, release: str = PINNED):
        """``build`` names the semantics the model predicts, of Kubernetes ``release``; ``label``
        the build actually running; ``copy`` tells apart copies of one scenario run side by side
        (--repeat)."""
        self.kube = Kube(kubeconfig)
        self.s = scenario
        self.build = build
        self.run_id = run_id
        self.label = label or build
        self.copy = copy
        self.release = release
        self.cancel = threading.Event()  # set by whoever no longer needs this run's verdict
        short = scenario.id[:40].rstrip("-") + (f"-{copy}" if copy else "")
        self.ns = f"{short}-{run_id}"
        self.prefix = f"{short}-{run_id}-"
        self.pod_specs: dict[str, PodSpec] = {p.name: p for p in scenario.pods}
        self.class_specs: dict[str, ClassSpec] = {c.name: c for c in scenario.priorityClasses}
        self.created_classes: set[str] = set()
        self.nodes = nodes or KwokNodes()
        self.node_map: dict[str, str] = {}  # scenario node -> cluster node
        self.node_back: dict[str, str] = {}
        self.rejected: dict[str, str] = {}
        self.preempted: set[str] = set()
        self.artifacts_dir = artifacts_dir
        self.scheduler_log = scheduler_log
        self.result = Result(scenario, self.label)

    # -- names ------------------------------------------------------------------

    def node_name(self, name: str) -> str:
        return self.node_map.get(name) or self.prefix + name

    def scenario_node(self, real: str) -> str:
        return self.node_back.get(real, real)

    def class_name(self, name: str) -> str:
        # system- names are the API server's own; scenarios only try to create them, and are refused.
        return self.prefix + name if name and not name.startswith("system-") else name

    def unprefix(self, name: str) -> str:
        return name[len(self.prefix):] if name.startswith(self.prefix) else name

    # -- running ----------------------------------------------------------------

    def run(self) -> Result:
        started = time.monotonic()
        try:
            self.setup()
            for i, step in enumerate(self.s.steps):
                self.result.steps.append(self.do_step(i, step))
        except lifecycle.StopRequested as e:
            self.result.error = str(e)
            self.result.cancelled = self.cancel.is_set() and not lifecycle.stopping()
        except KitError as e:
            self.result.error = str(e)
        except ApiException as e:
            self.result.error = f"API error {e.status}: {e.reason}: {(e.body or '')[:300]}"
        except Exception:
            self.result.error = "harness failure:\n" + traceback.format_exc()
        finally:
            if (not self.result.ok or self.result.known_faults) and not self.result.cancelled and not lifecycle.stopping():
                self.save_artifacts()
            self.teardown()
            self.kube.close()
            self.result.seconds = time.monotonic() - started
        return self.result

    def setup(self) -> None:
        self.kube.create_namespace(self.ns, self.run_id)
        for c in self.s.priorityClasses:
            self.create_class(c)
        for n in self.s.nodes:
            taints = [t.model_dump() for t in n.taints]
            real = self.nodes.claim(self.kube, self.prefix + n.name, n.slots, self.run_id,
                                    labels={SCENARIO_LABEL: self.ns, **n.labels}, taints=taints)
            self.node_map[n.name], self.node_back[real] = real, n.name
        for b in self.s.pdbs:
            self.create_pdb(b)
        self.place_initial_pods()

    def place_initial_pods(self) -> None:
        """Initial pods land where the scenario says, through the real scheduler (so they get PodScheduled).

        Each is pinned to its node by the node's hostname label. Changing nodes instead (a taint,
        a cordon) would be a node event, and every node event retries every parked pod in the
        cluster: with scenarios side by side, the kit's own placement kept waking other
        scenarios' preemptors, which provoked the scheduler's repeated-preemption race far more
        often than a cluster sees. bypassScheduler pods are bound directly.
        """
        last_start: dict[str, datetime] = {}
        for p in self.s.pods:
            target = self.node_name(p.node)
            if p.node in last_start:
                # The model places initial pods in order, each starting after the one before, and
                # victims on a node are ranked by start time among equal priorities. The API keeps
                # whole seconds, so two pods of one node started in the same second would tie, and
                # the scheduler's order among them would be its free choice: start a second later.
                lifecycle.pause((last_start[p.node] + timedelta(seconds=1) - utcnow()).total_seconds(), self.cancel)
            if p.bypassScheduler:
                self.create_pod(p, node_name=target)
            else:
                self.create_pod(p, pin_to=target)

            def running(name=p.name, target=target):
                pod = self.kube.core.read_namespaced_pod(name, self.ns)
                if pod.spec.node_name and pod.spec.node_name != target:
                    raise KitError(f"initial pod {name} landed on {pod.spec.node_name}, not {target}")
                if pod.status.phase != "Running":
                    raise NotYet(f"{name} is {pod.status.phase}")
                return pod

            pod = wait_for(running, 30, f"initial pod {p.name} to run on {p.node}")
            if pod.status.start_time is not None:
                last_start[p.node] = pod.status.start_time
        if self.s.pdbs:
            self.wait_pdbs_current()

    def teardown(self) -> None:
        for action in (
            # Pods first, without grace: the scenario is over, and the sooner the
            # namespace is gone the sooner an `alone` scenario may start.
            lambda: self.kube.core.delete_collection_namespaced_pod(self.ns, grace_period_seconds=0),
            lambda: self.kube.delete_namespace(self.ns),
            *[(lambda c=c: self.kube.scheduling.delete_priority_class(c)) for c in self.created_classes],
            *[(lambda n=n: self.nodes.release(self.kube, n)) for n in self.node_map.values()],
        ):
            try:
                action()
            except ApiException as e:
                if e.status != 404:
                    self.result.error = self.result.error or f"teardown failed: {e.reason}"
            except Exception as e:  # the cluster itself may be going away (a stopped run)
                self.result.error = self.result.error or f"teardown failed: {e}"

    # -- objects ------------------------------------------------------------------

    def v1_class(self, c: ClassSpec) -> client.V1PriorityClass:
        return client.V1PriorityClass(
            metadata=client.V1ObjectMeta(name=self.class_name(c.name), annotations=dict(c.annotations) or None),
            value=c.value, global_default=c.globalDefault, preemption_policy=c.preemptionPolicy,
            description=c.description or None)

    def create_class(self, c: ClassSpec) -> str | None:
        try:
            self.kube.scheduling.create_priority_class(self.v1_class(c))
        except ApiException as e:
            if e.status in (400, 403, 409, 422):
                return _api_message(e)
            raise
        self.created_classes.add(self.class_name(c.name))
        self.class_specs[c.name] = c
        return None

    def update_class(self, c: ClassSpec) -> str | None:
        name = self.class_name(c.name)
        current = self.kube.scheduling.read_priority_class(name)
        desired = self.v1_class(c)
        desired.metadata.resource_version = current.metadata.resource_version
        try:
            self.kube.scheduling.replace_priority_class(name, desired)
        except ApiException as e:
            if e.status in (400, 403, 409, 422):
                return _api_message(e)
            raise
        self.class_specs[c.name] = c
        return None

    def create_pdb(self, b) -> None:
        self.kube.policy.create_namespaced_pod_disruption_budget(self.ns, client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name=b.name),
            spec=client.V1PodDisruptionBudgetSpec(min_available=b.minAvailable,
                                                  selector=client.V1LabelSelector(match_labels=dict(b.selector)))))

    def wait_pdbs_current(self) -> None:
        """The disruption controller must have counted the pods as they are now."""
        def current():
            for pdb in self.kube.policy.list_namespaced_pod_disruption_budget(self.ns).items:
                st = pdb.status
                if st is None or st.observed_generation != pdb.metadata.generation:
                    raise NotYet(f"PDB {pdb.metadata.name} not observed yet")
                spec = next(b for b in self.s.pdbs + [s.createPdb for s in self.s.steps if s.createPdb]
                            if b.name == pdb.metadata.name)
                healthy = sum(1 for p in self.kube.pods(self.ns)
                              if not p.metadata.deletion_timestamp and p.status.phase == "Running"
                              and all((p.metadata.labels or {}).get(k) == v for k, v in spec.selector.items()))
                if st.current_healthy != healthy:
                    raise NotYet(f"PDB {pdb.metadata.name} counts {st.current_healthy} healthy, pods say {healthy}")
        wait_for(current, 30, "PodDisruptionBudget status to catch up")

    def v1_pod(self, p: PodSpec, node_name: str | None = None, pin_to: str | None = None) -> client.V1Pod:
        affinity = None
        terms = lambda ts: [client.V1PodAffinityTerm(  # noqa: E731
            label_selector=client.V1LabelSelector(match_labels=dict(t.labels)),
            topology_key={"hostname": "kubernetes.io/hostname", "zone": "topology.kubernetes.io/zone"}[t.topology])
            for t in ts]
        if p.podAffinity or p.podAntiAffinity:
            affinity = client.V1Affinity(
                pod_affinity=client.V1PodAffinity(required_during_scheduling_ignored_during_execution=terms(p.podAffinity))
                if p.podAffinity else None,
                pod_anti_affinity=client.V1PodAntiAffinity(
                    required_during_scheduling_ignored_during_execution=terms(p.podAntiAffinity))
                if p.podAntiAffinity else None)
        limits = {SLOT: str(p.slots)} if p.slots else None
        return client.V1Pod(
            metadata=client.V1ObjectMeta(name=p.name, labels=dict(p.labels) or None),
            spec=client.V1PodSpec(
                priority_class_name=self.class_name(p.priorityClassName) or None,
                priority=p.priority,
                preemption_policy=p.preemptionPolicy,
                termination_grace_period_seconds=p.grace,
                node_name=node_name,
                node_selector={SCENARIO_LABEL: self.ns, **p.nodeSelector,
                               **({"kubernetes.io/hostname": pin_to} if pin_to else {})},
                tolerations=[client.V1Toleration(key=t.key or None, operator=t.operator, value=t.value or None,
                                                 effect=t.effect or None) for t in p.tolerations] or None,
                affinity=affinity,
                containers=[client.V1Container(name="c", image=self.nodes.image,
                                               resources=client.V1ResourceRequirements(limits=limits))],
            ),
        )

    def create_pod(self, p: PodSpec, node_name: str | None = None, pin_to: str | None = None) -> str | None:
        self.pod_specs[p.name] = p
        try:
            self.kube.core.create_namespaced_pod(self.ns, self.v1_pod(p, node_name, pin_to))
        except ApiException as e:
            if e.status in (400, 403, 422):
                return _api_message(e)
            raise
        return None

    # -- observing ----------------------------------------------------------------

    def observe_world(self) -> World:
        """The cluster as the model sees it, with the real times."""
        classes = []
        for name in self.created_classes:
            try:
                pc = self.kube.scheduling.read_priority_class(name)
            except ApiException as e:
                if e.status == 404:
                    continue
                raise
            spec = self.class_specs.get(self.unprefix(name))
            if spec is not None:
                classes.append(to_class(spec.model_copy(update={
                    "value": pc.value, "globalDefault": bool(pc.global_default),
                    "preemptionPolicy": pc.preemption_policy or "PreemptLowerPriority",
                    "annotations": dict(pc.metadata.annotations or {})})))
        pods, parked = [], []
        for v in self.kube.pods(self.ns):
            spec = self.pod_specs.get(v.metadata.name)
            if spec is None:
                continue
            sched_cond = condition(v, "PodScheduled")
            scheduled_at = sched_cond.last_transition_time if sched_cond is not None and sched_cond.status == "True" else None
            pods.append(to_pod(
                spec, "default",
                priority_class_name=self.unprefix(v.spec.priority_class_name or ""),
                priority=v.spec.priority or 0,
                preemption_policy=v.spec.preemption_policy or "PreemptLowerPriority",
                node_name=self.scenario_node(v.spec.node_name or ""),
                nominated_node_name=self.scenario_node(v.status.nominated_node_name or ""),
                scheduled_at=scheduled_at,
                start_time=v.status.start_time,
                deletion_timestamp=v.metadata.deletion_timestamp,  # already includes the grace period
                disruption_target_by_preemption=disrupted_by_preemption(v),
                # A pod put back as unschedulable re-enters the queue then.
                queued_at=sched_cond.last_transition_time if sched_cond is not None and sched_cond.status == "False"
                else v.metadata.creation_timestamp,
            ))
            if not v.spec.node_name and sched_cond is not None and sched_cond.status == "False":
                parked.append((f"default/{v.metadata.name}", sched_cond.last_transition_time))
        pdbs = []
        for b in self.kube.policy.list_namespaced_pod_disruption_budget(self.ns).items:
            spec = next((x for x in self.s.pdbs + [s.createPdb for s in self.s.steps if s.createPdb]
                         if x.name == b.metadata.name), None)
            if spec is None:
                continue
            st = b.status
            pdbs.append(replace(to_pdb(spec, "default", st.disruptions_allowed if st else 0),
                                disrupted_pods=tuple((st.disrupted_pods or {}) if st else {})))
        state = ClusterState(tuple(classes), tuple(to_node(n) for n in self.s.nodes), tuple(pods), tuple(pdbs))
        return World(state, utcnow(), self.build, parked=tuple(parked), release=self.release,
                     preempted=frozenset(f"default/{n}" for n in self.preempted),
                     rejected=tuple(self.rejected.items()))

    def observe_view(self) -> tuple[dict[str, PodView], dict[str, int]]:
        self.preempted |= {e.involved_object.name for e in self.kube.preempted_events(self.ns)}
        out: dict[str, PodView] = {}
        priorities: dict[str, int] = {}
        for v in self.kube.pods(self.ns):
            if disrupted_by_preemption(v):
                self.preempted.add(v.metadata.name)
            phase = "terminating" if v.metadata.deletion_timestamp else ("running" if v.spec.node_name else "pending")
            out[v.metadata.name] = PodView(phase, self.scenario_node(v.spec.node_name or ""),
                                           self.scenario_node(v.status.nominated_node_name or ""),
                                           v.metadata.name in self.preempted)
            priorities[v.metadata.name] = v.spec.priority
        for name in self.preempted:
            out.setdefault(name, PodView("gone", preempted=True))
        for name in self.rejected:
            out.setdefault(name, PodView("rejected"))
        return out, priorities

    # -- one step -------------------------------------------------------------------

    def do_step(self, i: int, step: Step) -> StepRecord:
        before = self.observe_world()
        # Where the scheduler may choose, each choice is a world of its own.
        worlds = sched.branches(before, lambda w: apply_step(w, step))
        self.perform(step)
        predicted_world = worlds[0]
        deadline = step.settle.total_seconds() + 5 if step.settle else max(self.settle_bound(w) for w in worlds)
        must_attempt = {step.createPod.name} if step.createPod and step.createPod.name not in self.rejected else set()

        def best_match() -> tuple[World, list[Mismatch]]:
            scored = [(w, compare(sched.view(w), observed, dict(w.allowed_nodes))) for w in worlds]
            return min(scored, key=lambda wm: len(wm[1]))

        end = time.monotonic() + deadline
        quiet_since: float | None = None
        while True:
            observed, priorities = self.observe_view()
            predicted_world, mismatches = best_match()
            attempted = all(self.was_attempted(n) for n in must_attempt)
            if not mismatches and attempted:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= QUIET:
                    break
            else:
                quiet_since = None
            if time.monotonic() >= end:
                break
            lifecycle.pause(0.25, self.cancel)
        reasons = list(predicted_world.log[len(before.log):])
        for pr in predicted_world.predictions[len(before.predictions):]:
            for v in pr.per_node:
                extra = "; ".join(f"{k} {why}" for k, why in v.exempted)
                reasons.append(f"  {pr.pod} node {v.node}: {v.reason}" + (f"; exempted: {extra}" if extra else ""))
        if len(worlds) > 1:
            reasons.append(f"  ({len(worlds)} outcomes allowed by ties; the closest is shown)")
        expect_mismatches = (check_expect(step.expect, observed, self.rejected, priorities, self.messages())
                             if step.expect else [])
        return StepRecord(i, step.action or "expect", sched.view(predicted_world), observed, mismatches,
                          expect_mismatches, reasons, self.faults())

    def messages(self) -> dict[str, str]:
        """Each pending pod's scheduling failure message (its PodScheduled=False condition)."""
        out = {}
        for v in self.kube.pods(self.ns):
            c = condition(v, "PodScheduled")
            if not v.spec.node_name and c is not None and c.status == "False" and c.message:
                out[v.metadata.name] = c.message
        return out

    def faults(self) -> list[Fault]:
        """What no specification allows, named, with the events that show it."""
        return preempted_again(self.kube.preempted_events(self.ns), self.release,
                               self.label if self.label in PLUGINS else self.build)

    def settle_bound(self, world: World) -> float:
        graces = [p.termination_grace_seconds for p in world.state.pods if p.terminating]
        return DEFAULT_SETTLE + max(graces + [0]) * 2

    def was_attempted(self, name: str) -> bool:
        pod = self.kube.pod_or_none(self.ns, name)
        if pod is None:
            return True
        c = condition(pod, "PodScheduled")
        return c is not None  # True (bound) or False (tried and failed)

    def perform(self, step: Step) -> None:
        if step.createPod is not None:
            msg = self.create_pod(step.createPod)
            if msg:
                self.rejected[step.createPod.name] = msg
        elif step.deletePod is not None:
            # A pod the API server refused never existed: deleting it changes nothing.
            _ignore_missing(lambda: self.kube.core.delete_namespaced_pod(step.deletePod, self.ns))
        elif step.createClass is not None:
            msg = self.create_class(step.createClass)
            if msg:
                self.rejected[step.createClass.name] = msg
        elif step.updateClass is not None:
            msg = self.update_class(step.updateClass)
            if msg:
                self.rejected[step.updateClass.name] = msg
        elif step.deleteClass is not None:
            _ignore_missing(lambda: self.kube.scheduling.delete_priority_class(self.class_name(step.deleteClass)))
        elif step.createPdb is not None:
            self.create_pdb(step.createPdb)
            self.wait_pdbs_current()
        elif step.wait is not None:
            # Time passing is the step itself: nothing to observe instead.
            lifecycle.pause(step.wait.total_seconds(), self.cancel)

    # -- artifacts ------------------------------------------------------------------

    def save_artifacts(self) -> None:
        if self.artifacts_dir is None:
            return
        d = self.artifacts_dir / self.label / (self.s.id + (f"-copy{self.copy}" if self.copy else ""))
        d.mkdir(parents=True, exist_ok=True)
        try:
            pods = [self.kube.api.sanitize_for_serialization(p) for p in self.kube.pods(self.ns)]
            (d / "pods.json").write_text(json.dumps(pods, indent=1, default=str))
            events = [self.kube.api.sanitize_for_serialization(e) for e in self.kube.all_events(self.ns)]
            (d / "events.json").write_text(json.dumps(events, indent=1, default=str))
        except Exception as e:  # the cluster may be what failed
            (d / "observe-error.txt").write_text(str(e))
        if self.scheduler_log is not None and self.scheduler_log.exists():
            lines = self.scheduler_log.read_text(errors="replace").splitlines()
            keep = [ln for ln in lines if self.ns in ln or self.prefix in ln]
            (d / "kube-scheduler.log").write_text("\n".join(keep[-2000:]))
        (d / "report.txt").write_text(self.result.report())
        self.result.artifacts = d


def _ignore_missing(call) -> None:
    try:
        call()
    except ApiException as e:
        if e.status != 404:
            raise


def _api_message(e: ApiException) -> str:
    try:
        return json.loads(e.body).get("message", e.reason)
    except (TypeError, ValueError):
        return str(e.reason)


__all__ = ["ScenarioRun"]
