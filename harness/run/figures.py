"""The figures the docs quote, generated from a run's own recorded outputs, never typed in.

A conformance run leaves in its artifacts folder ``run-summary.json`` (``harness.run.summary``:
counts, wall and build times, each target's scenarios and bring-up, peak memory, with its commit,
machine and command), ``preemption-timings.json`` (each preemption's phases) and, with
``--junitxml``, its JUnit XML. This reads them and writes the figures as a marked block into
each file given (the README's Figures section, docs/figures.md)::

    python -m harness.run.figures --run artifacts --out README.md --out docs/figures.md

The block carries the record it was rendered from (an HTML comment), so ``--check`` (and
tests/run/test_figures.py) can tell a block the generator wrote from one edited by hand: a figure
changed, or a block without the commit and date of its run. A folder with JUnit XML and no
summary (a run before the summary was recorded) gives its counts, wall time and date, and says
that its commit, machine and command were not recorded.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.errors import KitError
from harness.run import summary
from harness.run import results
from harness.run.summary import Machine, Target

BEGIN = "<!-- figures:begin -->"
END = "<!-- figures:end -->"
RECORD = re.compile(r"^<!-- figures:record (?P<json>.*) -->$")
TIMINGS = "preemption-timings.json"  # conformance/plugin/reporting.py
COMMIT = re.compile(r"commit `[0-9a-f]{7,40}`")
DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
SHOWN = ("passed", "failed", "xfailed", "skipped")  # always in the tally; the other outcomes where not 0


@dataclass(frozen=True)
class Preemptions:
    build: str
    count: int
    bound_median: float | None = None  # seconds from the preemptor's creation to its binding
    bound_worst: float | None = None


@dataclass(frozen=True)
class RunFigures:
    """One run's figures, as read from its folder."""

    folder: str  # as given to --run
    read: tuple[str, ...]  # the files they come from, inside the folder
    counts: dict[str, int]
    date: str  # ISO 8601: the summary's end (UTC), or the JUnit suite's start (as pytest wrote it)
    wall_seconds: float | None
    command: str = ""  # "" where the run did not record it
    commit: str = ""
    local_changes: bool = False
    machine: Machine | None = None
    exit_status: int | None = None
    build_seconds: float | None = None
    targets: tuple[Target, ...] = ()
    peak_memory_bytes: int | None = None
    karmada: dict[str, float] = field(default_factory=dict)
    preemptions: tuple[Preemptions, ...] = ()
    venv_seconds: float | None = None
    builds: tuple[dict, ...] = ()  # summary.RunSummary.builds: each Go build the run made


@dataclass(frozen=True)
class Record:
    """What a block is rendered from: the runs, and when and at which commit it was generated."""

    runs: tuple[RunFigures, ...]
    generated_commit: str
    generated_date: str  # YYYY-MM-DD, UTC
    command: str  # the generator's own command line


# --- reading a run's folder ---------------------------------------------------------------


def command_of(args: tuple[str, ...] | list[str]) -> str:
    """The command a run was made with: ``./kit conformance X`` is ``pytest <the conformance
    package's folder> X`` (``harness/cli/suite.py``), or ``pytest conformance X`` from a checkout."""
    args = list(args)
    if args and Path(args[0]).name == "conformance":
        return shlex.join(["./kit", "conformance", *args[1:]])
    return shlex.join(["python", "-m", "pytest", *args])


def junit_files(folder: Path, named: str = "") -> list[Path]:
    """The JUnit XML the summary names (where it is in ``folder``), else every one in ``folder``."""
    if named:
        mine = [p for p in (Path(named), folder / Path(named).name) if p.is_file() and results.is_junit(p)]
        return mine[:1]
    return [p for p in sorted(folder.glob("*.xml")) if results.is_junit(p)]


def junit_figures(paths: list[Path]) -> tuple[dict[str, int], float, str]:
    """(counts, seconds, the first suite's timestamp) over the JUnit files, as pytest writes them."""
    counts = {k: 0 for k in summary.OUTCOMES}
    seconds, stamps = 0.0, []
    for report in map(results.read, paths):
        for suite in report.suites:
            seconds += suite.seconds
            stamps += [suite.timestamp] if suite.timestamp else []
            for case in suite.cases:
                counts[case.outcome.value] += 1
    return counts, round(seconds, 2), min(stamps, default="")


def preemptions(path: Path) -> tuple[Preemptions, ...]:
    """Per build, the preemptions the run timed and created -> bound over those bound."""
    try:
        records = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise KitError(f"{path}: cannot be read as JSON: {e}") from None
    out = []
    for build in sorted({r.get("build", "?") for r in records}):
        mine = [r for r in records if r.get("build", "?") == build and "error" not in r]
        bound = sorted(r["bound"] for r in mine if r.get("bound") is not None)
        if mine:
            out.append(Preemptions(build, len(mine), round(statistics.median(bound), 3) if bound else None,
                                   round(bound[-1], 3) if bound else None))
    return tuple(out)


def read_run(folder: Path) -> RunFigures:
    """A run's figures from its folder; one KitError when the folder records no run."""
    if not folder.is_dir():
        raise KitError(f"--run {folder}: no such folder")
    found = folder / summary.FILE
    s = summary.read(found) if found.is_file() else None
    junit = junit_files(folder, s.junit if s else "")
    if s is None and not junit:
        raise KitError(f"--run {folder}: no run recorded in it (neither {summary.FILE} nor JUnit XML): "
                       "a conformance run writes them there (--artifacts, --junitxml)")
    timings = folder / TIMINGS
    read = [p.name for p in ([found] if s else []) + junit + ([timings] if timings.is_file() else [])]
    times = preemptions(timings) if timings.is_file() else ()
    if s is None:
        counts, seconds, started = junit_figures(junit)
        return RunFigures(str(folder), tuple(read), counts, started, seconds, preemptions=times)
    return RunFigures(str(folder), tuple(read), dict(s.counts), s.finished, s.wall_seconds, command_of(s.args),
                      s.commit, s.local_changes, s.machine, s.exit_status, s.build_seconds, s.targets,
                      s.peak_memory_bytes, dict(s.karmada), times, s.venv_seconds, tuple(s.builds))


# --- the record, to and from a block ------------------------------------------------------------


def to_json(record: Record) -> str:
    raw = asdict(record)
    for run in raw["runs"]:
        # A cold run's split, left out where the run had none: blocks written before it was recorded read the same.
        for key in ("venv_seconds", "builds"):
            if run.get(key) is None or run.get(key) == ():
                del run[key]
    # No ">" in the comment's text, so no value of it can end the comment.
    return json.dumps(raw, sort_keys=True, separators=(",", ":")).replace(">", "\\u003e")


def from_json(text: str) -> Record:
    raw = json.loads(text)
    runs = tuple(RunFigures(**{
        **r, "read": tuple(r["read"]), "machine": Machine(**r["machine"]) if r["machine"] else None,
        "targets": tuple(Target(**t) for t in r["targets"]),
        "preemptions": tuple(Preemptions(**p) for p in r["preemptions"]),
        "builds": tuple(r.get("builds", ()))}) for r in raw["runs"])
    return Record(runs, raw["generated_commit"], raw["generated_date"], raw["command"])


# --- rendering --------------------------------------------------------------------------------


def duration(seconds: float) -> str:
    """``42.0 s``, ``8 min 35 s``, ``1 h 12 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def tally(counts: dict[str, int]) -> str:
    shown = [k for k in summary.OUTCOMES if k in SHOWN or counts.get(k)]
    return ", ".join(f"{counts.get(k, 0)} {k}" for k in shown)


def when(date: str) -> str:
    """An ISO moment as ``2026-11-27 10:12 UTC`` (a JUnit timestamp has no zone: left as written)."""
    if not date:
        return "date not recorded"
    shown = date.replace("T", " ")[:16]
    return f"{shown} UTC" if date.endswith("Z") else f"{shown} (the run's local time)"


def heading(run: RunFigures) -> str:
    if run.machine is None:
        return (f"**A run recorded only in JUnit XML** (`{run.folder}`), {when(run.date)}: its command, commit and "
                f"machine were not recorded (no {summary.FILE}).")
    m = run.machine
    at = f"at commit `{run.commit[:7]}`" if run.commit else "at a commit not recorded (not run from a git checkout)"
    changes = " with local changes" if run.local_changes else ""
    return (f"**`{run.command}`** {at}{changes}, {when(run.date)}; "
            f"{m.cores} cores, {gib(m.memory_bytes)} memory, {m.system}.")


def target_row(t: Target) -> tuple[str, str]:
    bits = [f"{t.scenario_tests} scenario tests"]
    if t.batch_seconds is not None:
        bits.append(f"all of them in {duration(t.batch_seconds)}")
    if t.longest_scenario:
        bits.append(f"longest `{t.longest_scenario}` {duration(t.longest_seconds)}")
    if t.alone_scenarios is not None and t.alone_clusters is not None:
        bits.append(f"{t.alone_scenarios} of them on clusters of their own, {t.alone_clusters} started for them")
    if t.cluster_up_seconds is not None:
        bits.append(f"its cluster ready in {duration(t.cluster_up_seconds)}")
    if t.cluster_build_seconds is not None:
        bits.append(f"binaries found in {t.cluster_build_seconds:.2f} s")
    return f"`{t.name}`", "; ".join(bits)


def rows(run: RunFigures) -> list[tuple[str, str]]:
    out = [("tests", tally(run.counts) + (f" (exit status {run.exit_status})" if run.exit_status is not None else ""))]
    if run.wall_seconds is not None:
        out.append(("the whole run" + (", build included" if run.build_seconds is not None else ""),
                    duration(run.wall_seconds)))
    if run.venv_seconds is not None:
        out.append(("setting up the kit's virtualenv (`./kit`, before the run)", duration(run.venv_seconds)))
    if run.build_seconds is not None:
        out.append(("building the binaries before the first test", duration(run.build_seconds)))
    for b in run.builds:
        out.append((f"compiling `{b.get('module', '?')}`",
                    f"{duration(float(b.get('seconds', 0)))} ({', '.join(b.get('binaries', ()))}; "
                    f"{b.get('downloads', 0)} modules downloaded, {b.get('packages', 0)} packages compiled)"))
    out += [target_row(t) for t in run.targets]
    if run.peak_memory_bytes:
        out.append(("peak memory of the kit and its clusters", gib(run.peak_memory_bytes)))
    if run.karmada:
        out.append(("the Karmada plane", ", ".join(f"{k} {duration(v)}" for k, v in run.karmada.items())))
    for p in run.preemptions:
        figure = f"{p.count} preemptions"
        if p.bound_median is not None and p.bound_worst is not None:
            figure += f"; created to bound: median {p.bound_median:.2f} s, worst {p.bound_worst:.2f} s"
        out.append((f"`{p.build}` preemptions", figure))
    return out


def render(record: Record) -> str:
    """The block, markers included, from the record alone (so that it can be rendered again)."""
    lines = [BEGIN, f"<!-- figures:record {to_json(record)} -->"]
    if not record.runs:
        lines += ["No recorded run: the figures are removed until a run's own record regenerates them "
                  "(`docs/figures.md` says how)."]
    for run in record.runs:
        lines += ["", heading(run), "", "| what | figure |", "| --- | --- |"]
        lines += [f"| {what} | {figure} |" for what, figure in rows(run)]
        lines.append(f"\nRead from {', '.join(f'`{name}`' for name in run.read)} in `{run.folder}`.")
    lines += ["", f"<sub>Generated by `{record.command}` at commit `{record.generated_commit[:7] or 'unknown'}`, "
                  f"{record.generated_date}; do not edit: regenerate.</sub>", END]
    return "\n".join(lines)


# --- blocks in files ------------------------------------------------------------------------


def span(text: str, where: str = "") -> tuple[int, int]:
    """Where the block is in ``text`` (start of its begin line, end of its end line): each marker
    a line of its own (a marker quoted inside a line of text is no marker)."""
    begins = [m.start() for m in re.finditer(f"^{re.escape(BEGIN)}$", text, re.M)]
    ends = [m.end() for m in re.finditer(f"^{re.escape(END)}$", text, re.M)]
    if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
        raise KitError(f"{where or 'the file'}: wants one {BEGIN} line and, after it, one {END} line "
                       f"where the figures go (found {len(begins)} and {len(ends)})")
    return begins[0], ends[0]


def block_of(text: str, where: str = "") -> str:
    start, end = span(text, where)
    return text[start:end]


def replace_block(text: str, block: str, where: str = "") -> str:
    start, end = span(text, where)
    return text[:start] + block + text[end:]


def problems(text: str, where: str = "") -> list[str]:
    """What is wrong with a file's block (empty: the generator wrote it, with a commit and date)."""
    try:
        block = block_of(text, where)
    except KitError as e:
        return [str(e)]
    lines = block.splitlines()
    found = RECORD.match(lines[1]) if len(lines) > 1 else None
    if found is None:
        return [f"{where}: the figures block has no record line: not written by the generator"]
    try:
        record = from_json(found["json"])
    except (ValueError, TypeError, KeyError) as e:
        return [f"{where}: the figures block's record cannot be read: {type(e).__name__}: {e}"]
    out = []
    if render(record) != block:
        out.append(f"{where}: the figures block differs from what its record renders: edited by hand? regenerate it")
    for i, run in enumerate(record.runs):
        if not (run.commit and DATE.search(run.date)):
            out.append(f"{where}: run {i + 1} ({run.folder}) has no recorded commit and date")
    if not (COMMIT.search(block) and DATE.search(block)):
        out.append(f"{where}: the figures block shows no commit and date")
    return out


def generate(runs: list[Path], outs: list[Path], command: str) -> Record:
    record = Record(tuple(read_run(r) for r in runs), summary.commit()[0], summary.now()[:10], command)
    block = render(record)
    texts = {out: out.read_text() if out.is_file() else "" for out in outs}
    new = {out: replace_block(text, block, str(out)) for out, text in texts.items()}  # all checked first
    for out, text in new.items():
        out.write_text(text)
    return record


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m harness.run.figures", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", action="append", type=Path, default=[], metavar="DIR",
                   help="a run's artifacts folder (again for another run, shown in that order)")
    p.add_argument("--out", action="append", type=Path, default=[], metavar="FILE",
                   help="a file whose figures block (between the figures:begin and figures:end lines) to replace")
    p.add_argument("--no-run", action="store_true",
                   help="write a block saying no run is recorded (the figures removed until one is)")
    p.add_argument("--check", nargs="+", type=Path, metavar="FILE",
                   help="only check that each file's block is the generator's, with its run's commit and date")
    args = p.parse_args(argv)

    def run() -> int:
        if args.check:
            found = [x for f in args.check for x in problems(f.read_text() if f.is_file() else "", str(f))]
            for line in found:
                print(line, file=sys.stderr)
            return 1 if found else 0
        if not args.out or bool(args.run) == args.no_run:
            p.error("give --out FILE and either --run DIR or --no-run")
        record = generate(args.run, args.out, shlex.join(["python", "-m", "harness.run.figures", *argv]))
        for run in record.runs:
            print(f"{run.folder}: {tally(run.counts)}" + (f", {duration(run.wall_seconds)}" if run.wall_seconds else ""))
        print(f"figures written into {', '.join(map(str, args.out))}")
        return 0

    from harness.host.console import exit_code

    return exit_code(run)


if __name__ == "__main__":
    sys.exit(main())
