"""Run one Karmada scenario on a real Karmada control plane and compare each expect with the model.

The split follows Jepsen's, with the pod runner's seams (the interface every kind of scenario
run has: ``harness.run.scenario``): ``BindingClient`` (bindings/act) turns scenario actions into
API calls and owns the names of what it creates, ``BindingHistory`` records what Karmada did,
``check`` holds the recorded bindings against the model's prediction, ``settle`` decides when
an outcome is final, and a failing run's evidence goes where a pod scenario's does
(``harness.run.artifacts``). The file's own ``expect`` is a reading aid: the verdict is the
model's (the unit tests keep the two in agreement).

Scenarios on one control plane run one at a time: they stop and start the one
karmada-scheduler, and they read member capacity as a whole.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from reference.binding.predict import StepExpectation, predict

from harness.clusters.karmada import KarmadaPlane
from harness.errors import KitError
from harness.formats.bindings import KarmadaScenario
from harness.host import lifecycle
from harness.run import artifacts
from harness.run.bindings.act import BindingClient
from harness.run.bindings.check import StepVerdict, compare, differences
from harness.run.bindings.history import BindingHistory
from harness.run.bindings.result import BindingResult
from harness.run.scenario import ScenarioRun
from harness.run.settle import settle

HOLD = 3.0  # an expectation must hold this long: "absent" or "waiting" right after an action proves little

__all__ = ["BindingRun", "StepVerdict", "compare", "HOLD"]


@dataclass
class BindingRun(ScenarioRun):
    """One scenario, start to end: set up, drive the steps, check each expect, clean up; a run
    that failed, or that the kit could not finish, keeps its evidence under ``artifacts_dir``."""

    plane: KarmadaPlane
    scenario: KarmadaScenario
    run_id: str
    artifacts_dir: Path | None = None
    result: BindingResult = field(init=False)
    record: BindingHistory | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.result = BindingResult(self.scenario)

    def run(self) -> BindingResult:
        """Its result; a KitError is the result's error, anything else is the kit's own failure and raised."""
        started = time.monotonic()
        self.marks = self.plane.log_marks()  # the components' lines from here on are this scenario's
        try:
            self._run()
        except KitError as e:
            self.result.error = str(e)
        finally:
            self.result.seconds = time.monotonic() - started
        if not self.result.ok:
            self.archive()
        return self.result

    def _run(self) -> None:
        self.predictions = {p.index: p for p in predict(self.scenario)}
        gates = self.scenario.gates.model_dump()
        if not self.plane.scheduler_running() or self.plane.scheduler_gates != self.plane.gates_for(gates):
            self.plane.start_scheduler(gates)
        self.client = BindingClient(self.plane, self.scenario, self.run_id)
        try:
            self.client.set_up()
            self.record = BindingHistory(self.client.kube.api, self.client.namespace)
            self.drive(self.scenario.steps)
        finally:
            if self.record is not None:
                self.record.close()
            try:
                if not self.plane.scheduler_running() or self.plane.scheduler_gates != self.plane.gates_for({}):
                    self.plane.start_scheduler({})
            finally:
                self.client.tear_down()

    def act(self, i: int, step) -> None:
        lifecycle.check()
        kc = self.client
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

    def check(self, i: int, step, acted) -> StepVerdict | None:
        want: StepExpectation | None = self.predictions.get(i)
        if want is None:
            return None
        assert self.record is not None
        record, apps = self.record, list(step.expect.order)
        # A match begun before the deadline still gets its whole hold (this path's rule from the start).
        diffs = settle(lambda: differences(record, want, apps, self.client.observed_clusters), lambda d: not d,
                       step.settle_time.total_seconds(), HOLD, hold_past_deadline=True)
        return StepVerdict(want.index, tuple(diffs))

    def archive(self) -> None:
        """The report, every binding version seen, and the lines each Karmada component logged
        while the scenario ran (its tear-down included)."""
        if self.artifacts_dir is None:
            return
        history = self.record.lines() if self.record is not None else []
        self.result.artifacts = artifacts.keep_bindings(self.artifacts_dir, self.scenario.id, [self.result.report()],
                                                        history, self.plane.logs_since(self.marks))
