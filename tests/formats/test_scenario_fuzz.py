"""Fuzzing the scenario loader: whatever a file says, the answer is a Scenario or a ScenarioError.

Malformed files are made by mutating a valid scenario's parsed tree (replace a
value with one of another type or an extreme number, drop or add a key), then
written back as YAML. A file the loader accepts must also run through the model
without raising anything but a ScenarioError: accepted means usable.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.run.pods.expectation import simulate
from harness.formats.common import ScenarioError
from harness.formats.pods import load

SEED = yaml.safe_load((Path(__file__).resolve().parents[2] / "scenarios" / "pdb-budget-left-no-violation.yaml").read_text())

EXTREMES = st.sampled_from([0, -1, 1, 2**31, -(2**31) - 1, 2**63, 9223372036854775808, 10**400,
                            1e308, float("inf"), float("nan"), -0.5, True, None, "", "x" * 300,
                            "9999999999999999999999h", "-5s", "1e9s", [], {}, [1, 2], {"a": 1}])
SCALARS = st.one_of(EXTREMES, st.integers(), st.floats(), st.text(max_size=20), st.booleans())


def paths(tree, prefix=()):
    yield prefix
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from paths(v, prefix + (i,))


ALL_PATHS = [p for p in paths(SEED) if p]


def mutate(tree, path, how, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        out = dict(tree)
        if not rest and how == "drop":
            out.pop(head, None)
        elif not rest and how == "add":
            out[f"{head}Extra"] = value
        else:
            out[head] = mutate(tree[head], rest, how, value)
        return out
    out = list(tree)
    if not rest and how == "drop":
        del out[head]
    else:
        out[head] = mutate(tree[head], rest, how, value)
    return out


mutations = st.lists(st.tuples(st.sampled_from(ALL_PATHS), st.sampled_from(["replace", "drop", "add"]), SCALARS),
                     min_size=1, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations)
def test_every_mutated_file_is_accepted_or_rejected_with_a_scenario_error(tmp_path, muts):
    tree = SEED
    for path, how, value in muts:
        try:
            tree = mutate(tree, path, how, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or retyped this path
    f = tmp_path / "pdb-budget-left-no-violation.yaml"
    try:
        f.write_text(yaml.safe_dump(tree, allow_unicode=True))
    except (yaml.YAMLError, OverflowError, ValueError):
        return  # not expressible as YAML: no file to test
    try:
        scenario = load(f)
    except ScenarioError:
        return
    for build in scenario.builds:
        try:
            simulate(scenario, build)
        except ScenarioError:
            pass


def test_raw_bytes_and_odd_yaml_are_scenario_errors(tmp_path):
    f = tmp_path / "odd.yaml"
    for text in (b"\xff\xfe\x00bad", b"- a\n- b\n", b"id: [unclosed", b"!!python/object:os.system {}",
                 b"a: &x [*x]", b"steps:\n  - wait: 9223372036854775808\n"):
        f.write_bytes(text)
        try:
            load(f)
        except ScenarioError:
            continue
        raise AssertionError(f"{text!r} was accepted")


def test_a_huge_wait_is_rejected_with_file_and_field(tmp_path):
    tree = mutate(SEED, ("steps", 0), "replace", {"wait": 9223372036854775808})
    f = tmp_path / "pdb-budget-left-no-violation.yaml"
    f.write_text(yaml.safe_dump(tree))
    try:
        load(f)
    except ScenarioError as e:
        assert "pdb-budget-left-no-violation.yaml" in str(e) and "steps[0].wait" in str(e) and "out of range" in str(e)
    else:
        raise AssertionError("accepted")
