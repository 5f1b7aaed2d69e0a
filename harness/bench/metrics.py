"""The kube-scheduler's own figures, scraped from its /metrics endpoint before and after a wave.

The local cluster's scheduler serves HTTPS on ``LocalCluster.ports["kubeSchedulerPort"]`` with a
certificate it made for itself; kwokctl starts it with /metrics among the paths always allowed,
and scrapes it itself with the cluster's admin client certificate (``pki/admin.crt``), so the kit
does the same: the admin certificate, and no verification of the scheduler's self-signed one.

What is kept (the difference between the two scrapes, so only the wave counts):
- ``scheduler_preemption_attempts_total`` and ``scheduler_preemption_victims`` (how many victims
  each preemption chose);
- ``scheduler_framework_extension_point_duration_seconds{extension_point="PostFilter"}``: the time
  inside preemption's candidate search (its buckets end at about 0.2 s; the mean is exact);
- ``scheduler_scheduling_attempt_duration_seconds`` (one scheduling attempt, by result);
- ``scheduler_pod_scheduling_sli_duration_seconds`` (a pod's first entry into the queue to its
  binding: the scheduler's view of "created to bound"), or, on releases that have it instead,
  ``scheduler_pod_scheduling_duration_seconds``;
- ``scheduler_preemption_goroutines_duration_seconds`` where the release has asynchronous preemption.
"""

from __future__ import annotations

import math
import ssl
import urllib.request
from pathlib import Path
from typing import Iterable

from prometheus_client.parser import text_string_to_metric_families

Key = tuple[str, tuple[tuple[str, str], ...]]  # (sample name, sorted labels)
Snapshot = dict[Key, float]

ATTEMPTS = "scheduler_preemption_attempts_total"
VICTIMS = "scheduler_preemption_victims"
EXTENSION = "scheduler_framework_extension_point_duration_seconds"
ATTEMPT_DURATION = "scheduler_scheduling_attempt_duration_seconds"
SLI = ("scheduler_pod_scheduling_sli_duration_seconds", "scheduler_pod_scheduling_duration_seconds")
GOROUTINES = "scheduler_preemption_goroutines_duration_seconds"


def endpoint(port: int) -> str:
    return f"https://127.0.0.1:{port}/metrics"


def scrape(url: str, pki: Path, timeout: float = 15.0) -> str:
    """The exposition text, fetched with the cluster's admin client certificate."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the scheduler's serving certificate is self-signed
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
        return resp.read().decode()


def parse(text: str) -> Snapshot:
    """Every sample of the exposition, by name and labels."""
    out: Snapshot = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return out


def delta(before: Snapshot, after: Snapshot) -> Snapshot:
    """What grew between two scrapes (counters and histograms; a series new in ``after`` counts whole)."""
    return {k: v - before.get(k, 0.0) for k, v in after.items()}


def total(snap: Snapshot, name: str, **labels: str) -> float | None:
    """The sum of a sample over every series with these labels; None if the scheduler has no such series."""
    found = [v for (n, ls), v in snap.items() if n == name and _matches(ls, labels)]
    return sum(found) if found else None


def _matches(ls: tuple[tuple[str, str], ...], labels: dict[str, str]) -> bool:
    d = dict(ls)
    return all(d.get(k) == v for k, v in labels.items())


def buckets(snap: Snapshot, name: str, **labels: str) -> list[tuple[float, float]]:
    """A histogram's cumulative buckets (upper bound, count), summed over the other labels."""
    sums: dict[float, float] = {}
    for (n, ls), v in snap.items():
        if n == f"{name}_bucket" and _matches(ls, labels):
            le = float(dict(ls)["le"])
            sums[le] = sums.get(le, 0.0) + v
    return sorted(sums.items())


def histogram_quantile(q: float, cumulative: Iterable[tuple[float, float]]) -> float | None:
    """Prometheus' estimate of the q-quantile (0..1) from cumulative buckets: linear within the bucket
    the rank falls in; the highest finite bound if it falls in the +Inf bucket; None if empty."""
    bs = sorted(cumulative)
    if not bs or bs[-1][1] <= 0:
        return None
    rank = q * bs[-1][1]
    lower, below = 0.0, 0.0
    for le, count in bs:
        if count >= rank:
            if math.isinf(le):
                return lower
            if count == below:
                return le
            return lower + (le - lower) * (rank - below) / (count - below)
        lower, below = le, count
    return lower


def histogram(snap: Snapshot, name: str, **labels: str) -> dict | None:
    """count, mean and estimated p50/p99 of one histogram; None if the scheduler has none of it.
    ``top`` is the highest finite bucket: an estimate equal to it means "at least this"."""
    count = total(snap, f"{name}_count", **labels)
    if count is None:
        return None
    bs = buckets(snap, name, **labels)
    finite = [le for le, _ in bs if not math.isinf(le)]
    s = total(snap, f"{name}_sum", **labels) or 0.0
    return {"count": int(count), "mean": s / count if count else None,
            "p50": histogram_quantile(0.5, bs), "p99": histogram_quantile(0.99, bs),
            "top": finite[-1] if finite else None}


def summary(snap: Snapshot) -> dict:
    """The wave's figures from the scheduler itself (``snap``: the difference between two scrapes)."""
    attempts = total(snap, ATTEMPTS)
    sli_name = next((n for n in SLI if total(snap, f"{n}_count") is not None), None)
    return {
        "preemption_attempts": None if attempts is None else int(attempts),
        "victims": _counts(histogram(snap, VICTIMS)),
        "postfilter_seconds": histogram(snap, EXTENSION, extension_point="PostFilter"),
        "attempt_seconds": histogram(snap, ATTEMPT_DURATION),
        "sli_seconds": histogram(snap, sli_name) if sli_name else None,
        "sli_metric": sli_name,
        "preemption_goroutine_seconds": histogram(snap, GOROUTINES),
    }


def _counts(h: dict | None) -> dict | None:
    """A histogram of whole numbers (victims per preemption): its count and mean; interpolated
    quantiles inside buckets of whole numbers would mean nothing."""
    return None if h is None else {"count": h["count"], "mean": h["mean"]}
