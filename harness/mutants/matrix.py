"""Running the kill matrix: each mutant's binary against the catalogue, in a pytest process of its
own per run, several at once; the unmutated builds' baseline first.
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable

from harness import REPO
from harness.build import mutants as mutant_build, pins
from harness.errors import KitError
from harness.formats.mutants import MUTANTS_RELEASE, Mutant
from harness.host import lifecycle
from harness.mutants.runs import Run, tally
from harness.run import results
from harness.targets import BUILDS, SCHEDULER_MODULES, scheduler_package


def scheduler(build: str, release: str = MUTANTS_RELEASE) -> tuple[str, str]:
    """(wrapper module, main package) of the build's kube-scheduler on ``release``."""
    return pins.wrapper(SCHEDULER_MODULES[build], release), scheduler_package(build)


KUBELET = "k8s.io/kubernetes/cmd/kubelet"


def binary(m: Mutant, build: str) -> Path:
    """The mutant's binary: ``build``'s scheduler, or for a kubelet mutant the release's kubelet
    (one for both builds, built once)."""
    if m.component == "kubelet":
        return mutant_build.binary(m, "kubelet", pins.wrapper("kubernetes", m.release), KUBELET)
    return mutant_build.binary(m, build, *scheduler(build, m.release))


def binary_option(where: tuple[str, str, str, str]) -> str:
    """The suite's option that runs a mutant's binary: kind runs the kubelet mutants."""
    return "--kubelet-binary" if where[3] == "kind" else "--scheduler-binary"


LOCAL = (MUTANTS_RELEASE, "", "short", "local")  # a scheduler mutant's default ``where``


def run_catalogue(build: str, binary_: Path | None, out: Path, label: str, first_failure: bool,
                  extra: tuple[str, ...] = (), where: tuple[str, str, str, str] = LOCAL) -> Run:
    release, selection, flush, cluster = where
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    xml, log = out / f"{label}-{build}.xml", out / f"{label}-{build}.log"
    # The suite beside this package, a checkout's or an installed one's; pytest runs in `out`, so
    # nothing it writes lands in the kit's own folder (site-packages, once installed).
    suite = REPO / "conformance"
    # On kind the scenarios that need the workers' kubelets (node pressure) are a module of their own.
    tests = ["test_smoke.py", "test_scenarios.py"] + (["test_real_kubelets.py"] if cluster == "kind" else [])
    cmd = [sys.executable, "-m", "pytest", *(str(suite / t) for t in tests),
           "--scheduler", build, "-p", "no:cacheprovider", "-q", f"--junitxml={xml}",
           f"--artifacts={out / f'{label}-{build}'}", *extra]
    # kind runs the release of the kit's node image, its default (Mutant checks a kubelet mutant's).
    cmd += ["--k8s-version", release] if cluster == "local" else []
    if selection:
        cmd += ["-m", selection]
    if flush == "default":
        cmd += ["--flush-interval", "default"]
    if cluster != "local":
        cmd += ["--cluster", cluster]
    if binary_ is not None:
        cmd += [binary_option(where), str(binary_)]
    if first_failure:
        cmd.append("-x")
    started = time.monotonic()
    with open(log, "w") as f:
        if lifecycle.stopping():
            return Run(label, build, error="the run was stopped")
        status = lifecycle.run_child(cmd, cwd=out, stdout=f, stderr=subprocess.STDOUT)
    run = Run(label, build, seconds=time.monotonic() - started, log=log)
    if not xml.exists():
        run.error = f"pytest exited {status} without a report; see {log}"
        return run
    tally(results.read(xml), run)
    if status not in (0, 1):
        run.error = f"pytest exited {status}; see {log}"
    return run


def _pooled(jobs: int, work: Callable, items: Iterable) -> list:
    """``work`` over ``items``, ``jobs`` at a time. Interrupted, the workers would start the next
    items: start nothing more, and stop the catalogue runs under way."""
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        out = list(pool.map(work, items))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        lifecycle.stop_children()
        raise
    pool.shutdown()
    return out


def baseline_label(where: tuple[str, str, str, str]) -> str:
    """What a baseline's logs and results are filed under: one name for each (release, selection,
    flush interval, cluster), so two baselines never write over each other's evidence."""
    release, selection, flush, cluster = where
    if where == LOCAL:
        return "baseline"
    return (f"baseline-{release}" + (f"-{selection}" if selection else "")
            + ("-flush-default" if flush == "default" else "") + (f"-{cluster}" if cluster != "local" else ""))


def kill_matrix(mutants: list[Mutant], builds: list[str], jobs: int, full: bool, out: Path,
                print_=print) -> tuple[list[Run], dict[str, list[Run]]]:
    """Baseline first (must be green), then every mutant; returns (baseline runs, runs by mutant)."""
    print_(f"building {len(mutants)} mutant(s)")
    bins: dict[tuple[str, str], Path] = {}
    for m in mutants:
        for b in m.builds:
            if b in builds:
                bins[m.id, b] = binary(m, b)
    # One baseline per build and per (release, selection) some mutant runs at: a kill is only
    # meaningful against a green run of the same scenarios on the same release.
    wheres = sorted({m.where for m in mutants})
    cells = [(b, w) for w in wheres for b in builds if any(m.where == w and b in m.builds for m in mutants)]

    def base(cell: tuple[str, tuple[str, str, str, str]]) -> Run:
        b, w = cell
        label = baseline_label(w)
        r = run_catalogue(b, None, out, label, first_failure=False, where=w)
        if label != "baseline":
            r.build = (f"{b}@{w[0]}" + (f" -m {w[1]}" if w[1] else "") + (" flush default" if w[2] == "default" else "")
                       + (f" on {w[3]}" if w[3] != "local" else ""))
        return r

    baseline = _pooled(max(1, min(jobs, len(builds))), base, cells)
    for r in baseline:
        print_(f"baseline [{r.build}]: {r.passed} passed, {len(r.failed)} failed"
               + (f", {len(r.faults)} failed on a named scheduler fault alone" if r.faults else "")
               + (f", {len(r.kit_errors)} the kit could not finish ({', '.join(r.kit_errors)})" if r.kit_errors else "")
               + f" in {r.seconds:.0f} s"
               + (f": {', '.join(r.failed)}" if r.failed else "") + (f" ({r.error})" if r.error else ""))
    if any(r.failed or r.error or r.kit_errors or not r.passed for r in baseline):
        # A test the kit could not finish, or none run at all, is no baseline either: the mutants
        # would be judged against scenarios nobody saw pass.
        raise KitError("the baseline is not green, so the kill matrix would be void (a flaky scenario fakes "
                       f"kills); logs: {out}")
    runs: dict[str, list[Run]] = {m.id: [] for m in mutants}

    shows = rule_scenarios()

    def one(m: Mutant) -> None:
        # A mutant of shared code is one bug: the first build that kills it is enough, unless --full.
        for b in [b for b in BUILDS if b in m.builds and b in builds]:
            first = targeted(m, shows)
            if first and not full:
                # The scenarios that show the rules it breaks first: most mutants die there in a
                # minute, where the whole catalogue, longest scenarios first, took up to ten.
                r = run_catalogue(b, bins[m.id, b], out, m.id + "-rules", first_failure=True, where=m.where,
                                  extra=("-k", " or ".join(first)))
                if r.killed:
                    runs[m.id].append(r)
                    print_(f"  {m.id} [{b}]: KILLED by {', '.join(r.failed)} (its rules' scenarios, {r.seconds:.0f} s)")
                    break
            r = run_catalogue(b, bins[m.id, b], out, m.id, first_failure=not full, where=m.where)
            if r.inconclusive:
                # -x stopped at a named fault or a kit error: the rest of the catalogue was never
                # asked, and neither says anything of the mutant. Run it whole once more; what they
                # fail still counts for nothing.
                print_(f"  {m.id} [{b}]: failed without evidence ({', '.join(r.unjudged)}); "
                       f"the whole catalogue again")
                r = run_catalogue(b, bins[m.id, b], out, m.id + "-again", first_failure=False, where=m.where)
            runs[m.id].append(r)
            verdict = ("KILLED by " + ", ".join(r.failed) if r.killed else "ERROR " + r.error if r.error
                       else "inconclusive: only " + ", ".join(r.unjudged) if r.inconclusive else "survived")
            print_(f"  {m.id} [{b}]: {verdict} ({r.seconds:.0f} s)")
            if r.killed and not full:
                break

    _pooled(jobs, one, mutants)
    return baseline, runs


def rule_scenarios() -> dict[str, list[str]]:
    """Each rule's scenarios (mutants/rules/index.yaml)."""
    from harness.formats.mutants import load_rules

    return {r.id: list(r.scenarios) for r in load_rules()}


def targeted(m: Mutant, shows: dict[str, list[str]]) -> list[str]:
    """The scenarios that show the rules ``m`` breaks, as ``-k`` terms (empty: none named)."""
    return sorted({s for rule in m.rules for s in shows.get(rule, [])})


__all__ = ["binary", "kill_matrix", "run_catalogue", "scheduler", "targeted"]
