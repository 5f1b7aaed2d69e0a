"""The peer suite's index and its table (harness.formats.peers, ./kit peers)."""

from __future__ import annotations

import pytest
import yaml

from harness.cli import main
from harness.errors import KitError
from harness.formats import peers

CASE = {"id": "k8s-1.35-x", "project": "kubernetes", "release": "1.35.8", "file": "f_test.go", "function": "TestX",
        "case": "c", "kind": "unit", "expressible": "model-test"}


def write(tmp_path, *cases):
    f = tmp_path / "cases.yaml"
    f.write_text(yaml.safe_dump(list(cases)))
    return f


def test_the_index_loads_and_every_pointer_points_at_something():
    cases = peers.load()
    assert len(cases) > 800
    assert all(c.reason for c in cases if c.expressible == "no")
    assert sum(1 for c in cases if c.test) >= 17


@pytest.mark.parametrize("change, field", [
    ({"matches": "no-such-scenario"}, "matches: no catalogue scenario 'no-such-scenario'"),
    ({"test": "tests/peers/test_preemption_toleration_unit.py::test_nothing"}, "test: "),
    ({"expressible": "no"}, "reason: a case the kit cannot express says why"),
    ({"kind": "fuzz"}, "kind"),
])
def test_a_bad_entry_is_named_with_its_field(tmp_path, change, field):
    f = write(tmp_path, {**CASE, **change})
    with pytest.raises(KitError) as e:
        peers.load(f)
    assert str(f) in str(e.value) and "k8s-1.35-x" in str(e.value) and field in str(e.value)


def test_the_table_counts_each_status(tmp_path, capsys):
    f = write(tmp_path, CASE, {**CASE, "id": "b", "expressible": "no", "reason": "extender"},
              {**CASE, "id": "c", "matches": "preempt-basic"})
    assert main(["peers", "--index", str(f), "--list"]) == 0
    out = capsys.readouterr().out
    assert "3 cases: 1 expressed (0 by a model test" in out and "1 to do, 1 not expressible" in out
    assert "1  extender" in out and "scenario preempt-basic" in out


def test_a_case_the_kit_cannot_express_is_not_counted_as_expressed_by_its_nearest_scenario(tmp_path, capsys):
    near = {**CASE, "id": "d", "expressible": "no", "reason": "extender", "matches": "preempt-basic", "reviewed": True}
    f = write(tmp_path, near)
    assert peers.load(f)[0].status == "not expressible"
    assert main(["peers", "--index", str(f), "--list"]) == 0
    out = capsys.readouterr().out
    assert "1 cases: 0 expressed" in out and "cannot: extender (nearest scenario: preempt-basic)" in out
