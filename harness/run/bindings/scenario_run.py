"""Run one Karmada scenario on a real Karmada control plane and compare each expect with the model.

The split follows Jepsen's, with the pod runner's seams: ``BindingClient`` (bindings/act)
turns scenario actions into API calls and owns the names of what it creates,
``BindingHistory`` records what Karmada did, ``check`` holds the recorded bindings against
the model's prediction, and ``settle`` decides when an outcome is final. The file's own
``expect`` is a reading aid: the verdict is the model's (the unit tests keep the two in
agreement). A failing scenario's evidence is written by ``harness.run.artifacts.keep_bindings``.

Scenarios on one control plane run one at a time: they stop and start the one
karmada-scheduler, and they read member capacity as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reference.binding.predict import StepExpectation, predict

from harness.clusters.karmada import KarmadaPlane
from harness.formats.bindings import KarmadaScenario
from harness.host import lifecycle
from harness.run.bindings.act import BindingClient
from harness.run.bindings.check import StepVerdict, compare, differences
from harness.run.bindings.history import BindingHistory
from harness.run.settle import settle

HOLD = 3.0  # an expectation must hold this long: "absent" or "waiting" right after an action proves little

__all__ = ["BindingRun", "StepVerdict", "compare", "HOLD"]


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

    @staticmethod
    def _check(kc: BindingClient, history: BindingHistory, want: StepExpectation, apps: list[str],
               deadline: float) -> StepVerdict:
        # A match begun before the deadline still gets its whole hold (this path's rule from the start).
        diffs = settle(lambda: differences(history, want, apps, kc.observed_clusters), lambda d: not d,
                       deadline, HOLD, hold_past_deadline=True)
        return StepVerdict(want.index, tuple(diffs))
