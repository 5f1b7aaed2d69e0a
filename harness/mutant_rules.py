"""The rules the kit checks: which mutants break each, which scenario killed them, and which
catalogue scenarios show it.

``mutants/rules/index.yaml`` lists the kit's rules (the fact sheet's and the model's own); each
mutant names the rules it breaks, and each rule names the scenarios that show it. The table
shows a rule with no mutant, a mutant no scenario killed, or a rule with no scenario at a
glance: the kill matrix alone counts mutants, not rules.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness import SCENARIOS
from harness.errors import KitError

NO_SCENARIO = "NO SCENARIO"
NO_MUTANT = "NO MUTANT"


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
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


def load_rules(directory: Path, scenarios: Path = SCENARIOS) -> list[Rule]:
    """The rules of ``directory``'s index; every scenario a rule names must be a file of
    ``scenarios`` (a pod scenario: ``<id>.yaml``), else the error names the index, the rule and
    the scenario."""
    path = index_path(directory)
    try:
        raw = yaml.safe_load(path.read_text())
        if not isinstance(raw, list):
            raise TypeError("not a list")
    except (OSError, yaml.YAMLError, TypeError) as e:
        raise KitError(f"{path}: cannot be read as a list of rules: {e}") from None
    rules = []
    for i, r in enumerate(raw):
        try:
            rules.append(Rule.model_validate(r))
        except ValidationError as e:
            err = e.errors()[0]
            rule = r.get("id") if isinstance(r, dict) and isinstance(r.get("id"), str) else f"[{i}]"
            where = "".join(f"{x}: " for x in err["loc"])
            raise KitError(f"{path}: {rule}: {where}{err['msg'].removeprefix('Value error, ')}") from None
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise KitError(f"{path}: id: {sorted({i for i in ids if ids.count(i) > 1})} listed twice")
    for r in rules:
        missing = [s for s in r.scenarios if not (scenarios / f"{s}.yaml").is_file()]
        if missing:
            raise KitError(f"{path}: {r.id}: scenarios: {', '.join(missing)} not in {scenarios} "
                           f"(a scenario's id is its file name without .yaml)")
    return rules


def check_named(mutants, directory: Path) -> None:
    """Every mutant's rules exist in the index (an error names the mutant's file and field)."""
    known = {r.id for r in load_rules(directory)}
    for m in mutants:
        unknown = [r for r in m.rules if r not in known]
        if unknown:
            raise KitError(f"{directory / (m.id + '.yaml')}: rules: {', '.join(unknown)} not in {index_path(directory)}")


def scenarios_line(r: Rule) -> str:
    """What the catalogue shows of ``r``: its scenarios, why none can, or NO SCENARIO."""
    if r.scenarios:
        return "scenarios: " + ", ".join(r.scenarios)
    if r.scenario_due:
        return f"SCENARIO DUE: {r.scenario_due}"
    return f"no scenario: {r.no_scenario}" if r.no_scenario else f"scenarios: {NO_SCENARIO}"


def table(rules: list[Rule], mutants, verdicts: dict[str, str]) -> list[str]:
    """rule -> mutant -> verdict, one line a mutant (a rule with none says why none can, where one
    is due, or NO MUTANT), then one line with the rule's scenarios (or NO SCENARIO); a count of
    the gaps at the end."""
    w = max([28] + [len(r.id) for r in rules])
    lines = [f"{'rule':<{w}} {'mutant':<44} verdict in the last kill matrix"]
    no_mutant, due, no_scenario, scenario_due = [], [], [], []
    for r in rules:
        mine = [m for m in mutants if r.id in m.rules]
        if not mine:
            if r.no_mutant:
                why = "no mutant: " + r.no_mutant
            elif r.mutant_due:
                why = "MUTANT DUE: " + r.mutant_due
                due.append(r.id)
            else:
                why = NO_MUTANT
                no_mutant.append(r.id)
            lines.append(f"{r.id:<{w}} {'-':<44} {why}")
        for m in mine:
            verdict = "equivalent (not run)" if m.equivalent else verdicts.get(m.id, "not run yet")
            lines.append(f"{r.id:<{w}} {m.id:<44} {verdict}")
        if not r.scenarios and not r.no_scenario:
            (scenario_due if r.scenario_due else no_scenario).append(r.id)
        lines.append(f"{r.id:<{w}} {scenarios_line(r)}")
    lines.append(f"{len(rules)} rules: {len(no_mutant)} {NO_MUTANT}, {len(due)} with a mutant due, "
                 f"{len(scenario_due)} with a scenario due, "
                 f"{len(no_scenario)} {NO_SCENARIO}" + (f" ({', '.join(no_scenario)})" if no_scenario else ""))
    return lines


__all__ = ["Rule", "load_rules", "check_named", "table", "scenarios_line", "NO_SCENARIO"]
