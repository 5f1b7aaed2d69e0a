"""Campaigns in shards (issue 26), without a cluster: the parts, the index from a Kubernetes
Indexed Job, the suite split by pytest-split, and the merge of shards' results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.formats.mutants import Mutant, load_all
from harness.mutants import matrix
from harness.mutants.runs import Run, runs_data, summary
from harness.errors import KitError
from harness.explore.campaign import Summary
from harness.explore.generate import generate
from harness.run.pods.verdict import matrix_lines
from harness.shards import split
from harness.shards.merge import merge

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]


# --- the convention and the parts ---------------------------------------------------


def test_a_shard_is_named_from_one_or_comes_from_the_indexed_job_s_index_from_zero():
    assert split.parse("2/4", env={}) == split.Shard(2, 4)
    assert split.parse("auto/4", env={"JOB_COMPLETION_INDEX": "0"}) == split.Shard(1, 4)
    assert split.parse("auto/4", env={"JOB_COMPLETION_INDEX": "3"}) == split.Shard(4, 4)
    assert split.parse("1/4", env={"JOB_COMPLETION_INDEX": "3"}) == split.Shard(1, 4)  # named wins
    for text, env, message in [("0/4", {}, "does not exist"), ("5/4", {}, "does not exist"),
                               ("auto/4", {}, "auto needs JOB_COMPLETION_INDEX"),
                               ("auto/4", {"JOB_COMPLETION_INDEX": "4"}, "counts from 0"),
                               ("auto/4", {"JOB_COMPLETION_INDEX": "one"}, "a whole number from 0"),
                               ("2", {}, "expected i/N"), ("1/0", {}, "N must be 1 or more")]:
        with pytest.raises(KitError, match=message):
            split.parse(text, env=env)
    assert split.job_index({}) is None and split.job_index({"JOB_COMPLETION_INDEX": "2"}) == 3


@pytest.mark.parametrize("full", [False, True])
def test_the_mutants_parts_are_deterministic_disjoint_and_together_the_whole(full):
    mutants = [m for m in load_all() if full or not m.equivalent]
    weight = (lambda m: len(m.builds)) if full else (lambda m: 1)
    for n in range(1, 6):
        parts = [split.pick(mutants, split.Shard(i, n), weight) for i in range(1, n + 1)]
        assert parts == [split.pick(list(mutants), split.Shard(i, n), weight) for i in range(1, n + 1)]
        ids = [m.id for p in parts for m in p]
        assert sorted(ids) == sorted(m.id for m in mutants) and len(ids) == len(set(ids))
        for p in parts:
            assert [m.id for m in p] == sorted(m.id for m in p)  # each part in the catalogue's order
        loads = [sum(map(weight, p)) for p in parts]
        assert max(loads) - min(loads) <= max(map(weight, mutants))


def test_equal_weights_are_dealt_round_robin():
    assert split.parts(list(range(7)), 3) == [[0, 3, 6], [1, 4], [2, 5]]
    assert split.parts([], 2) == [[], []]


def test_the_explorer_s_shards_are_the_unsharded_draw_with_the_same_ids():
    whole = generate(9, 5)
    shards = [split.pick(generate(9, 5), split.Shard(i, 3)) for i in (1, 2, 3)]
    assert sorted((t for s in shards for t in s), key=lambda t: t["id"]) == whole
    assert [t["id"] for t in shards[1]] == ["x5-0002", "x5-0005", "x5-0008"]


# --- the suite split by pytest-split ------------------------------------------------

RECORDER = """
import json
from conformance.plugin.session import selected

def pytest_collection_finish(session):
    # What the kit's background batches read at this point: the shard's scenarios only.
    picked = [s.id for b in ("plugins", "upstream") for s in selected(session.items, "scenario", b)]
    with open("selected.json", "w") as f:
        json.dump(picked, f)
"""


def _collect(pytester, *args: str) -> tuple[list[str], list[str]]:
    """The test ids a collection of the real suite keeps, and the scenarios its batches would run."""
    pytester.makepyfile(recorder=RECORDER)
    result = pytester.runpytest_subprocess(str(REPO / "conformance"), "--collect-only", "-q", "--no-cluster",
                                           "-p", "no:cacheprovider", "-p", "recorder", *args)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    ids = [ln for ln in result.stdout.lines if "::" in ln]
    return ids, json.loads((pytester.path / "selected.json").read_text())


def test_two_groups_of_the_suite_cover_every_test_once_and_each_batch_runs_its_own_shard(pytester, monkeypatch):
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    whole, all_scenarios = _collect(pytester)
    one, first = _collect(pytester, "--splits", "2", "--group", "1")
    two, second = _collect(pytester, "--splits", "2", "--group", "2")
    assert one and two and sorted(one + two) == sorted(whole)
    assert not set(one) & set(two)
    assert set(first) | set(second) == set(all_scenarios) and len(first) < len(all_scenarios)
    # The batches see exactly the scenario tests their shard kept.
    assert {i.split("-", 1)[1].rstrip("]") for i in one if "test_scenario[" in i} == set(first)


def test_without_group_the_suite_takes_it_from_job_completion_index(pytester, monkeypatch):
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "0")  # a named group wins over the index
    named, _ = _collect(pytester, "--splits", "2", "--group", "2")
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    indexed, _ = _collect(pytester, "--splits", "2")
    assert indexed == named


@pytest.mark.parametrize("env, message", [
    ({}, "ERROR: --splits 2: name the group, --group i (from 1), or set JOB_COMPLETION_INDEX"),
    ({"JOB_COMPLETION_INDEX": "2"}, "ERROR: JOB_COMPLETION_INDEX=2: group 3 of --splits 2 does not exist"),
])
def test_a_missing_or_impossible_index_is_one_usage_error(pytester, monkeypatch, env, message):
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    result = pytester.runpytest_subprocess(str(REPO / "conformance"), "--collect-only", "-q", "--no-cluster",
                                           "-p", "no:cacheprovider", "--splits", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().strip().startswith(message)


def test_store_durations_keeps_each_scenario_test_s_own_seconds(pytester):
    # As tests/plugin/test_plugin_reporting.py: the batch runs in the first test's setup, 0.5 s; each
    # scenario took 42 s. pytest-split sums setup, call and teardown per test: 42 s, not the batch's.
    pytester.makeconftest("from conformance.plugin import MODULES\n\npytest_plugins = MODULES\n")
    pytester.makepyfile(test_scenarios="""
        import time
        from types import SimpleNamespace

        import pytest


        @pytest.fixture(scope="session")
        def batch(build, kit_run):
            time.sleep(0.5)
            return SimpleNamespace(results={(s.id, 0): SimpleNamespace(seconds=42.0) for s in kit_run.scenarios})


        def test_scenario(scenario, build, batch):
            pass
        """)
    pytester.makefile(".yaml", kubeconfig="{}")
    scenario = REPO / "scenarios" / "preempt-basic.yaml"
    (pytester.path / scenario.name).write_text(scenario.read_text())
    result = pytester.runpytest_subprocess("-p", "no:pytest-kind-ng", "-p", "no:cacheprovider",
                                           "-W", "ignore::pytest.PytestUnknownMarkWarning",
                                           "--scenarios", scenario.name, "--kubeconfig", "kubeconfig.yaml",
                                           "--store-durations", "--durations-path", "durations.json")
    result.assert_outcomes(passed=1)
    stored = json.loads((pytester.path / "durations.json").read_text())
    assert list(stored) == ["test_scenarios.py::test_scenario[plugins-preempt-basic]"]
    assert abs(stored["test_scenarios.py::test_scenario[plugins-preempt-basic]"] - 42.0) < 0.1


# --- merging ------------------------------------------------------------------------

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="{n}" time="{t}">{cases}</testsuite></testsuites>
"""


def _case(name: str, inner: str = "") -> str:
    return f'<testcase classname="conformance.test_scenarios" name="{name}" time="1.0">{inner}</testcase>'


def _shard_record(campaign: str, index: int, count: int, ran: list[str], **extra) -> dict:
    return {"campaign": campaign, "index": index, "count": count, "host": f"h{index}",
            "started": "2025-01-01T00:00:00", "seconds": 60.0 * index, "ran": ran, **extra}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_two_junit_files_merge_into_one_tally(tmp_path):
    _write(tmp_path / "s1" / "junit.xml", JUNIT.format(n=3, t=10, cases="".join([
        _case("test_scenario[plugins-a]"), _case("test_scenario[plugins-b]"),
        _case("test_scenario[plugins-c]", '<failure message="c: differs from the model">table</failure>')])))
    _write(tmp_path / "s2" / "junit.xml", JUNIT.format(n=3, t=20, cases="".join([
        _case("test_scenario[upstream-a]"),
        _case("test_scenario[upstream-b]", '<skipped type="pytest.xfail" message="expected difference"/>'),
        _case("test_scenario[upstream-c]", '<skipped type="pytest.skip" message="--no-cluster"/>')])))
    for i in (1, 2):
        _write(tmp_path / f"s{i}" / "shard-conformance.json", json.dumps(_shard_record("conformance", i, 2, [])))
    report = merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "s1" / "merged")
    assert "1 failed, 3 passed, 1 skipped, 1 xfailed (over 2 JUnit file(s); merged in " \
           f"{tmp_path / 's1' / 'merged' / 'junit.xml'})" in report.lines
    # Merged again elsewhere: the first merge's output, inside a shard's folder, is not a shard.
    report = merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged")
    assert "1 failed, 3 passed, 1 skipped, 1 xfailed (over 2 JUnit file(s); merged in " \
           f"{tmp_path / 'merged' / 'junit.xml'})" in report.lines
    assert "FAILED conformance.test_scenarios::test_scenario[plugins-c] - c: differs from the model" in report.lines
    assert report.failed and report.problems == []
    from junitparser import JUnitXml

    merged = JUnitXml.fromfile(str(tmp_path / "merged" / "junit.xml"))
    assert (merged.tests, merged.failures, merged.errors, merged.skipped) == (6, 1, 0, 2)


def test_a_test_run_by_two_shards_and_a_missing_shard_are_problems(tmp_path):
    _write(tmp_path / "s1" / "a.xml", JUNIT.format(n=1, t=1, cases=_case("test_scenario[plugins-a]")))
    _write(tmp_path / "s2" / "b.xml", JUNIT.format(n=1, t=1, cases=_case("test_scenario[plugins-a]")))
    _write(tmp_path / "s1" / "shard-conformance.json", json.dumps(_shard_record("conformance", 1, 3, [])))
    report = merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged")
    assert not report.failed
    assert report.problems == [
        "conformance: shard(s) 2/3, 3/3 missing",
        f"conformance.test_scenarios::test_scenario[plugins-a] ran in two shards ({tmp_path / 's1' / 'a.xml'}, "
        f"{tmp_path / 's2' / 'b.xml'})"]


def _runs(mutants: list[Mutant]) -> dict[str, list[Run]]:
    """A made-up matrix: killed, survived, inconclusive and errors, on either build."""
    out = {}
    for i, m in enumerate(mutants):
        b = m.builds[0]
        out[m.id] = [[Run(m.id, b, failed=["preempt-basic"], passed=3, seconds=30),
                      Run(m.id, b, passed=60, seconds=400),
                      Run(m.id, b, faults=["queue-x"], passed=60, seconds=400),
                      Run(m.id, b, error="pytest exited 3", seconds=2)][i % 4]]
    return out


def test_two_kill_matrix_shards_merge_into_the_unsharded_summary(tmp_path):
    everything = load_all()
    skipped = [m.id for m in everything if m.equivalent]
    mutants = [m for m in everything if not m.equivalent]
    runs = _runs(mutants)
    whole, _ = summary(mutants, runs)
    baseline = [Run("baseline", "plugins", passed=64, seconds=410)]
    for i in (1, 2):
        mine = split.pick(mutants, split.Shard(i, 2))
        rec = _shard_record("mutants", i, 2, [m.id for m in mine], builds=["plugins", "upstream"], full=False,
                            only=[], skipped=skipped, jobs=2)
        data = runs_data(rec, baseline, {m.id: runs[m.id] for m in mine})
        _write(tmp_path / f"shard{i}" / "mutants" / "runs.json", json.dumps(data))
        # A mutant run's own JUnit and release matrix sit beside it, every shard's with the same
        # cells: part of the kill matrix, never merged as the suite's.
        _write(tmp_path / f"shard{i}" / "mutants" / "baseline-plugins.xml", JUNIT.format(n=0, t=0, cases=""))
        _write(tmp_path / f"shard{i}" / "mutants" / "baseline-plugins" / "release-matrix.json", json.dumps(
            {"targets": ["plugins@1.35"], "cells": {"a": {"plugins@1.35": "pass"}},
             "walls": {"plugins@1.35": 1.0}, "order": ["plugins@1.35"]}))
    report = merge([tmp_path / "shard1", tmp_path / "shard2"], tmp_path / "merged")
    lines = (tmp_path / "merged" / "matrix.txt").read_text().splitlines()
    assert lines[:len(whole)] == whole
    assert lines[len(whole)] == f"not run, argued equivalent: {', '.join(skipped)}"
    assert lines[-1].startswith("wall time: 2.0 min, the slowest of 2 shard(s) (3.0 min in all)")
    assert report.failed and report.problems == []  # survivors fail the merge, as they fail one run
    assert not any("JUnit" in ln or "scenario x release" in ln for ln in report.lines)


def test_explorer_shards_merge_into_one_summary_per_build_and_a_missing_draw_is_a_problem(tmp_path):
    ids = [f"x1-{i:04d}" for i in range(1, 6)]
    parts = split.parts(ids, 2)
    for i, part in enumerate(parts, 1):
        s = Summary("plugins", scenarios=len(part), steps=3 * len(part), agreed=len(part) - (i == 2), midway=1,
                    known_faults=i == 1, seconds=60.0 * i)
        if i == 2:
            from harness.explore.campaign import Divergence

            s.divergences.append(Divergence("plugins", "outcome", {}, {"id": part[0]}, "report"))
            _write(tmp_path / f"s{i}" / "plugins" / f"{part[0]}.yaml", "id: x\n")
        rec = _shard_record("explore", i, 2, part, seed=1, draws=5, release="1.35", builds=["plugins"])
        _write(tmp_path / f"s{i}" / f"summary-seed1-shard{i}of2.json",
               json.dumps({"shard": rec, "summaries": [s.to_json()]}))
    report = merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged")
    summary = (tmp_path / "merged" / "explore" / "summary-seed1.txt").read_text().splitlines()
    assert summary == [
        "./kit explore --count 5 --seed 1 on Kubernetes 1.35: 5 scenarios drawn",
        "[plugins] 5 scenarios (2 looked mid-way), 15 steps compared, 4 agreed, 1 diverged (outcome: 1, "
        "scheduler fault: 0, runner: 0), 1 with a known scheduler fault that left the outcome as specified; 2.0 min",
        "  x1-0002: outcome"]
    assert (tmp_path / "merged" / "explore" / "plugins" / "x1-0002.yaml").exists()
    assert report.failed and report.problems == []
    (tmp_path / "s2" / "summary-seed1-shard2of2.json").unlink()
    assert merge([tmp_path / "s1"], tmp_path / "merged").problems == [
        "explore: shard(s) 2/2 missing", "explore seed 1: 2 draw(s) no shard ran: x1-0002, x1-0004"]


def test_release_matrix_shards_merge_into_the_table_one_run_prints(tmp_path):
    order = ["plugins@1.35", "upstream@1.35", "upstream@1.37"]
    cells = {"a": {"plugins@1.35": "pass", "upstream@1.35": "FAIL", "upstream@1.37": "stopped"},
             "b": {"plugins@1.35": "pass", "upstream@1.35": "differs", "upstream@1.37": "FAIL"},
             "c": {"plugins@1.35": "fault"}}
    halves = [{"a": cells["a"], "b": {"upstream@1.37": "FAIL"}},
              {"b": {k: v for k, v in cells["b"].items() if k != "upstream@1.37"}, "c": cells["c"]}]
    walls = [{"plugins@1.35": 60.0, "upstream@1.35": 12.0, "upstream@1.37": 6.0},
             {"plugins@1.35": 30.0, "upstream@1.35": 30.0}]
    for i, (half, wall) in enumerate(zip(halves, walls), 1):
        _write(tmp_path / f"s{i}" / "release-matrix.json", json.dumps(
            {"targets": list(wall), "cells": half, "walls": wall, "order": order}))
    report = merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged")
    expected = matrix_lines(order, cells, {"plugins@1.35": 60.0, "upstream@1.35": 30.0, "upstream@1.37": 6.0})
    assert (tmp_path / "merged" / "release-matrix.txt").read_text().splitlines() == expected
    assert report.failed and report.problems == []


def test_nothing_to_merge_is_an_error(tmp_path):
    with pytest.raises(KitError, match="nothing to merge"):
        merge([tmp_path], tmp_path / "merged")


# --- the commands, their clusters replaced ------------------------------------------


def test_explore_shards_write_what_merge_joins_into_the_unsharded_draw(tmp_path, monkeypatch, capsys):
    from harness.build import toolchain
    from harness.cli import main
    from harness.explore import campaign

    monkeypatch.setattr(toolchain, "ensure_all", lambda *a, **k: None)
    ran: list[list[str]] = []

    def explore(trees, build, out, **_):
        ran.append([t["id"] for t in trees])
        return Summary(build, scenarios=len(trees), steps=len(trees), agreed=len(trees), seconds=6.0)

    monkeypatch.setattr(campaign, "explore", explore)
    for i in (1, 2):
        assert main(["explore", "--count", "5", "--seed", "3", "--scheduler", "upstream", "--k8s-version", "1.35",
                     "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")]) == 0
    assert ran == [["x3-0001", "x3-0003", "x3-0005"], ["x3-0002", "x3-0004"]]
    assert (tmp_path / "s2" / "summary-seed3-shard2of2.txt").read_text().splitlines()[0] == (
        "./kit explore --count 5 --seed 3 on Kubernetes 1.35: 5 scenarios drawn, shard 2/2: 2 of them")
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m")]) == 0
    assert (tmp_path / "m" / "explore" / "summary-seed3.txt").read_text().splitlines() == [
        "./kit explore --count 5 --seed 3 on Kubernetes 1.35: 5 scenarios drawn",
        "[upstream] 5 scenarios (0 looked mid-way), 5 steps compared, 5 agreed, 0 diverged (outcome: 0, "
        "scheduler fault: 0, runner: 0), 0 with a known scheduler fault that left the outcome as specified; 0.1 min"]
    assert "explore shard 2/2 on " in capsys.readouterr().out


def test_mutants_shards_write_what_merge_joins_into_the_unsharded_matrix(tmp_path, monkeypatch, capsys):
    from harness.build import toolchain
    from harness.cli import main

    monkeypatch.setattr(toolchain, "ensure_all", lambda *a, **k: None)
    # As on a Docker host that runs kind: the kubelet mutants are part of the matrix.
    from harness.clusters import kind
    monkeypatch.setattr(kind, "preflight", lambda *a, **k: None)
    runs = _runs([m for m in load_all() if not m.equivalent])

    def kill_matrix(mutants, builds, jobs, full, out, print_=print):
        return [Run("baseline", b, passed=50, seconds=300) for b in builds], {m.id: runs[m.id] for m in mutants}

    monkeypatch.setattr(matrix, "kill_matrix", kill_matrix)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    for shard, out in (("1/2", "s1"), ("auto/2", "s2")):
        assert main(["mutants", "--shard", shard, "--out", str(tmp_path / out)]) == 1  # the made-up survivors
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m")]) == 1
    whole, _ = summary([m for m in load_all() if not m.equivalent], runs)
    assert (tmp_path / "m" / "matrix.txt").read_text().splitlines()[:len(whole)] == whole
    out = capsys.readouterr().out
    assert "mutants shard 2/2 on " in out and "baseline [upstream] of shard 2/2: 50 passed, 0 failed in 300 s" in out
    assert "problems" not in out


def test_durations_from_shards_join_each_shard_s_own_tests(tmp_path):
    # Without --clean-durations each shard's file also holds stale figures of the other's tests.
    for i, (mine, stale) in enumerate([("a", "b"), ("b", "a")], 1):
        _write(tmp_path / f"s{i}" / "test_durations.json", json.dumps({mine: 10.0 * i, stale: 99.0}))
        _write(tmp_path / f"s{i}" / "shard-conformance.json", json.dumps(_shard_record("conformance", i, 2, [mine])))
    merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged")
    assert json.loads((tmp_path / "merged" / ".test_durations").read_text()) == {"a": 10.0, "b": 20.0}
