"""One verdict rule for a pod scenario's result on a build and release.

The test layer, the batch (-x), the release matrix and the explorer all ask it, so a result
means the same everywhere: a scenario specified for another build or release is expected to
differ, and showing the behaviour after all is news.
"""

from __future__ import annotations

from enum import Enum

from harness.run.pods.result import Result
from reference.release import DEFAULT_RELEASE


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "FAIL"  # a difference where none is expected, an error, or an unexpected pass
    FAULT = "fault"  # outcome as specified, but the events show a known scheduler race
    DIFFERS = "differs"  # specified for another build or release, and it does differ: as expected
    STOPPED = "stopped"  # not run to its end (-x, an interrupt): no verdict


def verdict(result: Result, build: str, release: str = DEFAULT_RELEASE) -> Verdict:
    if result.cancelled:
        return Verdict.STOPPED
    if not result.scenario.applies_to(build, release):
        # An error is no evidence of a difference.
        return Verdict.FAIL if (result.ok or result.error) else Verdict.DIFFERS
    if not result.ok:
        return Verdict.FAIL
    return Verdict.FAULT if result.known_faults else Verdict.PASS


def failed(result: Result, build: str, release: str = DEFAULT_RELEASE) -> bool:
    """A verdict against the build."""
    return verdict(result, build, release) is Verdict.FAIL
