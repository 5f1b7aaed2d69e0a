"""The Karmada checker without a control plane: recorded bindings held against the model."""

import pytest

from harness.formats.bindings import CATALOGUE, load_dir
from harness.run.bindings.check import compare, differences
from harness.run.bindings.history import BindingLog, Observed
from reference.binding.predict import UNSET, BindingExpectation, StepExpectation, predict
from tests.run.test_binding_history import binding

SCHEDULED_10 = BindingExpectation("scheduled", 10, frozenset({(("m1", 1),)}), "room on m1")


def test_an_observation_the_model_allows_is_no_difference():
    obs = Observed("scheduled", 10, (("m1", 1),), "True")
    assert compare("web", SCHEDULED_10, obs, obs.clusters) is None


def test_each_difference_is_named_with_the_models_reason():
    obs = Observed("scheduled", 7, (("m2", 1),), "True")
    d = compare("web", SCHEDULED_10, obs, obs.clusters)
    assert d == ("web (web-deployment): priority 7, expected 10; clusters {'m2': 1}, expected {'m1': 1} "
                 "[room on m1]")


def test_a_state_difference_and_an_absent_priority():
    want = BindingExpectation("waiting", None, frozenset({()}), "no class yet")
    assert compare("web", want, Observed("waiting", None, (), ""), ()) is None
    d = compare("web", want, Observed("scheduled", 5, (("m1", 1),), "True"), (("m1", 1),))
    assert d == ("web (web-deployment): state scheduled, expected waiting; priority 5, expected absent; "
                 "clusters {'m1': 1}, expected {} [no class yet]")


def test_an_absent_binding_checks_nothing_but_its_absence():
    want = BindingExpectation("absent", UNSET, None, "class missing")
    assert compare("web", want, Observed("absent", None, (), ""), ()) is None
    assert "state waiting, expected absent" in compare("web", want, Observed("waiting", 3, (), ""), ())


def test_differences_reads_the_history_and_the_order():
    log = BindingLog()
    log.add("ADDED", binding("low", 8, priority=1, clusters={"m1": 1}))
    log.add("ADDED", binding("high", 9, priority=10, clusters={"m1": 1}))
    want = StepExpectation(3, {"high": SCHEDULED_10}, frozenset({("high", "low")}))
    diffs = differences(log, want, ["high", "low"], lambda obs: obs.clusters)
    assert diffs == ["first scheduled in the order low < high, expected high < low"]


def test_cluster_names_are_translated_before_comparing():
    log = BindingLog()
    log.add("ADDED", binding("high", 9, priority=10, clusters={"member-a": 1}))
    want = StepExpectation(0, {"high": SCHEDULED_10}, None)
    back = {"member-a": "m1"}
    assert differences(log, want, [], lambda obs: tuple((back[c], n) for c, n in obs.clusters)) == []


@pytest.mark.parametrize("scenario", load_dir(CATALOGUE), ids=lambda s: s.id)
def test_an_empty_history_fails_every_expect_that_wants_a_binding(scenario):
    # The checker is no rubber stamp: with nothing recorded, only "absent" may pass.
    for want in predict(scenario):
        diffs = differences(BindingLog(), want, list(want.bindings), lambda obs: obs.clusters)
        wanting = [a for a, e in want.bindings.items() if e.state != "absent"]
        assert len([d for d in diffs if not d.startswith("first scheduled")]) == len(wanting)
