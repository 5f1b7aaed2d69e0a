"""The Karmada scenario format (scenarios/karmada/*.yaml): one binding-priority behaviour per file.

scenarios/karmada/README.md documents the format for people; this module is
its schema and its bridge to the model (reference.binding.predict). Errors are
``ScenarioError``s naming the file, the place in it and what was expected, as
for the pod scenarios: both read files with harness.formats.common.
"""

from __future__ import annotations

from harness import SCENARIOS

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator, model_validator

from reference.admission import HIGHEST_USER_DEFINABLE, SYSTEM_PREFIX
from reference.binding.objects import ABSENT, SCHEDULED, STATES, App, KarmadaClass, Member
from reference.binding.plan import CreateClass, Delete, DeleteClass, Expect, Plan, Propagate, Scale, SetScheduler, Step, Wait
from reference.binding.predict import UNSET, StepExpectation, Unset

from harness.formats import common
from harness.formats.common import KARMADA, Duration, Name, ScenarioId, Strict, dupes, field_path

DEFAULT_SETTLE = timedelta(seconds=30)  # how long the runner waits for an expect without settle
# A binding parked as unschedulable goes back to the queue after 5 minutes in it (at the next
# 30 s flush); the model leaves that flush out, so a scenario must be over well before.
LONGEST = timedelta(minutes=4)
ACTIONS = ("createClass", "deleteClass", "propagate", "scale", "delete", "scheduler", "wait")

Replicas = Annotated[int, Field(ge=1, le=100)]
Millicores = Annotated[int, Field(ge=1, le=1_000_000)]
Assignment = dict[Name, Replicas]  # member -> replicas


class Gates(Strict):
    """karmada-scheduler's feature gates (the controller-manager always runs with PriorityBasedScheduling on)."""

    PriorityBasedScheduling: bool = True


class MemberSpec(Strict):
    name: Name
    cpu: Millicores  # allocatable, summed over the member's nodes


class ClassSpec(Strict):
    name: Name
    value: int = Field(ge=-(2**31), le=HIGHEST_USER_DEFINABLE)

    @field_validator("name")
    @classmethod
    def _not_system(cls, v: str) -> str:
        if v.startswith(SYSTEM_PREFIX):
            raise ValueError(f"names beginning {SYSTEM_PREFIX!r} are reserved for system classes")
        return v


class PropagateSpec(Strict):
    name: Name
    replicas: Replicas
    cpu: Millicores  # per replica
    class_name: Name | None = Field(default=None, alias="class")  # spec.schedulePriority.priorityClassName


class ScaleSpec(Strict):
    name: Name
    replicas: Replicas


class BindingExpect(Strict):
    state: Literal[STATES]  # type: ignore[valid-type]
    priority: int | None = None  # null: the field is absent; not given: not checked
    clusters: Union[Assignment, list[Assignment]] = {}  # not given: not checked

    @model_validator(mode="after")
    def _consistent(self) -> BindingExpect:
        given = self.model_fields_set
        if self.state == ABSENT and given & {"priority", "clusters"}:
            raise ValueError("an absent binding has no priority or clusters to check")
        if "clusters" in given:
            options = self.clusters if isinstance(self.clusters, list) else [self.clusters]
            if not options:
                raise ValueError("clusters: a list of allowed assignments needs at least one")
            for o in options:
                if self.state == SCHEDULED and not o:
                    raise ValueError("clusters: a scheduled binding has at least one cluster")
                if self.state != SCHEDULED and o:
                    raise ValueError(f"clusters: only a scheduled binding has clusters; a {self.state} one has {{}}")
        return self

    def stated_priority(self) -> int | None | Unset:
        return self.priority if "priority" in self.model_fields_set else UNSET

    def stated_clusters(self) -> frozenset[tuple[tuple[str, int], ...]] | None:
        if "clusters" not in self.model_fields_set:
            return None
        options = self.clusters if isinstance(self.clusters, list) else [self.clusters]
        return frozenset(tuple(sorted(o.items())) for o in options)


class ExpectSpec(Strict):
    bindings: dict[Name, BindingExpect] = {}  # by app name
    order: list[Name] = []  # the order in which these apps' bindings were first scheduled

    @model_validator(mode="after")
    def _something(self) -> ExpectSpec:
        if not self.bindings and not self.order:
            raise ValueError("an expect checks bindings, an order or both")
        if len(set(self.order)) != len(self.order):
            raise ValueError("order: an app is listed twice")
        return self


class StepSpec(Strict):
    """Exactly one action, or only an expect."""

    createClass: ClassSpec | None = None
    deleteClass: Name | None = None
    propagate: PropagateSpec | None = None
    scale: ScaleSpec | None = None
    delete: Name | None = None  # the Deployment and its policy
    scheduler: Literal["stopped", "running"] | None = None
    wait: Duration | None = None
    expect: ExpectSpec | None = None
    settle: Duration | None = Field(
        default=None, description="how long the runner waits for this step's expect (default 30s)")

    @model_validator(mode="after")
    def _one_action(self) -> StepSpec:
        actions = [k for k in ACTIONS if getattr(self, k) is not None]
        if len(actions) > 1:
            raise ValueError(f"a step does one thing; this one has {', '.join(actions)}")
        if not actions and self.expect is None:
            raise ValueError("a step needs an action or an expect")
        if self.settle is not None and self.expect is None:
            raise ValueError("settle: it bounds the wait for an expect, and this step has none")
        return self

    @property
    def action(self) -> str | None:
        return next((k for k in ACTIONS if getattr(self, k) is not None), None)

    @property
    def settle_time(self) -> timedelta:
        return self.settle if self.settle is not None else DEFAULT_SETTLE


class KarmadaScenario(Strict):
    id: ScenarioId
    title: str = Field(min_length=1)
    spec: str = Field(min_length=1, description="where the rule comes from")
    gates: Gates = Gates()
    members: list[MemberSpec] = Field(min_length=1, max_length=3)
    priorityClasses: list[ClassSpec] = []  # created before the steps
    steps: list[StepSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _names_resolve(self) -> KarmadaScenario:
        errors: list[str] = []
        members = [m.name for m in self.members]
        dupes(members, "members", errors)
        dupes([c.name for c in self.priorityClasses], "priorityClasses", errors)
        classes = {c.name for c in self.priorityClasses}
        live: dict[str, int] = {}  # app -> replicas, for the apps that exist
        seen: set[str] = set()
        running = True
        for i, st in enumerate(self.steps):
            where = f"steps[{i}]"
            if st.createClass:
                if st.createClass.name in classes:
                    errors.append(f"{where}.createClass.name: class {st.createClass.name!r} already exists by then")
                classes.add(st.createClass.name)
            if st.deleteClass is not None:
                if st.deleteClass not in classes:
                    errors.append(f"{where}.deleteClass: no class named {st.deleteClass!r} exists by then")
                classes.discard(st.deleteClass)
            if st.propagate:
                # A class that does not exist is allowed: what happens then is a behaviour to check.
                if st.propagate.name in seen:
                    errors.append(f"{where}.propagate.name: app {st.propagate.name!r} is propagated twice")
                seen.add(st.propagate.name)
                live[st.propagate.name] = st.propagate.replicas
            if st.scale:
                if st.scale.name not in live:
                    errors.append(f"{where}.scale.name: no app named {st.scale.name!r} exists by then")
                elif live[st.scale.name] == st.scale.replicas:
                    errors.append(f"{where}.scale.replicas: {st.scale.name!r} already has {st.scale.replicas}: "
                                  f"an unchanged template is not reconciled")
                else:
                    live[st.scale.name] = st.scale.replicas
            if st.delete is not None:
                if st.delete not in live:
                    errors.append(f"{where}.delete: no app named {st.delete!r} exists by then")
                live.pop(st.delete, None)
            if st.scheduler is not None:
                if (st.scheduler == "running") == running:
                    errors.append(f"{where}.scheduler: karmada-scheduler is already {st.scheduler}")
                running = st.scheduler == "running"
            if st.expect:
                for app, b in st.expect.bindings.items():
                    at = field_path("steps", i, "expect", "bindings", app)
                    if app not in seen:
                        errors.append(f"{at}: no app named {app!r} was propagated by then")
                    for option in [b.clusters] if isinstance(b.clusters, dict) else b.clusters:
                        for m in option:
                            if m not in members:
                                errors.append(f"{at}.clusters: no member named {m!r} (members: {', '.join(members)})")
                for app in st.expect.order:
                    if app not in seen:
                        errors.append(f"{where}.expect.order: no app named {app!r} was propagated by then")
        if self.least_seconds() >= LONGEST.total_seconds():
            errors.append(f"steps: waits and settles add up to {self.least_seconds():.0f}s; keep a scenario under "
                          f"{LONGEST.total_seconds():.0f}s, before the 5-minute flush of unschedulable bindings")
        if errors:
            raise ValueError("; ".join(errors))
        return self

    def least_seconds(self) -> float:
        """A lower bound of the scenario's run time: the time its steps make pass on purpose."""
        return common.least_seconds(self.steps)

    def to_plan(self) -> Plan:
        """The scenario as the model reads it (reference.binding.plan)."""
        return Plan(
            members=tuple(Member(m.name, m.cpu) for m in self.members),
            classes=tuple(KarmadaClass(c.name, c.value) for c in self.priorityClasses),
            steps=tuple(Step(_action(st), None if st.expect is None else Expect(tuple(st.expect.order) or None))
                        for st in self.steps),
            gate=self.gates.PriorityBasedScheduling,
        )


def _action(st: StepSpec):
    if st.createClass:
        return CreateClass(KarmadaClass(st.createClass.name, st.createClass.value))
    if st.deleteClass is not None:
        return DeleteClass(st.deleteClass)
    if st.propagate:
        p = st.propagate
        return Propagate(App(p.name, p.replicas, p.cpu, p.class_name))
    if st.scale:
        return Scale(st.scale.name, st.scale.replicas)
    if st.delete is not None:
        return Delete(st.delete)
    if st.scheduler is not None:
        return SetScheduler(st.scheduler == "running")
    if st.wait is not None:
        return Wait(st.wait.total_seconds())
    return None


CATALOGUE = SCENARIOS / "karmada"


def load(path: str | Path) -> KarmadaScenario:
    return common.load_model(path, KarmadaScenario, KARMADA)


def load_dir(directory: str | Path) -> list[KarmadaScenario]:
    """Every scenario in ``directory`` (its *.yaml files, in name order; ids are the file names, so unique)."""
    return common.load_folder(directory, load)


def load_sources(paths: list[Path] | None) -> list[KarmadaScenario]:
    """The scenarios a run asked for (files or folders), or the catalogue."""
    return common.load_sources(paths or [CATALOGUE], load)


@dataclass(frozen=True)
class Disagreement:
    """One expect field the model does not predict: its step, its place in the file, and what
    each side says. Readers take the fields, never the printed line apart."""

    step: int
    where: str  # steps[0].expect.bindings.app-a.priority
    what: str  # file says 5, model predicts 1000 (...)

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def disagreements(scenario: KarmadaScenario, predicted: list[StepExpectation]) -> list[Disagreement]:
    """Where the file's own expect blocks say something the model does not predict.

    A stated field must equal the prediction: the same state and priority, the
    same set of allowed clusters, and an order that is the only one the model allows.
    """
    by_step = {e.index: e for e in predicted}
    out = []
    for i, st in enumerate(scenario.steps):
        if st.expect is None:
            continue
        e = by_step[i]
        for app, stated in st.expect.bindings.items():
            model = e.bindings.get(app)
            where = field_path("steps", i, "expect", "bindings", app)
            if model is None:
                out.append(Disagreement(i, where, f"the model has no binding for {app}"))
                continue
            if stated.state != model.state:
                out.append(Disagreement(i, f"{where}.state",
                                        f"file says {stated.state}, model predicts {model.state} ({model.reason})"))
            p = stated.stated_priority()
            if p is not UNSET and p != model.priority:
                out.append(Disagreement(i, f"{where}.priority",
                                        f"file says {p}, model predicts {model.priority} ({model.reason})"))
            c = stated.stated_clusters()
            if c is not None and c != model.clusters:
                out.append(Disagreement(i, f"{where}.clusters", f"file allows {_show(c)}, model allows "
                                                               f"{_show(model.clusters)} ({model.reason})"))
        if st.expect.order:
            if e.orders != frozenset({tuple(st.expect.order)}):
                out.append(Disagreement(i, f"steps[{i}].expect.order", f"file says {st.expect.order}, model allows "
                                                                      f"{sorted(list(o) for o in e.orders or ())}"))
    return out


def _show(options) -> str:
    return " or ".join(str(dict(o)) for o in sorted(options or ()))
