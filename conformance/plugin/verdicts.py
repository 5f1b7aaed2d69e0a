"""A scenario's verdict as a pytest outcome: a pod scenario's (``harness.run.pods.verdict``, the
one rule) and a Karmada scenario's.

pass: the test passes; FAIL: it fails with the scenario's report; differs: a strict expected
difference (xfail) for a scenario specified for another build or release; fault: xfail naming
the known scheduler race; stopped (-x ended the batch at another failure): skipped. A Karmada
scenario passes or fails with its report and where its evidence was kept.
"""

from __future__ import annotations

import pytest

from harness.run.pods.verdict import Verdict, record, verdict

def judge(scenario, batch, copy: int = 0, properties: list | None = None) -> None:
    """The verdict on one scenario's result in a batch: pass, fail, or a named expected difference.

    ``properties`` (the test item's user_properties) receive the verdict as data, which JUnit
    carries as <property> elements: the kill matrix reads them, never the report's wording."""
    build, release = batch.build, batch.release
    result = batch.results[scenario.id, copy]
    v = verdict(result, build, release)
    if properties is not None:
        properties.extend(record(result, build, release))
    if v is Verdict.STOPPED:
        pytest.skip("not run to the end: -x stopped the batch at another scenario's failure")
    if v is Verdict.UNMET:
        pytest.skip(f"not run: {result.unmet}")
    specified = f"{', '.join(scenario.builds)}" + (f", Kubernetes {scenario.releases}" if scenario.releases else "")
    if v is Verdict.FAIL:
        if result.ok:
            # Specified for another build or release, and the build showing the behaviour after all is news.
            pytest.fail(f"unexpected pass: {scenario.id} specifies behaviour of {specified}, "
                        f"and the {build} build on Kubernetes {release} showed it too", pytrace=False)
        pytest.fail(result.report(), pytrace=False)  # a difference, or an error (no evidence of a difference)
    if v is Verdict.DIFFERS:
        pytest.xfail(f"expected difference: the {build} build on Kubernetes {release} does not do what "
                     f"{scenario.id} specifies (for {specified})")
    if v is Verdict.FAULT:
        # The pods ended as specified, but the events show a known scheduler race: reported by
        # name, never counted as a pass (strict=False: it comes and goes).
        if result.explained_by_known_fault:
            pytest.xfail("known scheduler fault of this build and release, which changed the outcome: "
                         + "; ".join(map(str, result.known_faults)) + "\n" + result.report())
        pytest.xfail("known scheduler fault, outcome as specified: " + "; ".join(map(str, result.known_faults)))


def judge_bindings(result, properties: list | None = None) -> None:
    """The verdict on one Karmada scenario's result (``harness.run.bindings.result``); into
    ``properties`` (the test item's user_properties) as data, as ``judge`` records a pod scenario's."""
    if properties is not None:
        properties.extend(result.recorded().properties())
    if result.error:
        pytest.fail(f"{result.scenario.id}: the kit could not run it: {result.error}", pytrace=False)
    if not result.ok:
        pytest.fail(f"{result.report()}\n  the binding history and this report: {result.artifacts}", pytrace=False)
