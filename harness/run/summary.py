"""A run's summary as a record (``artifacts/run-summary.json``): what the terminal summary prints
at the end of a conformance run (counts, wall times, the build before the first test, each
target's scenarios and cluster bring-up, peak memory), with the commit, the machine and the
command it was made with. The plugin writes it (``conformance/plugin/reporting.py``);
``harness.run.figures`` reads it, so that a figure quoted in the docs is a run's, not a hand's.

Typed: every field is read back into the same dataclasses, and a record of another schema is
refused rather than half read.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import KitError
from harness.host.memory import meminfo

FILE = "run-summary.json"
SCHEMA = 1
REPO = Path(__file__).resolve().parents[2]
OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped", "deselected")  # pytest's words


@dataclass(frozen=True)
class Machine:
    cores: int  # the CPUs this process may run on
    memory_bytes: int  # MemTotal, 0 where /proc/meminfo is not there
    system: str  # "Linux 6.1.0 x86_64"
    python: str


@dataclass(frozen=True)
class Target:
    """One target's part of the run (a build, build@release, or karmada)."""

    name: str
    scenario_tests: int  # its scenario tests that ended (a pass, a failure, an xfail)
    longest_scenario: str = ""
    longest_seconds: float = 0.0
    batch_seconds: float | None = None  # the batch's wall time, where the run kept its batch
    cluster_build_seconds: float | None = None  # its cluster's look in the binary cache at bring-up
    cluster_up_seconds: float | None = None  # its cluster's start, until ready
    # Scenarios that had a cluster to themselves, and how many clusters were started for them
    # (harness/run/pods/quiet.py hands a quiet cluster on to the next such scenario).
    alone_scenarios: int | None = None
    alone_clusters: int | None = None


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    started: str  # ISO 8601, UTC, to the second: the session's start, before the build
    finished: str  # the terminal summary's moment
    commit: str  # git rev-parse HEAD of the kit's checkout; "" outside one
    local_changes: bool  # tracked files differed from the commit
    machine: Machine
    args: tuple[str, ...]  # pytest's arguments (``./kit conformance X`` is ``pytest conformance X``)
    exit_status: int
    counts: dict[str, int]  # by OUTCOMES, as pytest's last line tallies them
    wall_seconds: float  # from the session's start to its summary
    build_seconds: float  # building what the clusters start, before the first test (near 0 when cached)
    targets: tuple[Target, ...] = ()
    peak_memory_bytes: int | None = None  # the kit and its local clusters, sampled each second
    karmada: dict[str, float] = field(default_factory=dict)  # the Karmada plane's timings (build, up, ...)
    junit: str = ""  # where --junitxml wrote, as given
    # Each Go build this run made (a cold run's split): module, binaries, seconds, downloads, packages.
    builds: tuple[dict, ...] = ()
    # ``./kit``'s set-up of its virtualenv before this run, where this command made it (a cold run).
    venv_seconds: float | None = None
    schema: int = SCHEMA

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / FILE
        out.write_text(json.dumps(asdict(self), indent=1) + "\n")
        return out


def read(path: Path) -> RunSummary:
    """The record at ``path``; one KitError saying what is wrong with a file that is not one."""
    try:
        raw = json.loads(path.read_text())
        if raw.get("schema") != SCHEMA:
            raise KitError(f"{path}: schema {raw.get('schema')!r}, this kit reads {SCHEMA}")
        return RunSummary(**{**raw, "machine": Machine(**raw["machine"]), "args": tuple(raw["args"]),
                             "targets": tuple(Target(**t) for t in raw.get("targets", ())),
                             "builds": tuple(raw.get("builds", ()))})
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise KitError(f"{path} is not a run summary: {type(e).__name__}: {e}") from None


def builds_since(started: str) -> tuple[dict, ...]:
    """The kit's build records (harness.build.toolchain.record_build) of builds that ended at or
    after ``started`` (an ISO stamp): those this run made."""
    from harness.build.toolchain import BUILDS_RECORD
    from harness.host.cache import cache_root

    path = cache_root() / "logs" / BUILDS_RECORD
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return ()
    since = datetime.fromisoformat(started.replace("Z", "+00:00"))
    out = []
    for line in lines:
        try:
            entry = json.loads(line)
            if datetime.fromisoformat(entry["finished"]) >= since:
                out.append(entry)
        except (ValueError, KeyError, TypeError):
            continue  # a line a killed build left half-written
    return tuple(out)


VENV_SECONDS = "PRIORITYKIT_VENV_SECONDS"  # set by ./kit for the command that made its virtualenv


def venv_seconds() -> float | None:
    """How long ``./kit`` took to set up its virtualenv before this run; None when it found one."""
    try:
        return float(os.environ[VENV_SECONDS])
    except (KeyError, ValueError):
        return None


def now() -> str:
    return stamp(datetime.now(timezone.utc))


def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def machine() -> Machine:
    memory = meminfo("MemTotal") or 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)
    return Machine(cores, memory, f"{platform.system()} {platform.release()} {platform.machine()}",
                   platform.python_version())


def commit(repo: Path = REPO) -> tuple[str, bool]:
    """(HEAD's commit, whether tracked files differ from it); ("", False) outside a git checkout of
    the kit (an installed kit's folder may lie inside the user's own repository, whose commit is
    not the kit's)."""
    if not (repo / ".git").exists():
        return "", False
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30,
                              check=True).stdout.strip()

    try:
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "", False


def counts(stats: dict[str, list[Any]]) -> dict[str, int]:
    """pytest's tally from the terminal reporter's stats, as its last line counts them."""
    return {k: sum(1 for r in stats.get(k, ()) if getattr(r, "count_towards_summary", True)) for k in OUTCOMES}


__all__ = ["FILE", "Machine", "RunSummary", "Target", "commit", "counts", "machine", "now", "read", "stamp"]
