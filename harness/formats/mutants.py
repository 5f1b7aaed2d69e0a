"""The seeded-bug catalogue's files: ``mutants/*.yaml`` (one scheduler bug each) and
``mutants/rules/index.yaml`` (the rules the kit checks, which each mutant names).

A mutant names a Go module the scheduler is built from, a file in it, an exact text and its
replacement (``harness.build.mutants`` builds it; ``harness.mutants`` runs the kill matrix). Both
files are read with the formats' shared reader and errors (``harness.formats.common``), so a
mistake names the file and the field as a scenario's does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness import FILES, SCENARIOS
from harness.build import pins
from harness.errors import KitError
from harness.formats.common import NAME, ScenarioError, load_list, load_model
from harness.targets import BUILDS

MUTANTS = FILES / "mutants"
# The mutants' own release: the one whose sources the catalogue's `original` texts quote, so
# mutants are built and their catalogue runs there. Not the kit's default release: it moves only
# when every mutant's `original` is checked against the newer sources.
MUTANTS_RELEASE = "1.34"


class Mutant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=NAME)
    module: Literal["k8s.io/kubernetes", "sigs.k8s.io/scheduler-plugins"]
    file: str = Field(min_length=1)
    original: str = Field(min_length=1)
    replacement: str
    rule: str = Field(min_length=1)
    rules: list[str] = Field(min_length=1)  # the ids of mutants/rules/index.yaml it breaks
    spec: str = Field(min_length=1)
    builds: list[Literal[BUILDS]] = Field(min_length=1)  # type: ignore[valid-type]
    equivalent: str = ""  # why no observable difference can exist; then it need not be killed
    # The release whose sources ``original`` quotes: code that exists only from a later release
    # (pod groups, 1.36+) is mutated, built and run there.
    release: str = MUTANTS_RELEASE
    # A pytest -m expression: the part of the catalogue that can reach the patched code (pod-group
    # code runs only for pods that name a group). Empty: the whole catalogue.
    scenarios: str = ""
    # The flush interval its catalogue runs at (harness.flush): the kit's short one, or the
    # release's own for a mutant of the flag's default, which shows only where the flag is not given.
    flush: Literal["short", "default"] = "short"
    # The binary it patches. A kubelet mutant runs on kind, whose workers' kubelets it replaces
    # (--kubelet-binary): only there do real kubelets judge pods; ``builds`` are then the
    # schedulers beside it (the kubelet is one for both).
    component: Literal["kube-scheduler", "kubelet"] = "kube-scheduler"

    @property
    def cluster(self) -> str:
        return "kind" if self.component == "kubelet" else "local"

    @property
    def where(self) -> tuple[str, str, str, str]:
        """What its baseline must match: (release, scenario selection, flush interval, cluster)."""
        return self.release, self.scenarios, self.flush, self.cluster


def load(path: Path) -> Mutant:
    m = load_model(path, Mutant)
    if m.original == m.replacement:
        raise ScenarioError(f"{path}: replacement: the same as original; a mutant must change something")
    if m.component == "kubelet" and (m.module != "k8s.io/kubernetes" or not m.file.startswith("pkg/kubelet/")):
        raise ScenarioError(f"{path}: file: a kubelet mutant patches k8s.io/kubernetes pkg/kubelet/..., not "
                            f"{m.module} {m.file}")
    if m.component == "kubelet" and m.release != pins.default_release():
        raise ScenarioError(f"{path}: release: a kubelet mutant runs on kind, whose node image is the kit's "
                            f"release {pins.default_release()}, not {m.release}")
    return m


def load_all(directory: Path = MUTANTS) -> list[Mutant]:
    mutants = [load(p) for p in sorted(directory.glob("*.yaml"))]
    check_named(mutants, directory)
    return mutants


# --- the rules index ----------------------------------------------------------------------


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=NAME)
    rule: str = Field(min_length=1)
    source: str = Field(min_length=1)
    no_mutant: str = ""  # why no seeded scheduler bug can break it
    mutant_due: str = ""  # where a single upstream patch would break it, until a mutant names the rule
    scenarios: list[str] = []  # catalogue scenarios (scenarios/<id>.yaml) that show it
    no_scenario: str = ""  # why no scenario can show it
    scenario_due: str = ""  # what a scenario that shows it needs, until one is written

    @model_validator(mode="after")
    def _one_answer_each(self) -> Rule:
        if self.no_mutant and self.mutant_due:
            raise ValueError("no_mutant and mutant_due: say either why no mutant can break it or where one would")
        if self.scenarios and self.no_scenario:
            raise ValueError("scenarios and no_scenario: a rule some scenario shows needs no reason why none can")
        if self.scenario_due and (self.scenarios or self.no_scenario):
            raise ValueError("scenario_due with scenarios or no_scenario: a due scenario is one not written yet")
        twice = sorted({s for s in self.scenarios if self.scenarios.count(s) > 1})
        if twice:
            raise ValueError(f"scenarios: {', '.join(twice)} listed twice")
        return self


def index_path(directory: Path) -> Path:
    return directory / "rules" / "index.yaml"


def load_rules(directory: Path = MUTANTS, scenarios: Path = SCENARIOS) -> list[Rule]:
    """The rules of ``directory``'s index; every scenario a rule names must be a file of
    ``scenarios`` (a pod scenario: ``<id>.yaml``), else the error names the index, the rule and
    the scenario."""
    path = index_path(directory)
    rules = load_list(path, Rule, "rules")
    for r in rules:
        missing = [s for s in r.scenarios if not (scenarios / f"{s}.yaml").is_file()]
        if missing:
            raise KitError(f"{path}: {r.id}: scenarios: {', '.join(missing)} not in {scenarios} "
                           f"(a scenario's id is its file name without .yaml)")
    return rules


def check_named(mutants: list[Mutant], directory: Path) -> None:
    """Every mutant's rules exist in the index (an error names the mutant's file and field)."""
    known = {r.id for r in load_rules(directory)}
    for m in mutants:
        unknown = [r for r in m.rules if r not in known]
        if unknown:
            raise KitError(f"{directory / (m.id + '.yaml')}: rules: {', '.join(unknown)} not in {index_path(directory)}")


__all__ = ["MUTANTS", "MUTANTS_RELEASE", "Mutant", "Rule", "check_named", "index_path", "load", "load_all",
           "load_rules"]
