"""The scheduler's flush interval, as the kit sets and reads it.

A parked pod that no event wakes is retried by the periodic flush once it has been parked
longer than the interval (``--pod-max-in-unschedulable-pods-duration``, a deprecated flag that
cmd/kube-scheduler/app/options/deprecated.go keeps on 1.34-1.37, default 5 min; upstream kept it
because of this role: kubernetes#87850, #110175). The rule is the same at any interval, so the
kit runs its clusters at a short one by default and at the release's own with
``--flush-interval default``; scenarios say their times in terms of it (``flush+30s``,
harness.formats.common.Span). The interval a run judges by is the one the scheduler itself
printed at start (its ``FLAG:`` lines), never the one the kit asked for.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from harness.errors import KitError
from harness.formats.common import SHORTEST_FLUSH, parse_duration
from reference.queue import UNSCHEDULABLE_MAX_STAY

FLAG = "pod-max-in-unschedulable-pods-duration"
# The kit's own default, and the shortest it takes: a step's look may last up to about 30 s
# after its action (its settle, the quiet time, a lagging cluster's 5 s, a retried pod's backoff
# of up to 10 s), and a pod parked a few steps before must not meet the flush inside it; at 20 s
# it did (a backoff scenario's pod retried by the flush mid-scenario, an at-once look that the
# flush answered). The flush's own 30 s period comes on top.
SHORT = SHORTEST_FLUSH
RELEASE_DEFAULT = UNSCHEDULABLE_MAX_STAY
DEFAULT_WORD = "default"

_PRINTED = re.compile(rf'FLAG: --{FLAG}="([^"]*)"')


def parse_option(text: str) -> timedelta | None:
    """``--flush-interval``: a duration of at least SHORT, or "default" (None: the flag not given)."""
    if text.strip() == DEFAULT_WORD:
        return None
    try:
        value = parse_duration(text)
    except ValueError as e:
        raise KitError(f"--flush-interval: {e}, or {DEFAULT_WORD!r} for the release's own (5m)") from None
    if value < SHORT:
        raise KitError(f"--flush-interval: {text!r} is shorter than {SHORT.total_seconds():g}s, which the "
                       "catalogue's times need to stay apart")
    return value


def scheduler_flags(interval: timedelta | None, verbosity: int | None) -> dict[str, str]:
    """The kube-scheduler flags for ``interval`` (None: none), and -v 1 at least, so that the
    scheduler prints the flags it runs with."""
    flags = {"v": str(max(verbosity or 0, 1))}
    if interval is not None:
        flags[FLAG] = f"{int(interval.total_seconds())}s"
    return flags


def printed(log: Path) -> timedelta | None:
    """The interval the scheduler says it runs with (its FLAG line at -v 1), or None when its log
    does not say (not started yet, or a binary that prints no flags)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    m = _PRINTED.search(text)
    if not m:
        return None
    from kubernetes.utils import parse_duration as k8s_duration  # Go's duration syntax: 5m0s

    try:
        return k8s_duration(m.group(1))
    except ValueError:
        return None


def describe(interval: timedelta) -> str:
    """The run header's words: the interval it judges by, and the release's own beside it."""
    def words(t: timedelta) -> str:
        s = int(t.total_seconds())
        return f"{s // 60} min" if s % 60 == 0 and s >= 60 else f"{s} s"
    if interval == RELEASE_DEFAULT:
        return f"flush interval {words(interval)} (the release default)"
    return f"flush interval {words(interval)}; the release default is {words(RELEASE_DEFAULT)}"


__all__ = ["FLAG", "SHORT", "RELEASE_DEFAULT", "parse_option", "scheduler_flags", "printed", "describe"]
