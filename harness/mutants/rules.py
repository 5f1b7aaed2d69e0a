"""The rules the kit checks against the mutants that break them: which scenario killed each, and
which catalogue scenarios show the rule (``./kit mutants --rules``).

``mutants/rules/index.yaml`` (read by ``harness.formats.mutants``) lists the kit's rules (the fact
sheet's and the model's own); each mutant names the rules it breaks, and each rule names the
scenarios that show it. The table shows a rule with no mutant, a mutant no scenario killed, or a
rule with no scenario at a glance: the kill matrix alone counts mutants, not rules.
"""

from __future__ import annotations

from harness.formats.mutants import Mutant, Rule

NO_SCENARIO = "NO SCENARIO"
NO_MUTANT = "NO MUTANT"


def scenarios_line(r: Rule) -> str:
    """What the catalogue shows of ``r``: its scenarios, why none can, or NO SCENARIO."""
    if r.scenarios:
        return "scenarios: " + ", ".join(r.scenarios)
    if r.scenario_due:
        return f"SCENARIO DUE: {r.scenario_due}"
    return f"no scenario: {r.no_scenario}" if r.no_scenario else f"scenarios: {NO_SCENARIO}"


def table(rules: list[Rule], mutants: list[Mutant], verdicts: dict[str, str]) -> list[str]:
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


__all__ = ["NO_MUTANT", "NO_SCENARIO", "scenarios_line", "table"]
