"""Shards' results into the report one machine would print, and which shard ran what, for how long.

Each folder given is searched for what the campaigns leave: pytest's JUnit files (read by
``harness.run.results``), a kill matrix's ``runs.json``, an explorer's ``summary-seed*.json`` with its
divergence files, a release matrix's ``release-matrix.json``, pytest-split's durations, and each
shard's record (``harness.shards.split.record``). The kill matrix and the explorer's summary are
printed by the same functions a single run uses (``harness.mutants.runs.summary``,
``Summary.lines``, ``harness.run.pods.verdict.matrix_lines``), so a merge cannot drift from them.

A merge also checks what one machine could not get wrong: a shard missing or run twice, a test
or a matrix cell reported by two shards, shards run with different options. Any of these is a
problem, and the merge fails even if every verdict passed.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import KitError
from harness.run import results
from harness.run.results import Outcome

RUNS = "runs.json"  # harness/cli/mutants.py
MATRIX_DATA = "release-matrix.json"  # conformance/plugin/reporting.py
CONFORMANCE_RECORD = "shard-conformance.json"  # conformance/plugin/sharding.py
DURATIONS = (".test_durations", "test_durations.json")  # pytest-split's default name, and a visible one
MERGED = "shards.json"  # in a merge's output folder, which a later merge skips


@dataclass
class Found:
    records: list[tuple[Path, dict]] = field(default_factory=list)
    junit: list[Path] = field(default_factory=list)
    kill: list[tuple[Path, dict]] = field(default_factory=list)
    explore: list[tuple[Path, dict]] = field(default_factory=list)
    matrices: list[tuple[Path, dict]] = field(default_factory=list)
    durations: list[Path] = field(default_factory=list)


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    failed: bool = False  # a verdict a single run would exit 1 on

    def section(self, title: str, lines: list[str]) -> None:
        self.lines += ["", f"== {title} ==", *lines]


def _json(path: Path, key: str | None = None) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise KitError(f"{path}: cannot be read as JSON: {e}") from None
    if key is not None and not (isinstance(data, dict) and key in data):
        raise KitError(f"{path}: no {key!r}: not written by this kit's shards (an older run?)")
    return data


def find(dirs: list[Path], skip: Path | None = None) -> Found:
    """Every result under ``dirs``, but none under ``skip`` (an earlier merge's output)."""
    found = Found()
    files = []
    for d in dirs:
        if not d.is_dir():
            raise KitError(f"{d}: no such folder (give each shard's results folder)")
        files += sorted(p for p in d.rglob("*") if p.is_file()
                        and not (skip is not None and skip.resolve() in p.resolve().parents))
    # An earlier merge's output (it holds shards.json) would count every test twice.
    merged = {p.parent for p in files if p.name == MERGED}
    files = [p for p in files if not any(m == p.parent or m in p.parents for m in merged)]
    # A kill matrix's folder also holds each mutant run's own JUnit and release matrix: those are
    # the kill matrix's evidence, not the suite's results, and every shard's runs repeat the same cells.
    kill_dirs = {p.parent for p in files if p.name == RUNS}

    def inside_kill(p: Path) -> bool:
        return any(k in p.parents for k in kill_dirs)

    for p in files:
        if p.name == RUNS:
            data = _json(p, "shard")
            found.kill.append((p, data))
            found.records.append((p, data["shard"]))
        elif p.name.startswith("summary-seed") and p.suffix == ".json":
            data = _json(p, "shard")
            found.explore.append((p, data))
            found.records.append((p, data["shard"]))
        elif p.name == CONFORMANCE_RECORD:
            found.records.append((p, _json(p)))
        elif p.name == MATRIX_DATA and not inside_kill(p):
            found.matrices.append((p, _json(p)))
        elif p.name in DURATIONS:
            found.durations.append(p)
        elif p.suffix == ".xml" and not inside_kill(p) and results.is_junit(p):
            found.junit.append(p)
    return found


NOUN = {"conformance": "tests", "mutants": "mutants", "explore": "draws"}


def _names(items: list[str], most: int = 6) -> str:
    if not items:
        return "nothing"
    return ", ".join(items[:most]) + (f", ... ({len(items) - most} more)" if len(items) > most else "")


def shards(found: Found, report: Report) -> list[dict]:
    """Which shard ran what and how long it took; a shard missing, run twice or of another N is a problem."""
    lines, table = [], []
    by_campaign: dict[str, list[tuple[Path, dict]]] = {}
    for path, rec in found.records:
        by_campaign.setdefault(rec["campaign"], []).append((path, rec))
    for campaign, recs in sorted(by_campaign.items()):
        counts = sorted({r["count"] for _, r in recs})
        if len(counts) > 1:
            report.problems.append(f"{campaign}: shards of different splits ({', '.join(map(str, counts))})")
        seen: dict[int, int] = {}
        for path, r in sorted(recs, key=lambda pr: pr[1]["index"]):
            seen[r["index"]] = seen.get(r["index"], 0) + 1
            lines.append(f"{campaign} shard {r['index']}/{r['count']} on {r['host']}, started {r['started']}: "
                         f"{len(r['ran'])} {NOUN.get(campaign, 'items')} in {r['seconds'] / 60:.1f} min: {_names(r['ran'])}  ({path})")
            table.append({**r, "file": str(path)})
        for n in counts:
            missing = [i for i in range(1, n + 1) if i not in seen]
            if missing:
                report.problems.append(f"{campaign}: shard(s) {', '.join(f'{i}/{n}' for i in missing)} missing")
        twice = [i for i, k in seen.items() if k > 1]
        if twice:
            report.problems.append(f"{campaign}: shard(s) {', '.join(map(str, twice))} found more than once")
        secs = [r["seconds"] for _, r in recs]
        lines.append(f"{campaign}: {len(recs)} shard(s), the slowest {max(secs) / 60:.1f} min, "
                     f"{sum(secs) / 60:.1f} min of shard time in all")
    report.section("shards", lines or ["(no shard records found)"])
    return table


def junit(paths: list[Path], out: Path, report: Report) -> None:
    """The JUnit files as one (``junit.xml``) and pytest's summary line over all of them."""
    where: dict[tuple[str, str], Path] = {}
    counts = dict.fromkeys(("failed", "passed", "skipped", "xfailed", "errors"), 0)
    bad, lines = [], []
    for p in paths:
        run = results.read(p)
        for case in run.cases:
            key = (case.classname, case.name)
            if key in where:
                report.problems.append(f"{key[0]}::{key[1]} ran in two shards ({where[key]}, {p})")
            where[key] = p
            counts[COUNTED[case.outcome]] += 1
            if case.failed:
                bad.append(f"{'FAILED' if case.outcome is Outcome.FAILED else 'ERROR'} {key[0]}::{key[1]} - "
                           f"{case.message.splitlines()[0] if case.message else ''}")
        lines.append(f"{p}: {len(run.cases)} tests, {run.seconds:.0f} s")
    out.mkdir(parents=True, exist_ok=True)
    results.write_merged(paths, out / "junit.xml")
    tally = ", ".join(f"{n} {k if n != 1 or k != 'errors' else 'error'}" for k, n in counts.items() if n)
    lines += bad + [f"{tally or 'no tests'} (over {len(paths)} JUnit file(s); merged in {out / 'junit.xml'})"]
    report.failed |= bool(counts["failed"] or counts["errors"])
    report.section("conformance (JUnit)", lines)


# pytest's summary words for each outcome, as its last line counts them.
COUNTED = {Outcome.FAILED: "failed", Outcome.PASSED: "passed", Outcome.SKIPPED: "skipped",
           Outcome.XFAILED: "xfailed", Outcome.ERROR: "errors"}


def kill_matrix(found: list[tuple[Path, dict]], out: Path, report: Report) -> None:
    from harness.formats.mutants import load_all
    from harness.mutants.runs import Run, summary as kill_summary

    options = {json.dumps({k: r["shard"].get(k) for k in ("builds", "full", "only", "skipped")}) for _, r in found}
    if len(options) > 1:
        report.problems.append(f"mutants: shards run with different options: {sorted(options)}")
    runs: dict[str, list] = {}
    lines = []
    for path, data in found:
        rec = data["shard"]
        for r in data["baseline"]:
            b = Run.from_json(r)
            lines.append(f"baseline [{b.build}] of shard {rec['index']}/{rec['count']}: {b.passed} passed, "
                         f"{len(b.failed)} failed in {b.seconds:.0f} s")
        for mid, rs in data["runs"].items():
            if mid in runs:
                report.problems.append(f"mutants: {mid} ran in two shards")
            runs[mid] = [Run.from_json(r) for r in rs]
    ran = {m for _, d in found for m in d["shard"]["ran"]}
    catalogue = load_all()
    unknown = sorted(ran - {m.id for m in catalogue})
    if unknown:
        raise KitError(f"mutants: the shards ran mutants this checkout does not have: {', '.join(unknown)}")
    mutants = [m for m in catalogue if m.id in ran]
    summary, _ = kill_summary(mutants, runs)
    first = found[0][1]["shard"]
    skipped = first.get("skipped") or []
    if skipped:
        summary.append(f"not run, argued equivalent: {', '.join(skipped)}")
    secs = [d["shard"]["seconds"] for _, d in found]
    summary.append(f"wall time: {max(secs) / 60:.1f} min, the slowest of {len(found)} shard(s) "
                   f"({sum(secs) / 60:.1f} min in all) ({len(mutants)} mutants, builds {', '.join(first['builds'])}, "
                   f"{first['jobs']} at a time per shard)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.txt").write_text("\n".join(summary) + "\n")
    report.failed |= any(not m.equivalent and not any(r.killed for r in runs.get(m.id, [])) for m in mutants)
    report.section("kill matrix", lines + [""] + summary + [f"(also in {out / 'matrix.txt'})"])


def explorer(found: list[tuple[Path, dict]], out: Path, report: Report) -> None:
    from harness.explore.campaign import Summary
    from harness.explore.generate import draw_id

    campaigns: dict[tuple, list[tuple[Path, dict]]] = {}
    for path, data in found:
        r = data["shard"]
        campaigns.setdefault((r["seed"], r["draws"], r["release"]), []).append((path, data))
    for (seed, count, release), shard_data in sorted(campaigns.items()):
        ran = [i for _, d in shard_data for i in d["shard"]["ran"]]
        missing = sorted({draw_id(seed, i) for i in range(count)} - set(ran))
        if missing:
            report.problems.append(f"explore seed {seed}: {len(missing)} draw(s) no shard ran: {_names(missing)}")
        lines = [f"./kit explore --count {count} --seed {seed} on Kubernetes {release}: {count} scenarios drawn"]
        builds: dict[str, Summary] = {}
        for path, data in shard_data:
            for s in map(Summary.from_json, data["summaries"]):
                total = builds.setdefault(s.build, Summary(s.build))
                for k in ("scenarios", "steps", "agreed", "midway", "known_faults"):
                    setattr(total, k, getattr(total, k) + getattr(s, k))
                total.seconds = max(total.seconds, s.seconds)  # the shards ran side by side
                total.divergences += s.divergences
                for k, n in s.events.items():
                    total.events[k] = total.events.get(k, 0) + n
                _copy_divergences(path.parent / s.build, out / "explore" / s.build, s)
        for s in builds.values():
            s.divergences.sort(key=lambda d: d.shrunk["id"])  # a single run lists them in draw order
            lines += s.lines()
            report.failed |= bool(s.divergences)
        (out / "explore").mkdir(parents=True, exist_ok=True)
        (out / "explore" / f"summary-seed{seed}.txt").write_text("\n".join(lines) + "\n")
        report.section(f"explorer, seed {seed}", lines + [f"(also in {out / 'explore'}; divergences' files beside it)"])


def _copy_divergences(src: Path, dest: Path, summary) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for d in summary.divergences:
        for f in src.glob(f"{d.shrunk['id']}.*"):
            shutil.copy2(f, dest / f.name)


def release_matrix(found: list[tuple[Path, dict]], out: Path, report: Report) -> None:
    from harness.run.pods.verdict import Verdict, matrix_lines

    order = next((d["order"] for _, d in found if d.get("order")), [])
    present = [t for _, d in found for t in d["targets"]]
    targets = [t for t in order if t in present] + sorted(set(present) - set(order))
    cells: dict[str, dict[str, str]] = {}
    walls: dict[str, float] = {}
    for path, d in found:
        for sid, row in d["cells"].items():
            for t, v in row.items():
                if t in cells.setdefault(sid, {}):
                    report.problems.append(f"release matrix: {sid} on {t} reported by two shards ({path})")
                cells[sid][t] = v
        for t, w in d["walls"].items():
            walls[t] = max(walls.get(t, 0.0), w)  # the shards ran side by side
    lines = matrix_lines(targets, cells, walls)
    out.mkdir(parents=True, exist_ok=True)
    (out / "release-matrix.txt").write_text("\n".join(lines) + "\n")
    report.failed |= any(v == Verdict.FAIL.value for row in cells.values() for v in row.values())
    report.section("scenario x release", lines + ["(wall time: the slowest shard's, per column; "
                                                  f"also in {out / 'release-matrix.txt'})"])


def durations(paths: list[Path], records: list[tuple[Path, dict]], out: Path, report: Report) -> None:
    """pytest-split's durations from every shard as one file, for the next run's --durations-path.

    Without --clean-durations a shard's file keeps the old figures of the tests it did not run;
    beside a shard's record, only that shard's own tests are taken, so no stale figure wins."""
    own = {path.parent: set(r["ran"]) for path, r in records if r["campaign"] == "conformance"}
    merged: dict[str, float] = {}
    for p in paths:
        mine = own.get(p.parent)
        merged.update({k: v for k, v in _json(p).items() if mine is None or k in mine})
    out.mkdir(parents=True, exist_ok=True)
    (out / ".test_durations").write_text(json.dumps(merged, sort_keys=True, indent=4) + "\n")
    report.section("durations", [f"{len(merged)} tests' durations from {len(paths)} file(s) in "
                                 f"{out / '.test_durations'} (pass it to --durations-path)"])


def merge(dirs: list[Path], out: Path) -> Report:
    found = find(dirs, skip=out)
    if not (found.records or found.junit or found.matrices):
        raise KitError(f"nothing to merge in {', '.join(map(str, dirs))}: no JUnit file, {RUNS}, "
                       f"summary-seed*.json, {MATRIX_DATA} or shard record")
    report = Report()
    table = shards(found, report)
    out.mkdir(parents=True, exist_ok=True)
    (out / MERGED).write_text(json.dumps(table, indent=1) + "\n")
    if found.junit:
        junit(found.junit, out, report)
    if found.kill:
        kill_matrix(found.kill, out, report)
    if found.explore:
        explorer(found.explore, out, report)
    if found.matrices:
        release_matrix(found.matrices, out, report)
    if found.durations:
        durations(found.durations, found.records, out, report)
    if report.problems:
        report.section("problems", report.problems)
    return report
