"""The rule index (harness.formats.mutants, its table harness.mutants.rules): every rule has a mutant or says why not, every rule has
a scenario or says why none can show it, every scenario it names exists, every mutant names
rules that exist, and the table reads a kill matrix's verdicts back and shows the gaps."""

from __future__ import annotations

import pytest

from harness import SCENARIOS
from harness.formats import mutants as mutant_files
from harness.mutants import rules as mutant_rules
from harness.mutants.runs import Run, verdicts_from_runs
from harness.errors import KitError
from reference import release, requeue

RULES = mutant_files.load_rules(mutant_files.MUTANTS)
MUTANTS = mutant_files.load_all()


def _index(tmp_path, text: str):
    (tmp_path / "rules").mkdir(exist_ok=True)
    (tmp_path / "rules" / "index.yaml").write_text(text)
    return tmp_path


def test_every_rule_has_a_mutant_or_says_why_none_can_exist_or_where_one_is_due():
    bare = [r.id for r in RULES if not r.no_mutant and not r.mutant_due and not any(r.id in m.rules for m in MUTANTS)]
    assert bare == []


def test_a_due_mutant_leaves_the_index_once_a_mutant_names_the_rule():
    stale = [r.id for r in RULES if r.mutant_due and any(r.id in m.rules for m in MUTANTS)]
    assert stale == [], "drop mutant_due from these rules: a mutant breaks them now"


def test_every_rule_has_a_scenario_or_says_why_none_can_show_it_or_what_one_needs():
    # The guard of issue 33: a rule the catalogue does not show is a rule the kit does not check;
    # one not shown yet says what its scenario needs (SCENARIO DUE in `./kit mutants --rules`).
    bare = [r.id for r in RULES if not r.scenarios and not r.no_scenario and not r.scenario_due]
    assert not bare, (f"{mutant_rules.NO_SCENARIO} for {len(bare)} rule(s): {', '.join(bare)}; write a scenario "
                      "for each (scenarios/) and name it in the rule's scenarios:")


def test_every_scenario_a_rule_names_exists():
    for r in RULES:
        for s in r.scenarios:
            assert (SCENARIOS / f"{s}.yaml").is_file(), f"{r.id}: {s}"


def test_a_missing_scenario_is_an_error_naming_the_index_the_rule_and_the_scenario(tmp_path):
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "there.yaml").write_text("id: there\n")
    d = _index(tmp_path, "- {id: a, rule: r, source: s, scenarios: [there, gone]}\n")
    with pytest.raises(KitError, match=r"rules/index\.yaml: a: scenarios: gone not in .*scenarios"):
        mutant_files.load_rules(d, scenarios)
    _index(tmp_path, "- {id: a, rule: r, source: s, scenarios: [there]}\n")
    assert mutant_files.load_rules(d, scenarios)[0].scenarios == ["there"]


@pytest.mark.parametrize("fields", [
    "no_mutant: x, mutant_due: y",
    "scenarios: [there], no_scenario: y",
    "scenarios: [there, there]",
    "scenarios: [there], scenario_due: y",
    "no_scenario: x, scenario_due: y",
])
def test_a_rule_gives_one_answer_each(tmp_path, fields):
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "there.yaml").write_text("id: there\n")
    d = _index(tmp_path, f"- {{id: a, rule: r, source: s, {fields}}}\n")
    with pytest.raises(KitError, match=r"rules/index\.yaml: a: (no_mutant and mutant_due|scenarios|scenario_due)"):
        mutant_files.load_rules(d, scenarios)


def test_every_release_switch_and_queueing_hint_has_a_rule():
    sources = " ".join(r.source for r in RULES)
    switches = [name for name, v in vars(release).items() if isinstance(v, release.Switch)]
    assert len(switches) == len(release.SWITCHES)
    assert [s for s in switches if s not in sources] == []
    hints = [f.__name__ for f in requeue.HINTS.values()]
    events = ["assigned_pod_gone", "nominated_pod_deleted", "nomination_changed", "pod_bound", "woken_by", "NODE_ONLY"]
    assert [h for h in hints + events if h not in sources] == []


def test_every_mutant_names_a_known_rule(tmp_path):
    for m in MUTANTS:
        assert set(m.rules) <= {r.id for r in RULES}, m.id
    _index(tmp_path, "- {id: a, rule: r, source: s}\n")
    bad = MUTANTS[0].model_copy(update={"rules": ["nosuch"]})
    with pytest.raises(KitError, match=r"\.yaml: rules: nosuch not in"):
        mutant_files.check_named([bad], tmp_path)


def test_the_table_reads_the_last_kill_matrix_from_its_record():
    """The verdicts come from runs.json (the runs as data), not from the printed matrix's text."""
    runs = {"queue-lower-priority-first": [Run("queue-lower-priority-first", "plugins",
                                                      failed=["nonpreempting-user-story"]).to_json()],
            "queue-le-precheck-inverted": [Run("queue-le-precheck-inverted", "plugins").to_json(),
                                           Run("queue-le-precheck-inverted", "upstream").to_json()],
            "group-rank-ignored": [Run("group-rank-ignored", "upstream", kit_errors=["podgroup-x"]).to_json()]}
    verdicts = verdicts_from_runs({"runs": runs})
    assert verdicts == {"queue-lower-priority-first": "killed by nonpreempting-user-story",
                        "queue-le-precheck-inverted": "SURVIVED",
                        "group-rank-ignored": "INCONCLUSIVE (failed without evidence: podgroup-x (kit error))"}
    lines = mutant_rules.table(RULES, MUTANTS, verdicts)
    assert any(ln.split()[:2] == ["queue-priority-order", "queue-lower-priority-first"] and
               ln.endswith("killed by nonpreempting-user-story") for ln in lines)
    assert any(ln.startswith("admission-limits") and "no mutant: " in ln for ln in lines)


def test_the_table_shows_each_rules_scenarios_and_says_no_scenario_plainly():
    rules = [mutant_files.Rule(id="shown", rule="r", source="s", no_mutant="n", scenarios=["preempt-basic"]),
             mutant_files.Rule(id="bare", rule="r", source="s", mutant_due="fit.go Filter"),
             mutant_files.Rule(id="cannot", rule="r", source="s", no_mutant="n", no_scenario="a race")]
    lines = mutant_rules.table(rules, [], {})
    assert any(ln.split() == ["shown", "scenarios:", "preempt-basic"] for ln in lines)
    assert any(ln.startswith("bare ") and ln.endswith("scenarios: NO SCENARIO") for ln in lines)
    assert any(ln.startswith("bare ") and "MUTANT DUE: fit.go Filter" in ln for ln in lines)
    assert any(ln.startswith("cannot ") and ln.endswith("no scenario: a race") for ln in lines)
    assert lines[-1] == "3 rules: 0 NO MUTANT, 1 with a mutant due, 0 with a scenario due, 1 NO SCENARIO (bare)"


def test_a_rule_whose_scenario_is_due_says_what_it_needs():
    due = mutant_files.Rule(id="a", rule="r", source="s", no_mutant="n", scenario_due="a quiet cluster")
    assert mutant_rules.scenarios_line(due) == "SCENARIO DUE: a quiet cluster"
    assert mutant_rules.table([due], [], {})[-1] == "1 rules: 0 NO MUTANT, 0 with a mutant due, 1 with a scenario due, 0 NO SCENARIO"


def test_the_kill_matrix_runs_a_mutants_rule_scenarios_first():
    from harness.formats.mutants import load_all
    from harness.mutants.matrix import rule_scenarios, targeted

    shows = rule_scenarios()
    m = next(m for m in load_all() if m.id == "queue-scale-down-not-registered")
    assert targeted(m, shows) == ["queue-pod-resized-down-retries-pod-parked-for-cpu"]
    # Every scenario a rule names is a catalogue file, so each -k term selects at least that one.
    assert all(targeted(m, shows) for m in load_all() if any(shows.get(r) for r in m.rules))


def test_each_baseline_files_its_evidence_under_a_name_of_its_own():
    from harness.formats.mutants import MUTANTS_RELEASE, load_all
    from harness.mutants.matrix import baseline_label

    # The short- and default-flush baselines of one release once wrote into one folder.
    wheres = {m.where for m in load_all()} | {(MUTANTS_RELEASE, "", "default", "local"),
                                              (MUTANTS_RELEASE, "", "short", "kind")}
    labels = [baseline_label(w) for w in wheres]
    assert len(set(labels)) == len(labels)
    assert baseline_label((MUTANTS_RELEASE, "", "short", "local")) == "baseline"
    assert baseline_label(("1.37", "podgroup", "short", "local")) == "baseline-1.37-podgroup"
    assert baseline_label(("1.35", "eviction", "short", "kind")) == "baseline-1.35-eviction-kind"


def test_a_kubelet_mutant_runs_on_kind_with_its_kubelet_in_place_of_the_workers(tmp_path, monkeypatch):
    """The catalogue command a kubelet mutant's run gets: kind, and the binary as the workers' kubelet."""
    from harness.formats.mutants import load_all
    from harness.host import lifecycle
    from harness.mutants import matrix

    m = next(m for m in load_all() if m.component == "kubelet")
    assert m.where[3] == "kind"
    seen: list[list[str]] = []
    monkeypatch.setattr(lifecycle, "run_child", lambda cmd, **kw: seen.append(cmd) or 5)
    run = matrix.run_catalogue("upstream", tmp_path / "kubelet", tmp_path, m.id, True, where=m.where)
    cmd = seen[0]
    assert cmd[cmd.index("--cluster") + 1] == "kind"
    assert cmd[cmd.index("--kubelet-binary") + 1] == str(tmp_path / "kubelet")
    assert "--scheduler-binary" not in cmd
    assert run.error  # no report: an error, never a kill


def test_a_baseline_with_a_test_the_kit_could_not_finish_or_none_passed_voids_the_matrix(tmp_path, monkeypatch):
    """A kind baseline whose cluster never came up errored its one test and passed none: the
    mutants were then judged against nothing (a run of 2026-11-27)."""
    import pytest

    from harness.errors import KitError
    from harness.formats.mutants import load_all
    from harness.mutants import matrix
    from harness.mutants.runs import Run

    m = next(m for m in load_all() if m.component == "kubelet")
    monkeypatch.setattr(matrix, "binary", lambda m, b: tmp_path / "bin")
    for baseline in (Run("baseline", "upstream", kit_errors=["preempt-ignores-qos"]), Run("baseline", "upstream")):
        monkeypatch.setattr(matrix, "run_catalogue", lambda *a, baseline=baseline, **kw: baseline)
        with pytest.raises(KitError, match="baseline is not green"):
            matrix.kill_matrix([m], ["upstream"], 1, False, tmp_path, print_=lambda s: None)


def test_on_kind_the_catalogue_includes_the_real_kubelet_scenarios(tmp_path, monkeypatch):
    """Node pressure scenarios run on the workers' kubelets, a module of their own: without it a
    kubelet mutant's -m eviction selected no pressure scenario at all."""
    from harness.formats.mutants import load_all
    from harness.host import lifecycle
    from harness.mutants import matrix

    m = next(m for m in load_all() if m.component == "kubelet")
    seen: list[list[str]] = []
    monkeypatch.setattr(lifecycle, "run_child", lambda cmd, **kw: seen.append(cmd) or 5)
    matrix.run_catalogue("upstream", None, tmp_path, "baseline-kind", False, where=m.where)
    matrix.run_catalogue("upstream", None, tmp_path, "baseline", False)
    assert any(arg.endswith("test_real_kubelets.py") for arg in seen[0])
    assert not any(arg.endswith("test_real_kubelets.py") for arg in seen[1])


def test_without_a_docker_engine_the_kubelet_mutants_are_not_run_and_say_why(monkeypatch):
    import pytest

    from harness.cli import mutants as cli
    from harness.clusters import kind
    from harness.errors import KitError
    from harness.formats.mutants import load_all

    def no_docker(*a, **k):
        raise KitError("--cluster kind needs a running Docker engine: `docker info` failed: no answer")

    monkeypatch.setattr(kind, "preflight", no_docker)
    mutants = load_all()
    why, ids = cli._without_kind(mutants, asked=False)
    assert "Docker" in why and set(ids) == {m.id for m in mutants if m.component == "kubelet"} and ids
    with pytest.raises(KitError, match="--mutant: a kubelet mutant runs on kind: .*Docker"):
        cli._without_kind([m for m in mutants if m.component == "kubelet"], asked=True)
    assert cli._without_kind([m for m in mutants if m.component != "kubelet"], asked=False) == ("", [])
