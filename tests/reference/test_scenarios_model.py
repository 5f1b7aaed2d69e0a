"""Every scenario's hand-written expectations, checked against the model (no cluster).

This checks the model against a human reading of the specs; the conformance
suite then checks real schedulers against the model.
"""

from pathlib import Path

import pytest

from harness.run.pods.expectation import check_expect, model_messages, model_priorities, model_rejections, simulate
from harness import flush as flush_
from harness.formats.pods import load_all
from harness.targets import BUILDS
from reference import podgroup
from reference.release import DEFAULT_RELEASE, RELEASES, in_range
from reference.scheduler import view

SCENARIOS = load_all(Path(__file__).resolve().parents[2] / "scenarios")


def _mismatches(scenario, build, release=DEFAULT_RELEASE, flush=flush_.SHORT):
    worlds = simulate(scenario, build, release=release, flush=flush)
    out = []
    for i, (step, world) in enumerate(zip(scenario.steps, worlds[1:])):
        if step.expect is not None:
            out += [(i, m) for m in check_expect(step.expect, view(world), model_rejections(world),
                                                 model_priorities(world), model_messages(world))]
    return out, worlds[-1].log


@pytest.mark.parametrize("flush", [flush_.SHORT, flush_.RELEASE_DEFAULT], ids=["short-flush", "release-flush"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_model_meets_the_scenario_expectations_on_every_release_it_specifies(scenario, flush):
    """At the kit's short flush interval and at the release's own: a file is right at both."""
    for build in scenario.builds:
        for release in [r for r in RELEASES if in_range(r, scenario.releases_of(build))]:
            mismatches, log = _mismatches(scenario, build, release, flush)
            assert not mismatches, (f"[{build} {release}] " + "; ".join(f"step {i}: {m}" for i, m in mismatches)
                                    + "\n" + "\n".join(log))


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.releases], ids=lambda s: s.id)
def test_release_specific_scenarios_tell_the_releases_apart(scenario):
    # A scenario limited to some releases must fail on the others, or it proves nothing about them.
    for build in scenario.builds:
        for release in [r for r in RELEASES if not in_range(r, scenario.releases_of(build))]:
            if scenario.podGroups and not podgroup.enabled(release, scenario.cluster_settings().gates):
                continue  # a release without pod groups never runs it: the run reports it not run
            mismatches, _ = _mismatches(scenario, build, release)
            assert mismatches, f"[{build}] {scenario.id} passes on Kubernetes {release} too; widen its releases"


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if set(s.builds) != set(BUILDS)],
                         ids=lambda s: s.id)
def test_build_specific_scenarios_tell_the_builds_apart(scenario):
    # A scenario limited to one build must fail for the other, or it proves nothing about it.
    other = (set(BUILDS) - set(scenario.builds)).pop()
    mismatches, _ = _mismatches(scenario, other, scenario.semantics(scenario.builds[0])[1])
    assert mismatches, f"{scenario.id} passes under {other} semantics too; list both builds"


def test_catalogue_covers_every_area():
    from harness.formats.pods import AREAS

    covered = {a for s in SCENARIOS for a in s.areas}
    assert covered == set(AREAS)
    assert len(SCENARIOS) >= 40


def test_every_scenario_names_its_spec_and_has_an_expectation():
    for s in SCENARIOS:
        assert s.spec.strip()
        assert any(step.expect for step in s.steps), s.id
