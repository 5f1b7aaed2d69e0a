"""Which scenarios the runner gives a cluster of their own (harness.placement)."""

from pathlib import Path

from harness.run.pods.placement import why_alone
from harness.formats.pods import load

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_an_outcome_decided_by_the_order_of_pods_woken_together_needs_a_quiet_cluster_even_if_not_declared():
    s = load(SCENARIOS / "queue-equal-priority-first-come.yaml").model_copy(update={"alone": False})
    assert "queue order among" in why_alone(s, "upstream")


def test_a_declared_alone_scenario_stays_alone():
    s = load(SCENARIOS / "admission-global-default-applies.yaml")
    assert why_alone(s, "plugins") == "declared alone"


def test_an_ordinary_preemption_shares_the_cluster():
    s = load(SCENARIOS / "preempt-victims-latest-started-first.yaml")
    assert why_alone(s, "plugins") == ""
