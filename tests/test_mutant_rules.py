"""The rule -> mutant -> killer table (harness.mutant_rules): every rule has a mutant or says why
not, every mutant names rules that exist, and a kill matrix's verdicts are read back."""

from __future__ import annotations

import pytest

from harness import mutant_rules
from harness import mutants as mutate
from harness.errors import KitError

RULES = mutant_rules.load_rules(mutate.MUTANTS)
MUTANTS = mutate.load_all()


def test_every_rule_has_a_mutant_or_says_why_none_can_exist():
    bare = [r.id for r in RULES if not r.no_mutant and not any(r.id in m.rules for m in MUTANTS)]
    assert bare == []


def test_every_mutant_names_a_known_rule(tmp_path):
    for m in MUTANTS:
        assert set(m.rules) <= {r.id for r in RULES}, m.id
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "index.yaml").write_text("- {id: a, rule: r, source: s}\n")
    bad = MUTANTS[0].model_copy(update={"rules": ["nosuch"]})
    with pytest.raises(KitError, match=r"\.yaml: rules: nosuch not in"):
        mutant_rules.check_named([bad], tmp_path)


def test_the_table_reads_the_last_kill_matrix():
    matrix = "\n".join([
        f"{'mutant':<44} {'builds run':<18} verdict",
        f"{'queue-lower-priority-first':<44} {'plugins':<18} killed by nonpreempting-user-story",
        f"{'queue-le-precheck-inverted':<44} {'plugins,upstream':<18} SURVIVED",
        f"{'node-tie-pick-last':<44} {'':<18} SURVIVED  (equivalent: a choice among ties)",
    ])
    verdicts = mutant_rules.killers(matrix)
    assert verdicts == {"queue-lower-priority-first": "killed by nonpreempting-user-story",
                        "queue-le-precheck-inverted": "SURVIVED", "node-tie-pick-last": "SURVIVED"}
    lines = mutant_rules.table(RULES, MUTANTS, verdicts)
    assert any(ln.split()[:2] == ["queue-priority-order", "queue-lower-priority-first"] and
               ln.endswith("killed by nonpreempting-user-story") for ln in lines)
    assert any(ln.startswith("admission-limits") and "no mutant: " in ln for ln in lines)
