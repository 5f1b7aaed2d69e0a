"""What a run reports besides pass and fail: per-scenario durations in JUnit, timings, the release
matrix, ``report.html``: every scenario test's verdict linked to its page on the spec site
(written beside it) and to its timeline picture, and the run's summary as a record
(``run-summary.json``: counts, wall and build times, commit, machine; ``harness.run.summary``)."""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path

import pytest

from harness.run import summary
from harness.run.pods.verdict import NOT_RUN, matrix_lines, verdict
from conformance.plugin.state import RUN

SCENARIO_PARAMS = ("scenario", "real_scenario", "binding_scenario")  # the tests that run one scenario each


# (the session's start as a date and on the monotonic clock, the seconds its start-up hooks took:
# the build of everything the run's clusters start, before the first test)
STARTED = pytest.StashKey[tuple[str, float, float]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionstart(session: pytest.Session):
    """When the session started, and how long building took (session.pytest_sessionstart builds)."""
    started = summary.now(), time.monotonic()
    yield
    session.config.stash[STARTED] = (*started, time.monotonic() - started[1])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """A scenario test's duration (JUnit's time) is its scenario's, not the shared batch's."""
    outcome = yield
    report = outcome.get_result()
    params = getattr(getattr(item, "callspec", None), "params", {})
    remember(item, report, params)
    # Pods on kwok nodes (``scenario``, whose batch is ``batch``) or on real kubelets (``real_batch``).
    param = next((p for p in ("scenario", "real_scenario") if p in params), None)
    if param is None:
        return
    if report.when == "setup":
        report.duration = 0.0  # the batch of every scenario runs inside the first one's setup
    elif report.when == "call":
        batch = item.funcargs.get("batch" if param == "scenario" else "real_batch")
        result = batch.results.get((params[param].id, params.get("copy", 0))) if batch is not None else None
        if result is not None:
            report.duration = result.seconds


def not_run_line(not_run: list[tuple[str, str]]) -> str | None:
    """The cells asked for that the run leaves out, for its header and its summary."""
    if not not_run:
        return None
    return "not run: " + "; ".join(f"{target} ({why})" for target, why in not_run)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """What every cluster of the run starts with, beside what the scenarios add."""
    state = config.stash.get(RUN, None)
    if state is None or state.options.karmada:
        return []
    settings = state.options.gates.describe()
    lines = [f"priority-conformance: {', '.join(state.targets)}; feature gates: "
             + (settings or "each release's defaults") + " (a scenario's own gates: come on top, on a cluster of its own)"]
    from harness import flush

    interval = state.options.flush if not (state.options.kind or state.options.kubeconfig) else None
    lines.append("priority-conformance: " + flush.describe(interval or flush.RELEASE_DEFAULT)
                 + ("" if interval or state.options.flush_interval == "default"
                    else " (the kit sets it only on the local clusters it starts)"))
    skipped = not_run_line(state.not_run)
    return lines + ([f"priority-conformance: {skipped}"] if skipped else [])


def remember(item: pytest.Item, report, params: dict) -> None:
    """What the run's report needs of a scenario test and pytest's final report lacks: which
    scenario on which target, and where its timeline picture is (the batch's result knows)."""
    state = item.config.stash.get(RUN, None)
    param = next((p for p in SCENARIO_PARAMS if p in params), None)
    if state is None or param is None or report.when not in ("setup", "call"):
        return
    scenario = params[param]
    key = "batch" if param == "scenario" else "real_batch"
    batch = item.funcargs.get(key) if hasattr(item, "funcargs") else None
    result = batch.results.get((scenario.id, params.get("copy", 0))) if batch is not None else None
    kept = getattr(result, "artifacts", None)  # set where the run kept artifacts (a failure, --timelines)
    picture = kept / TIMELINE if kept is not None else None
    target = params.get("build", "karmada") + (" (real kubelets)" if param == "real_scenario" else "")
    if params.get("copy"):
        target += f" (copy{params['copy']})"
    state.report_tests[item.nodeid] = (scenario.id, target, picture)


class ReportRows:
    """Each scenario test's final outcome (an xfail included, which only the logged report
    carries) as a row of the run's report: its call, or a setup that did not pass."""

    def __init__(self, state) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report) -> None:
        from harness.run.results import Recorded
        from harness.site.report import Row
        from harness.site.runs import outcome_of

        info = self.state.report_tests.get(report.nodeid)
        if info is None or not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        sid, target, picture = info
        xfail = getattr(report, "wasxfail", None)
        crash = getattr(report.longrepr, "reprcrash", None)  # a traceback's last line: what went wrong
        said = (crash.message if crash is not None else report.longrepr[2] if isinstance(report.longrepr, tuple)
                else str(report.longrepr or ""))
        lines = ("" if report.passed else (xfail or said or "")).strip().splitlines()
        self.state.report_rows.append(Row(report.nodeid.rsplit("::", 1)[-1], sid, target,
                                          outcome_of(Recorded.of(report.user_properties).verdict, report.failed,
                                                     report.skipped, xfail),
                                          lines[0][:300] if lines else "",
                                          report.duration if report.when == "call" else 0.0, picture))


TIMELINE = "timeline.png"  # harness.run.pods.timeline.FILE, without importing matplotlib's module for a name


@pytest.hookimpl(trylast=True)  # after options.pytest_configure has made the run's state
def pytest_configure(config: pytest.Config) -> None:
    state = config.stash.get(RUN, None)
    if state is not None:
        config.pluginmanager.register(ReportRows(state), f"priority-conformance-report-{id(state)}")


def write_report(state) -> Path | None:
    """``report.html`` and the spec site in the artifacts folder, for a run with scenario tests.
    A report is never worth a run's result: a failure to write it is a line in the summary."""
    from harness.site import model
    from harness.site.report import REPORT, verdicts, write

    if not state.report_rows or state.options.collect_only:
        return None
    out = state.options.artifacts / REPORT
    rows = sorted(state.report_rows, key=lambda r: (r.scenario, r.target))
    loaded = model.load(list(state.options.scenarios) if state.options.scenarios else None)
    site = model.build(loaded, verdicts(rows, f"this run ({state.run_id})"), runs=f"this run ({state.run_id})")
    return write(rows, out, site, f"run {state.run_id}: {', '.join(state.targets)}")


def cell(result, batch) -> str:
    """A matrix cell: the verdict's name, or "-" for a scenario the target did not run."""
    return NOT_RUN if result is None else verdict(result, batch.build, batch.release).value


def matrix_data(batches: dict) -> dict:
    """The release matrix as data: targets in order, every scenario's verdict per target (one a
    target did not run is left out), each target's wall time. ``release-matrix.json`` holds it,
    so ``./kit merge`` can join the matrices of shards that each ran part of the scenarios."""
    ids = sorted({sid for b in batches.values() for sid, _ in b.results})
    cells = {sid: {t: c for t, b in batches.items() if (c := cell(b.results.get((sid, 0)), b)) != NOT_RUN}
             for sid in ids}
    return {"targets": list(batches), "cells": cells, "walls": {t: b.wall for t, b in batches.items()}}


def release_matrix(batches: dict) -> list[str]:
    """Scenario x (build@release): pass, FAIL, fault (a known scheduler race, outcome as
    specified), differs (specified for another build or release, as expected); then each column's
    wall time."""
    data = matrix_data(batches)
    return matrix_lines(data["targets"], data["cells"], data["walls"])


MATRIX_FILE = "release-matrix.txt"
MATRIX_DATA = "release-matrix.json"


def write_matrix(lines: list[str], artifacts: Path, data: dict | None = None) -> Path:
    artifacts.mkdir(parents=True, exist_ok=True)
    out = artifacts / MATRIX_FILE
    out.write_text("\n".join(lines) + "\n")
    if data is not None:
        (artifacts / MATRIX_DATA).write_text(json.dumps(data, indent=1) + "\n")
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


def targets_of(state) -> tuple[summary.Target, ...]:
    """Each target's scenario tests (a --repeat copy counted with its target), longest scenario,
    batch wall time and cluster bring-up, as far as this kind of run keeps them."""
    rows: dict[str, list] = {}
    for r in state.report_rows:
        rows.setdefault(re.sub(r" \(copy\d+\)$", "", r.target), []).append(r)
    running = state.batches.running if state.batches is not None else {}
    out = []
    for name in [*(t for t in state.targets if t in rows or t in running), *sorted(set(rows) - set(state.targets))]:
        mine = rows.get(name, [])
        longest = max(mine, key=lambda r: r.seconds, default=None)
        batch = running.get(name)
        # A target's own cluster, whatever its kind (real kubelets and Karmada rows are no target).
        cluster = state.clusters.came_up.get(name) if state.clusters is not None and name in state.targets else None
        timings = cluster.timings if cluster is not None else {}
        out.append(summary.Target(
            name, len(mine), longest.scenario if longest else "", round(longest.seconds, 2) if longest else 0.0,
            round(batch.wall, 2) if batch is not None else None,
            round(timings["build"], 3) if "build" in timings else None,
            round(timings["up"], 2) if "up" in timings else None,
            *((quiet.served, quiet.started) if (quiet := getattr(batch, "quiet", None)) is not None else (None, None))))
    return tuple(out)


def run_summary(state, config: pytest.Config, stats: dict, exitstatus: int) -> summary.RunSummary:
    started, t0, build = config.stash.get(STARTED, (summary.now(), time.monotonic(), 0.0))
    commit, changed = summary.commit()
    batches = state.batches
    return summary.RunSummary(
        run_id=state.run_id, started=started, finished=summary.now(), commit=commit, local_changes=changed,
        machine=summary.machine(), args=tuple(config.invocation_params.args), exit_status=int(exitstatus),
        counts=summary.counts(stats), wall_seconds=round(time.monotonic() - t0, 2), build_seconds=round(build, 2),
        targets=targets_of(state), peak_memory_bytes=batches.peak_rss() if batches is not None else None,
        karmada={k: round(v, 2) for k, v in state.karmada_timings.items()},
        junit=str(config.option.xmlpath or ""), builds=summary.builds_since(started),
        venv_seconds=summary.venv_seconds())


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    state = config.stash.get(RUN, None)
    if state is None:
        return
    try:
        written = write_report(state)
        if written is not None:
            terminalreporter.write_line(f"(each scenario's verdict, page and timeline in {written})")
    except Exception as e:  # the verdicts stand without their page
        terminalreporter.write_line(f"report.html not written: {type(e).__name__}: {e}")
    for line in state.timing_lines:
        terminalreporter.write_line(line)
    skipped = not_run_line(state.not_run)
    if skipped:
        terminalreporter.write_line(f"[run] {skipped}")
    if state.preemptions:
        for line in latency_lines(state.preemptions):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"(each preemption's phases in {write_timings(state.preemptions, state.options.artifacts)})")
    if state.karmada_timings:
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in state.karmada_timings.items() if k != "down")
        terminalreporter.write_line(f"[karmada] control plane: {parts}; scenarios one after another: "
                                    f"{state.karmada_seconds:.1f} s")
    early = state.batches
    if early is not None and state.options.k8s_version and early.running:
        batches = {t: early.running[t] for t in state.targets if t in early.running}
        lines = release_matrix(batches)
        terminalreporter.write_sep("=", "scenario x release")
        for line in lines:
            terminalreporter.write_line(line)
        # Every target of the run, in order, so that a merge of shards orders the columns as one run.
        written = write_matrix(lines, state.options.artifacts, {**matrix_data(batches), "order": state.targets})
        terminalreporter.write_line(f"(also in {written})")
    if early is not None and state.longest:
        wall = time.monotonic() - early.started
        terminalreporter.write_line(
            f"[run] {wall:.1f} s from collection to the end, {wall / state.longest:.2f}x the longest scenario "
            f"({state.longest:.1f} s); peak memory of the kit and its clusters {early.peak_rss() / 2**30:.1f} GiB")
    if not state.options.collect_only:
        try:  # a record is never worth a run's result either
            record = run_summary(state, config, terminalreporter.stats, exitstatus)
            if record.venv_seconds is not None:
                terminalreporter.write_line(f"[setup] ./kit made its virtualenv before the run: {record.venv_seconds:.0f} s")
            for b in record.builds:  # a cold run's split: what each build of this run cost
                terminalreporter.write_line(f"[build] {b['module']} ({', '.join(b['binaries'])}): {b['seconds']:.0f} s, "
                                            f"{b['downloads']} modules downloaded, {b['packages']} packages compiled")
            written = record.write(state.options.artifacts)
            terminalreporter.write_line(f"(the run's counts, times, commit and machine in {written})")
        except Exception as e:
            terminalreporter.write_line(f"{summary.FILE} not written: {type(e).__name__}: {e}")
