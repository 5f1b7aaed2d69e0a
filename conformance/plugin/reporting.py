"""What a run reports besides pass and fail: per-scenario durations in JUnit, timings, the release matrix."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest

from harness.run.verdict import verdict
from conformance.plugin.state import RUN


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """A scenario test's duration (JUnit's time) is its scenario's, not the shared batch's."""
    outcome = yield
    report = outcome.get_result()
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "scenario" not in params:
        return
    if report.when == "setup":
        report.duration = 0.0  # the batch of every scenario runs inside the first one's setup
    elif report.when == "call":
        batch = item.funcargs.get("batch")
        result = batch.results.get((params["scenario"].id, params.get("copy", 0))) if batch is not None else None
        if result is not None:
            report.duration = result.seconds


def cell(result, batch) -> str:
    """A matrix cell: the verdict's name, or "-" for a scenario the target did not run."""
    return "-" if result is None else verdict(result, batch.build, batch.release).value


def release_matrix(batches: dict) -> list[str]:
    """Scenario x (build@release): pass, FAIL, fault (a known scheduler race, outcome as
    specified), differs (specified for another build or release, as expected); then each column's
    wall time."""
    targets = list(batches)
    ids = sorted({sid for b in batches.values() for sid, _ in b.results})
    width = max([len(i) for i in ids] + [8])
    cols = [max(len(t), 7) for t in targets]
    lines = [" ".join([f"{'scenario':<{width}}"] + [f"{t:<{w}}" for t, w in zip(targets, cols)])]
    for sid in ids:
        cells = [cell(batches[t].results.get((sid, 0)), batches[t]) for t in targets]
        lines.append(" ".join([f"{sid:<{width}}"] + [f"{c:<{w}}" for c, w in zip(cells, cols)]))
    lines.append(" ".join([f"{'wall time':<{width}}"] + [f"{batches[t].wall / 60:.1f} min".ljust(w)
                                                          for t, w in zip(targets, cols)]))
    return lines


def write_matrix(lines: list[str], artifacts: Path) -> Path:
    artifacts.mkdir(parents=True, exist_ok=True)
    out = artifacts / "release-matrix.txt"
    out.write_text("\n".join(lines) + "\n")
    return out


TIMINGS_FILE = "preemption-timings.json"


def latency_lines(records: list[dict]) -> list[str]:
    """Per build: how many preemptions, and the median and worst time from the preemptor's
    creation to its binding (and to its nomination), over those that got that far."""
    lines = []
    for build in sorted({r["build"] for r in records}):
        mine = [r for r in records if r["build"] == build and "error" not in r]
        bound = sorted(r["bound"] for r in mine if r.get("bound") is not None)
        nominated = sorted(r["nominated"] for r in mine if r.get("nominated") is not None)
        if not mine:
            continue
        line = f"[{build}] {len(mine)} preemptions"
        if nominated:
            line += f"; created to nominated: median {statistics.median(nominated):.2f} s, worst {nominated[-1]:.2f} s"
        if bound:
            line += f"; created to bound: median {statistics.median(bound):.2f} s, worst {bound[-1]:.2f} s"
        lines.append(line)
    return lines


def write_timings(records: list[dict], artifacts: Path) -> Path:
    artifacts.mkdir(parents=True, exist_ok=True)
    out = artifacts / TIMINGS_FILE
    out.write_text(json.dumps(records, indent=1) + "\n")
    return out


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    state = config.stash.get(RUN, None)
    if state is None:
        return
    for line in state.timing_lines:
        terminalreporter.write_line(line)
    if state.preemptions:
        for line in latency_lines(state.preemptions):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"(each preemption's phases in {write_timings(state.preemptions, state.options.artifacts)})")
    if state.karmada_timings:
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in state.karmada_timings.items() if k != "down")
        terminalreporter.write_line(f"[karmada] control plane: {parts}; scenarios one after another: "
                                    f"{state.karmada_seconds:.1f} s")
    clusters = state.local_clusters
    if clusters is not None and state.options.k8s_version and clusters.running:
        lines = release_matrix({t: clusters.running[t] for t in state.targets if t in clusters.running})
        terminalreporter.write_sep("=", "scenario x release")
        for line in lines:
            terminalreporter.write_line(line)
        written = write_matrix(lines, state.options.artifacts)
        terminalreporter.write_line(f"(also in {written})")
    if clusters is not None and state.longest:
        wall = time.monotonic() - clusters.started
        terminalreporter.write_line(
            f"[run] {wall:.1f} s from collection to the end, {wall / state.longest:.2f}x the longest scenario "
            f"({state.longest:.1f} s); peak memory of the kit and its clusters {clusters.peak_rss() / 2**30:.1f} GiB")
