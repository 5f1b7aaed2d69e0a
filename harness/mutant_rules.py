"""The rules the mutants break: which rule has mutants, and which scenario killed each.

``mutants/rules/index.yaml`` lists the kit's rules (the fact sheet's and the model's own); each
mutant names the rules it breaks. The table shows a rule with no mutant, or a mutant no
scenario killed, at a glance: the kill matrix alone counts mutants, not rules.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import KitError

LAST_MATRIX = "matrix.txt"


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    rule: str = Field(min_length=1)
    source: str = Field(min_length=1)
    no_mutant: str = ""  # why no seeded scheduler bug can break it


def index_path(directory: Path) -> Path:
    return directory / "rules" / "index.yaml"


def load_rules(directory: Path) -> list[Rule]:
    path = index_path(directory)
    try:
        raw = yaml.safe_load(path.read_text())
        rules = [Rule.model_validate(r) for r in raw]
    except (OSError, yaml.YAMLError, TypeError) as e:
        raise KitError(f"{path}: cannot be read as a list of rules: {e}") from None
    except ValidationError as e:
        raise KitError(f"{path}: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise KitError(f"{path}: id: {sorted({i for i in ids if ids.count(i) > 1})} listed twice")
    return rules


def check_named(mutants, directory: Path) -> None:
    """Every mutant's rules exist in the index (an error names the mutant's file and field)."""
    known = {r.id for r in load_rules(directory)}
    for m in mutants:
        unknown = [r for r in m.rules if r not in known]
        if unknown:
            raise KitError(f"{directory / (m.id + '.yaml')}: rules: {', '.join(unknown)} not in {index_path(directory)}")


_ROW = re.compile(r"^(\S+)\s+\S*\s+(killed by .+|SURVIVED.*|INCONCLUSIVE.*|error: .+)$")


def killers(matrix_text: str) -> dict[str, str]:
    """mutant -> its verdict in a kill matrix as ``./kit mutants`` writes it."""
    out = {}
    for line in matrix_text.splitlines():
        m = _ROW.match(line)
        if m:
            out[m.group(1)] = m.group(2).split("  (equivalent")[0]
    return out


def table(rules: list[Rule], mutants, verdicts: dict[str, str]) -> list[str]:
    """rule -> mutant -> verdict, one line a mutant; a rule with none says why or NONE."""
    lines = [f"{'rule':<28} {'mutant':<44} verdict in the last kill matrix"]
    for r in rules:
        mine = [m for m in mutants if r.id in m.rules]
        if not mine:
            lines.append(f"{r.id:<28} {'-':<44} {'no mutant: ' + r.no_mutant if r.no_mutant else 'NO MUTANT'}")
        for m in mine:
            verdict = "equivalent (not run)" if m.equivalent else verdicts.get(m.id, "not run yet")
            lines.append(f"{r.id:<28} {m.id:<44} {verdict}")
    return lines


__all__ = ["Rule", "load_rules", "check_named", "killers", "table", "LAST_MATRIX"]
