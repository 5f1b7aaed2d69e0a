"""One wave read from its recorded history: throughput, the phases' percentiles, the kit's own lag.

The history is the kit's watch (``run.pods.history.PodHistory``), started after the cluster was
filled and before the wave, so it holds every version the API server wrote during the wave, each
with when the kit received it (``seen_at``). The phases are ``run.pods.timings``' (each from the
preemptor's first version): nominated, victims' deletion asked for, victims gone, bound.

The kit's overhead is measured in the same run, two ways:
- ``server_lag``: first version seen minus the preemptor's creationTimestamp. The server stamps
  whole seconds, so one lag is off by up to a second; their median is still a bound on the watch's
  delay at creation.
- bind lag: the bound version seen minus the scheduler's Scheduled event's eventTime, which has
  microseconds and is stamped by the scheduler (same host, same clock) when its binding returned.
  This is the watch's delay in milliseconds: how much of "bound" is the kit's, not the scheduler's.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Iterable, Sequence

from kubernetes import client

from harness.bench.check import PodFact
from harness.errors import KitError
from harness.host.wait import NotYet, wait_for
from harness.kube import SLOT
from harness.run.pods.history import PodLog, Version
from harness.run.pods.timings import PreemptionTiming, preemptions

PHASES = ("nominated", "victims_deleting", "victims_gone", "bound")
GONE_TO_BOUND = "gone_to_bound"
QUANTILES = (50, 90, 99)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100), interpolating linearly between the closest ranks; None if empty."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def percentiles(values: Iterable[float]) -> dict[str, float | None]:
    xs = list(values)
    return {f"p{q}": percentile(xs, q) for q in QUANTILES}


def phase_percentiles(timings: Iterable[PreemptionTiming]) -> dict[str, dict[str, float | None]]:
    """Per phase, p50/p90/p99 over the preemptions that reached it (seconds from creation); and
    ``gone_to_bound``, from the last victim gone to the binding: the scheduler's reaction to the
    freed slot, without the victims' grace period (whose end kwok rounds to the server's whole second)."""
    timings = list(timings)
    out = {ph: percentiles(getattr(t, ph) for t in timings if getattr(t, ph) is not None) for ph in PHASES}
    out[GONE_TO_BOUND] = percentiles(round(t.bound - t.victims_gone, 3) for t in timings
                                     if t.bound is not None and t.victims_gone is not None)
    return out


def throughput(created: Sequence[float], bound: Sequence[float | None]) -> float | None:
    """Preemptors bound per second, from the first one's creation to the last one's binding."""
    done = [b for b in bound if b is not None]
    if not created or not done:
        return None
    span = max(done) - min(created)
    return len(done) / span if span > 0 else None


def median(values: Iterable[float]) -> float | None:
    xs = list(values)
    return statistics.median(xs) if xs else None


# -- reading the history --------------------------------------------------------------


def is_running(pod: client.V1Pod | None) -> bool:
    return (pod is not None and bool(pod.spec.node_name) and pod.status is not None
            and pod.status.phase == "Running" and pod.metadata.deletion_timestamp is None)


def first_seen(log: PodLog, name: str) -> float | None:
    mine = log.of(name)
    return mine[0].seen_at if mine else None


def bound_at(log: PodLog, name: str) -> float | None:
    return next((v.seen_at for v in log.of(name) if v.pod.spec.node_name), None)


def bind_lags(log: PodLog, names: Iterable[str]) -> list[float]:
    """Per preemptor: its bound version seen minus its Scheduled event's eventTime (seconds)."""
    stamps = {e.involved_object.name: e.event_time for e in log.events()
              if e.reason == "Scheduled" and e.involved_object is not None and e.event_time is not None}
    out = []
    for name in names:
        seen, stamp = bound_at(log, name), stamps.get(name)
        if seen is not None and stamp is not None:
            out.append(round(seen - stamp.timestamp(), 4))
    return out


def slots(pod: client.V1Pod) -> int:
    total = 0
    for c in pod.spec.containers or []:
        req = (c.resources.requests or {}) if c.resources else {}
        total += int(req.get(SLOT, 0))
    return total


def facts(log: PodLog) -> dict[str, PodFact]:
    """Every pod of the history at its last version."""
    last: dict[str, Version] = {}
    for v in log.versions:
        last[v.name] = v
    out = {}
    for name, v in last.items():
        p = v.pod
        terminal = p.status is not None and p.status.phase in ("Failed", "Succeeded")
        gone = v.kind == "DELETED" or terminal
        out[name] = PodFact(name=name, priority=p.spec.priority or 0, node=p.spec.node_name or "",
                            running=not gone and is_running(p),
                            deleting=not gone and p.metadata.deletion_timestamp is not None,
                            gone=gone, slots=slots(p))
    return out


def wait_settled(log: PodLog, names: Sequence[str], timeout: float, events_timeout: float = 15.0) -> list[str]:
    """Until every preemptor runs and a Preempted event names each (bounded); the names not running.
    A wave that does not finish is an outcome to report, not an error; a failed watch is an error."""
    def all_running():
        log.check()
        left = sum(1 for n in names if not is_running(log.pod(n)))
        if left:
            raise NotYet(f"{left} of {len(names)} preemptors not running")

    def all_named():
        log.check()
        named = {t.preemptor for t in preemptions(log)}
        left = sum(1 for n in names if n not in named)
        if left:
            raise NotYet(f"{left} of {len(names)} preemptors named by no Preempted event")

    for check, limit, what in ((all_running, timeout, "every preemptor to run"),
                               (all_named, events_timeout, "the Preempted events")):
        try:
            wait_for(check, limit, what, interval=0.25)
        except KitError:
            log.check()  # the watch failed: that is an error, not an outcome
    return [n for n in names if not is_running(log.pod(n))]


def wave_timings(log: PodLog, names: Sequence[str]) -> list[PreemptionTiming]:
    """The phases of each of the wave's preemptions (``run.pods.timings``)."""
    mine = set(names)
    return [t for t in preemptions(log) if t.preemptor in mine]


def wave_figures(log: PodLog, names: Sequence[str], timings: Sequence[PreemptionTiming]) -> dict:
    """Everything the kit measured about one wave, as JSON-ready data."""
    created = [t for t in (first_seen(log, n) for n in names) if t is not None]
    bound = [bound_at(log, n) for n in names]
    done = [b for b in bound if b is not None]
    return {
        "preempted": len(timings),
        "bound": len(done),
        "wave_seconds": round(max(done) - min(created), 3) if created and done else None,
        "throughput": throughput(created, bound),
        "phases": phase_percentiles(timings),
        "server_lag_median": median(t.server_lag for t in timings if t.server_lag is not None),
        "bind_lag_median": median(bind_lags(log, names)),
        "timings": [t.record() for t in timings],
    }


def rss_mb(pids: dict[str, int]) -> dict[str, int]:
    """Resident memory of the cluster's processes (MB), read from /proc; those gone are left out."""
    out = {}
    for name, pid in pids.items():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out[name] = int(line.split()[1]) // 1024
        except (OSError, ValueError, IndexError):
            continue
    return out
