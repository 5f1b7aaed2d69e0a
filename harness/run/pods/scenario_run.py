"""Run one pod scenario on a real cluster and compare each step with the model.

Before every step the runner reads the cluster (pods with their real scheduled and
start times, classes, PDB status) into a model world, applies the step to that world,
performs the step on the cluster, waits until the cluster shows the model's settled
outcome or the step's time runs out, and records any difference. So the model is always
asked about the state the cluster really had, never about an idealised one.

The parts, along Jepsen's seams (the interface every kind of scenario run has:
``harness.run.scenario``): ``Names`` (isolation: a namespace per scenario, its own nodes and
prefixed class names), ``place`` (nodes and initial pods), ``PodClient`` (the actions),
``PodHistory`` (the record: a watch on the namespace's pods and events, from before the first
action to teardown), ``check`` (the model's world and views read from that history, and the
comparison), ``settle`` (when an outcome is final) and ``archive`` (what a run leaves behind).
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from kubernetes.client.exceptions import ApiException

from harness.clusters import memory_pressure, pid_pressure
from harness.errors import KitError
from harness.formats.pods import FAULT_ACTIONS, Scenario, Step
from harness.host import lifecycle
from harness.kube import Kube
from harness.run.names import Names
from harness.run.pods import check, invariants, points
from harness.run.pods.act import PodClient
from harness.run.pods.archive import Archive, keep_failure, keep_timeline
from harness.run.pods.expectation import (apply_step, check_expect, due_first, fault_variants, later_states,
                                          modelled_seconds, retried_after_failure, trajectory)
from harness.run.pods.history import PodHistory
from harness.run.pods.nodes import KwokNodes, NodeSource
from harness.run.pods.place import claim_nodes, place_initial_pods
from harness.run.pods.result import Result, StepRecord
from harness.run.pods.timings import preemptions
from harness.run.scenario import ScenarioRun
from harness.run.settle import settle
from reference import scheduler as sched
from reference.eviction import amount
from reference.preemption import PLUGINS
from reference.nodes import NodeNotEmpty
from reference.resize import NotRunning
from reference.queue import BACKOFF_MAX, UNSCHEDULABLE_MAX_STAY
from reference.release import DEFAULT_RELEASE
from reference.scheduler import World

QUIET = 2.0  # seconds a settled outcome must hold before it is taken as final
PRESSURE_QUIET = 15.0
DEFAULT_SETTLE = 30.0
LAG = 5.0  # seconds a step with ``settle:`` gives a lagging cluster past that moment
# What a pod tried again after a failure may wait past the event that woke it: its backoff, at most
# podMaxBackoffSeconds, and the 1 s backoffQ ordering window its expiry is aligned to.
RETRY_LAG = BACKOFF_MAX.total_seconds() + 1.0
# After a disconnect, a refused watch is retried with client-go's reflector backoff (0.8 s doubling
# to 30 s, each with up to as much again of jitter: tools/cache/reflector.go), so up to 60 s apart:
# that much more before the step's outcome must show.
RECONNECT = 60.0


@dataclass(frozen=True)
class Acted:
    """What a step's check needs of the moment it acted."""

    started: float  # time.time() when the step began
    before: World  # the cluster as the model read it just before the action
    worlds: list[World]  # the model's outcomes of the step: one per choice the scheduler may make
    quiet: float  # how long a settled outcome must hold
    at: float  # time.monotonic() when the action ended
    at_wall: float  # the same moment, time.time()
    fault: str = ""  # what a during: fault did


class PodRun(ScenarioRun):
    def __init__(self, kubeconfig: Path, scenario: Scenario, build: str, run_id: str,
                 artifacts_dir: Path | None = None, scheduler_log: Path | None = None, label: str | None = None,
                 nodes: NodeSource | None = None, copy: int = 0, release: str = DEFAULT_RELEASE,
                 cluster_release: str = "",
                 timelines: bool = False, gates: tuple = (), flush: timedelta = UNSCHEDULABLE_MAX_STAY):
        """``build`` names the semantics the model predicts, of Kubernetes ``release``; ``label``
        the build actually running; ``copy`` tells apart copies of one scenario run side by side
        (--repeat); ``timelines`` keeps a passing run's timeline too (a failing one's always is)."""
        self.kube = Kube(kubeconfig)
        self.s = scenario
        self.build, self.run_id, self.release, self.copy = build, run_id, release, copy
        # The feature gates its cluster runs with (harness.gates.Settings.gates), the run's and its own.
        self.gates = tuple(gates)
        self.label = label or build
        self.flush = flush  # the scheduler's flush interval, as it printed it (harness.flush)
        # The cluster whose scheduler this run may restart (a fault step): set only on a cluster of
        # its own (harness/run/pods/batch.py), never on one shared with other scenarios.
        self.scheduler = None
        self.restarts: list[datetime] = []  # when the kit restarted it: a new run may preempt anew
        self.stayed: list[invariants.Violation] = []  # a leader that went on after its lease was taken
        self.cancel = threading.Event()  # set by whoever no longer needs this run's verdict
        self.nodes = nodes or KwokNodes()
        self.client = PodClient(self.kube, scenario, Names.for_pods(scenario.id, run_id, copy), self.nodes.image,
                                # The API versions are the cluster's, whatever release the model predicts.
                                cluster_release or release, self.nodes, run_id, flush)
        # The plugins that rejected each pod the model left parked at the end of the last step:
        # what wakes a parked pod is decided by the attempt that parked it, not by the state now.
        self.rejectors_then: dict[str, frozenset[str]] = {}
        self.world_then: World | None = None  # the model's world at the last step's end (check.woken_by_removals)
        self.record: PodHistory | None = None
        self.evidence = Archive(artifacts_dir, self.label, scenario.id, release, copy, scheduler_log)
        self.timelines = timelines
        self.result = Result(scenario, self.label)

    @property
    def names(self) -> Names:
        return self.client.names

    def run(self) -> Result:
        started = time.monotonic()
        try:
            self.setup()
            self.drive(self.s.steps)
        except lifecycle.StopRequested as e:
            self.result.error = str(e)
            self.result.cancelled = self.cancel.is_set() and not lifecycle.stopping()
        except KitError as e:
            self.result.error = str(e)
            self.result.error_logs = e.logs
        except ApiException as e:
            self.result.error = f"API error {e.status}: {e.reason}: {(e.body or '')[:300]}"
        except Exception:
            self.result.error = "harness failure:\n" + traceback.format_exc()
        finally:
            self.check_history()
            self.record_timings()
            self.archive()
            self.teardown()
            self.kube.close()
            self.result.seconds = time.monotonic() - started
        return self.result

    def archive(self) -> None:
        """A failure's evidence (a known fault's too), or the timeline alone with --timelines; nothing
        for a run stopped before its verdict."""
        if self.result.cancelled or lifecycle.stopping():
            return
        if not self.result.ok or self.result.known_faults:
            keep_failure(self.evidence, self.result, self.record, self.kube, self.names)
        elif self.timelines:
            keep_timeline(self.evidence, self.result, self.record)

    def setup(self) -> None:
        if self.s.needs_standby:
            if self.scheduler is None:
                raise KitError(f"{self.s.id}: a failover needs two schedulers the kit runs itself, on a "
                               "cluster of the scenario's own")
            self.scheduler.arm_failover()
        if self.s.needs_link:
            if self.scheduler is None:
                raise KitError(f"{self.s.id}: cutting the scheduler's connection needs a scheduler the kit runs "
                               "itself, on a cluster of the scenario's own")
            self.scheduler.arm_link()
        self.kube.create_namespace(self.names.namespace, self.run_id)
        # Recorded from before the first action: every version the scenario's pods go through.
        self.record = PodHistory(self.kube, self.names.namespace)
        for c in self.s.priorityClasses:
            self.client.create_class(c)
        for i, g in enumerate(self.s.podGroups):
            # The model admitted each when the file was checked: a refusal here is the cluster's
            # difference, not a step's outcome.
            if refused := self.client.create_pod_group(g):
                raise KitError(f"{self.s.id}: podGroups[{i}]: the API server refused {g.name}: {refused}")
        claim_nodes(self.s, self.client)
        for b in self.s.pdbs:
            self.client.create_pdb(b)
        place_initial_pods(self.s, self.client, self.record, self.cancel)

    def teardown(self) -> None:
        if self.record is not None:
            self.record.close()
        for action in (*self.client.teardown_actions(),
                       *[(lambda n=n: self.nodes.release(self.kube, n)) for n in self.client.claimed.values()]):
            try:
                action()
            except ApiException as e:
                if e.status != 404:
                    self.result.error = self.result.error or f"teardown failed: {e.reason}"
            except Exception as e:  # the cluster itself may be going away (a stopped run)
                self.result.error = self.result.error or f"teardown failed: {e}"

    def act(self, i: int, step: Step) -> Acted:
        """Read the cluster into the model, predict the step from there, and perform it."""
        assert self.record is not None
        started = time.time()
        before = check.woken_by_removals(
            check.observe_world(self.record, self.client, self.s, self.build, self.release, self.gates,
                                self.rejectors_then, self.flush), self.world_then)
        # Where the scheduler may choose, each choice is a world of its own.
        try:
            # A fault between a preemption's writes may find some of them undone: each is a world too.
            partials = fault_variants(before, step)
            worlds = [w for pt in partials for w in sched.branches(before, lambda w, pt=pt: apply_step(w, step, partial=pt))]
            # The flush runs every 30 s: a pod due for it is retried any time in that period.
            late = sched.branches(replace(before, flush_late=True), lambda w: apply_step(w, step))
            seen = [sched.view(x) for x in worlds]
            worlds += [w for w in late if sched.view(w) not in seen]
        except NodeNotEmpty as e:
            raise KitError(f"{self.s.id}: steps[{i}].deleteNode: {e}") from None
        except NotRunning as e:
            raise KitError(f"{self.s.id}: steps[{i}].resizePod.name: {e}") from None
        quiet = QUIET
        fault_note = ""
        if step.pressure is not None:
            self.starve(i, step, before, worlds[0])
            # One more pass of the kubelet's (10 s) and its clean-up must find nothing more to evict.
            quiet = PRESSURE_QUIET
        elif step.action in FAULT_ACTIONS:
            fault_note = self.inject(i, step.action, step)
        else:
            since, began = len(self.record.versions), time.time()
            self.client.perform(step, self.cancel)
            done, done_wall = time.monotonic(), time.time()
            if step.during is not None:
                fault_note, injected = self.inject_during(i, step, since, began, settle_bound(before, worlds[0]))
                # The step's clock runs from its action's end, as the model's does, moved on by what
                # the model makes of the fault (a pause's length); a look due before the fault is
                # done waits for it. Counted from the fault's end, a restart that took 7 s on a
                # loaded machine put a look meant for 8 s after the action past a 15 s grace period.
                late = modelled_seconds(before, step.during) if injected else 0.0
                return self._acted(started, before, worlds, quiet, done + late, done_wall + late, step, fault_note)
        at, at_wall = time.monotonic(), time.time()
        return self._acted(started, before, worlds, quiet, at, at_wall, step, fault_note)

    @staticmethod
    def _acted(started: float, before: World, worlds: list[World], quiet: float, at: float, at_wall: float,
               step: Step, fault_note: str) -> Acted:
        if step.pressure is None:
            # A terminating pod due about now may leave before the scheduler first tries the step's pods.
            worlds = worlds + due_first(before, step, datetime.fromtimestamp(at_wall, timezone.utc))
        return Acted(started, before, worlds, quiet, at, at_wall, fault_note)

    def inject(self, i: int, where: str, fault) -> str:
        """A fault (a fault step's, or a during: fault's: both carry the fault fields); what it did,
        for the step's record."""
        if self.scheduler is None:
            raise KitError(f"{self.s.id}: steps[{i}].{where}: the scheduler is shared with other "
                           "scenarios here; a fault runs only on a cluster of its own")
        began = time.monotonic()
        if fault.restartScheduler is not None:
            self.restarts.append(datetime.now(timezone.utc))
            self.scheduler.restart_scheduler(graceful=fault.restartScheduler == "graceful")
        elif fault.failover == "takeLease":
            self.restarts.append(datetime.now(timezone.utc))
            note, stayed = self.scheduler.take_lease()
            if stayed:
                # A difference from the spec (the leader exits on losing its lease), never a named fault.
                self.stayed.append(invariants.Violation("leader-stops-without-its-lease", f"steps[{i}]: {note}"))
            return f"{where}: {note}"
        elif fault.failover is not None:
            self.restarts.append(datetime.now(timezone.utc))
            return f"{where}: " + self.scheduler.fail_over()
        elif fault.disconnectScheduler is not None:
            return f"{where}: " + self.scheduler.disconnect_scheduler(fault.disconnectScheduler.total_seconds())
        elif fault.restartApiserver is not None:
            assert self.record is not None
            with self.record.outage():
                self.scheduler.restart_apiserver(graceful=fault.restartApiserver == "graceful")
        else:
            self.scheduler.pause_scheduler(fault.pauseScheduler.total_seconds())
        return f"{where}: done in {time.monotonic() - began:.1f} s"

    def inject_during(self, i: int, step: Step, since: int, began: float, bound: float) -> tuple[str, bool]:
        """Wait for the during: fault's point in what the action started and inject the fault
        there; what happened, for the step's record, and whether it was injected. A point that never comes injects nothing:
        the model says whether it should have come, and the step's comparison shows it."""
        assert self.record is not None and step.during is not None
        fault = step.during
        seen = points.wait_for(self.record, fault.at, step.createPod.name if step.createPod else None, since,
                               bound, self.cancel)
        if seen is None:
            return f"{fault.action} at {fault.at}: the point did not come within {bound:.0f} s; nothing injected", False
        what = self.inject(i, f"during.{fault.action}", fault)
        return (f"{fault.action} {getattr(fault, fault.action)} at {fault.at}: "
                f"{seen.name} #{seen.seq}, {seen.seen_at - began:.2f} s after the action began; {what}"), True

    def check(self, i: int, step: Step, acted: Acted) -> StepRecord:
        """Wait until the record shows one of the model's outcomes (held quiet) or the step's time
        is up, and hold what it shows against the model and the step's expect."""
        assert self.record is not None
        before, worlds, quiet = acted.before, acted.worlds, acted.quiet
        if step.settle:
            retried = any(retried_after_failure(before, w) for w in worlds)
            look_from, deadline = settle_window(step.settle.at(self.flush).total_seconds(), quiet, retried)
            # The model's course on past its moment, up to the look's end: kwok's ends come on time.
            worlds = worlds + later_states(worlds, datetime.fromtimestamp(acted.at_wall + look_from + deadline,
                                                                          timezone.utc))
            lifecycle.pause(max(0.0, look_from - (time.monotonic() - acted.at)), self.cancel)
        else:
            deadline = max(settle_bound(before, w) for w in worlds)
            if step.disconnect is not None:
                deadline += RECONNECT  # its watches are retried up to that far apart
        rejected = self.client.rejected
        must_attempt = {step.createPod.name} if step.createPod and step.createPod.name not in rejected else set()
        last = settle(lambda: check.look(self.record, self.names, rejected, worlds, must_attempt),
                      lambda seen: seen.settled, deadline, quiet, self.cancel)
        waited = time.monotonic() - acted.at
        predicted_at = predicted_moment(before, last.world)
        short = (not last.settled and not step.settle and waited < predicted_at)
        expect_mismatches = (check_expect(step.expect, last.observed, rejected, last.priorities,
                                          check.messages(self.record)) if step.expect else [])
        self.rejectors_then = dict(last.world.rejectors)
        self.world_then = last.world
        # The closest branch's course, for the timeline: the model's states at the moments it predicts.
        course = trajectory(replace(before, choices=last.world.choices), step)
        return StepRecord(i, step.action or "expect", sched.view(last.world), last.observed, last.mismatches,
                          expect_mismatches, check.reasons(before, last.world, len(worlds)), self.faults(),
                          acted.started, time.time(), waited=waited, predicted_at=predicted_at, out_of_time=short,
                          acted_at=acted.at_wall, course=course, fault=acted.fault)

    def starve(self, i: int, step: Step, before: World, predicted: World) -> None:
        """Leave the node just short enough of the resource that the pods the model ranks first must go:
        the shortfall is what the first victims free, less half the last one's (so a kubelet that
        ranks otherwise evicts other pods, or more of them)."""
        assert self.record is not None and step.pressure is not None
        resource = step.pressure.resource
        field = {"memory": "memory", "pids": "processes"}.get(resource, "writes")
        victims = [key.split("/", 1)[1] for key, _ in predicted.evicted[len(before.evicted):]]
        sizes = [getattr(self.client.pod_specs[v], field) for v in victims]
        if not sizes or not sizes[-1]:
            raise KitError(f"{self.s.id}: steps[{i}].pressure: the model's victim "
                           f"{victims[-1] if victims else '(none)'} holds no {resource}, so evicting it would not "
                           f"relieve the node: give the pods {field}")
        # Where the kubelet counts the host's own use (memory, tasks), half the last victim's share
        # is the margin for it moving.
        margin = {"memory": memory_pressure.MIN_MARGIN, "pids": pid_pressure.MIN_MARGIN}.get(resource, 0)
        if sizes[-1] // 2 < margin:
            raise KitError(f"{self.s.id}: steps[{i}].pressure: the model's last victim {victims[-1]} holds "
                           f"{amount(sizes[-1], resource)} of {resource}; {resource} pressure needs at least "
                           f"{amount(2 * margin, resource)} (half of it is the margin for the host's own use moving)")
        node = self.names.node_name(step.pressure.node)
        held = {v.metadata.name: getattr(self.client.pod_specs[v.metadata.name], field) for v in self.record.pods()
                if v.spec.node_name == node and v.status.phase == "Running" and v.metadata.name in self.client.pod_specs}
        self.nodes.starve(self.kube, node, self.names.namespace, resource, held, sum(sizes[:-1]) + sizes[-1] // 2)

    def check_history(self) -> None:
        """The rules every recorded version must keep (run.pods.invariants), over the whole run."""
        if self.record is None or self.result.cancelled:
            return
        members = [p for p in self.s.pods] + [st.createPod for st in self.s.steps if st.createPod]
        h = replace(self.record.history(), grouped=frozenset(p.name for p in members if p.group),
                    deleted=frozenset(st.deletePod for st in self.s.steps if st.deletePod))
        # Reads what was recorded (never raises for a broken watch), and what the kit saw of its processes.
        self.result.violations = self.stayed + invariants.check(h)

    def record_timings(self) -> None:
        """Each preemption's phases, from the history, for the run's timings file."""
        if self.record is None or self.result.cancelled:
            return
        try:
            self.result.timings = [t.record(scenario=self.s.id, build=self.label, release=self.release, copy=self.copy)
                                   for t in preemptions(self.record)]
        except Exception as e:  # a figure is never worth a verdict
            self.result.timings = [{"scenario": self.s.id, "build": self.label, "error": str(e)}]

    def faults(self):
        assert self.record is not None
        return check.faults(self.record, self.release, self.label if self.label in PLUGINS else self.build,
                            tuple(self.restarts))


def predicted_moment(before: World, predicted: World) -> float:
    """Seconds after the action at which the model puts the step's outcome."""
    return max(0.0, (predicted.now - before.now).total_seconds())


def settle_window(at: float, quiet: float, retried: bool = False) -> tuple[float, float]:
    """For a step with ``settle: at``: when after the action to start looking, and for how long.

    Its outcome is the cluster's state ``at`` seconds after the action (scenarios/README.md): a
    match must hold over the quiet time that ends there, so a look that began at once could not
    pass a scheduler that acts too early; a cluster that lags behind gets LAG more, and RETRY_LAG
    more when the outcome rests on a pod tried again after a failure (``retried``,
    expectation.retried_after_failure), whose backoff the model does not know."""
    look_from = max(0.0, at - quiet)
    return look_from, at - look_from + LAG + (RETRY_LAG if retried else 0.0)


def settle_bound(before: World, predicted: World) -> float:
    """How long a step may take to show the model's outcome: the moment the model predicts it
    (the last victim's grace ends, say) plus DEFAULT_SETTLE for the scheduler's own pace, plus,
    for each eviction the step predicts, a kubelet pass (10 s) and its 30 s clean-up."""
    return DEFAULT_SETTLE + predicted_moment(before, predicted) + 40 * (len(predicted.evicted) - len(before.evicted))


__all__ = ["Acted", "PodRun", "settle_bound", "settle_window"]
