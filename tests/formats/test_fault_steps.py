"""Faults in the pod format: fault steps, and a during: fault at a named point of a preemption;
a bad one is one clear error naming the file and the step's field."""

import pytest

from harness.formats.pods import load
from tests.formats.files import error_of, with_steps

BASE = """
id: {id}
title: t
spec: s
areas: [preemption]
priorityClasses:
  - {{name: low, value: 1}}
nodes:
  - {{name: n1}}
steps:
"""


def scenario(tmp_path, steps: str, name="case"):
    return with_steps(tmp_path, BASE, steps, name)


def test_a_during_fault_loads_and_makes_the_scenario_need_its_own_scheduler(tmp_path):
    s = load(scenario(tmp_path, """
        - createPod: {name: p, class: low}
          during: {pauseScheduler: 5s, at: victimGone}
        - restartScheduler: kill
    """))
    assert s.faults == ("during.pauseScheduler", "restartScheduler")
    assert s.least_seconds() == 5.0, "a during: pause makes time pass"


@pytest.mark.parametrize("during, wanted", [
    ("{restartScheduler: kill, at: somewhere}", "steps[0].during.at"),
    ("{at: nominated}", "exactly one of restartScheduler, pauseScheduler"),
    ("{restartScheduler: kill, pauseScheduler: 2s, at: nominated}", "exactly one of"),
])
def test_a_bad_during_fault_names_its_field(tmp_path, during, wanted):
    msg = error_of(scenario(tmp_path, f"""
        - createPod: {{name: p, class: low}}
          during: {during}
    """))
    assert "case.yaml" in msg and wanted in msg


@pytest.mark.parametrize("action", ["wait: 2s", "restartScheduler: kill"])
def test_a_during_fault_goes_with_an_action_that_starts_something(tmp_path, action):
    msg = error_of(scenario(tmp_path, f"""
        - {action}
          during: {{restartScheduler: kill, at: nominated}}
    """))
    assert "steps[0]" in msg and "during: goes with an action" in msg


def test_one_failover_per_scenario_and_no_scheduler_restart_after_it(tmp_path):
    msg = error_of(scenario(tmp_path, """
        - failover: kill
        - restartScheduler: kill
        - createPod: {name: p, class: low}
          during: {failover: kill, at: nominated}
    """))
    assert "steps[2]: one failover per scenario" in msg
    assert "steps[1].restartScheduler: after a failover" in msg
    ok = load(scenario(tmp_path, """
        - failover: kill
        - restartApiserver: graceful
    """, name="fine"))
    assert ok.needs_standby and ok.faults == ("failover", "restartApiserver")


def test_a_disconnect_is_a_during_fault_only_once_a_victim_is_gone_and_not_beside_a_failover(tmp_path):
    for point in ("victimMarked", "victimDeleting", "nominated"):
        msg = error_of(scenario(tmp_path, f"""
            - createPod: {{name: p, class: low}}
              during: {{disconnectScheduler: 5s, at: {point}}}
        """, name=f"at-{point}"))
        assert "steps[0].during" in msg and f"only at victimGone, not at {point}" in msg
    gone = load(scenario(tmp_path, """
        - createPod: {name: p, class: low}
          during: {disconnectScheduler: 5s, at: victimGone}
    """, name="gone"))
    assert gone.needs_link and gone.faults == ("during.disconnectScheduler",)
    assert gone.least_seconds() == 5.0, "a during: disconnect makes time pass, as a during: pause does"
    msg = error_of(scenario(tmp_path, """
        - failover: takeLease
        - disconnectScheduler: 5s
    """, name="both"))
    assert "steps[1].disconnectScheduler: not in a scenario with a failover (steps[0])" in msg
    ok = load(scenario(tmp_path, """
        - disconnectScheduler: 12s
        - restartScheduler: graceful
    """, name="fine"))
    assert ok.needs_link and not ok.needs_standby and ok.least_seconds() == 12.0


def test_a_lease_taken_from_a_live_leader_is_a_failover(tmp_path):
    s = load(scenario(tmp_path, """
        - failover: takeLease
    """))
    assert s.needs_standby and s.faults == ("failover",) and not s.needs_link


@pytest.mark.parametrize("during, seconds", [
    ("{restartScheduler: kill, at: victimMarked}", 0.0),
    ("{restartApiserver: graceful, at: victimGone}", 0.0),
    ("{failover: kill, at: victimMarked}", None),  # the lease's
    ("{pauseScheduler: 15s, at: victimDeleting}", 15.0),
    ("{disconnectScheduler: 10s, at: victimGone}", 10.0),
])
def test_the_runner_counts_a_during_fault_as_the_model_does(tmp_path, during, seconds):
    """A step's look is counted from its action's end moved on by modelled_seconds, which must be
    how far fault_on moves the model's clock: a restart takes the model no time, however long the
    real one takes, and a look counted from the real one's end came later than the model's."""
    from harness.clusters.standby import LEASE_SECONDS
    from harness.formats.pod_model import initial_state
    from harness.run.pods.expectation import fault_on, modelled_seconds
    from reference import scheduler as sched

    s = load(scenario(tmp_path, f"""
        - createPod: {{name: p, class: low}}
          during: {during}
    """))
    fault = s.steps[0].during
    from datetime import datetime, timezone

    now = datetime(2026, 11, 29, tzinfo=timezone.utc)
    world = sched.start(initial_state(s, now), "upstream", now)
    moved = (fault_on(world, fault).now - world.now).total_seconds()
    assert modelled_seconds(world, fault) == moved == (LEASE_SECONDS if seconds is None else seconds)
