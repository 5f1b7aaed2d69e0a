"""Seeded scheduler bugs (mutants/*.yaml) and the kill matrix: does the suite notice each one?

A mutant names a Go module the scheduler is built from, a file in it, an exact
text and its replacement. It is built from a private copy of that module (hard
links into the module cache, the patched file a file of its own) that a copy of
the build's wrapper module points at with a local ``replace``; the module cache
itself is read-only and never touched (Go refuses ``-overlay`` for files in it).
Go's build cache recompiles only what the patch changes. Binaries are cached by
the patch's content, so a re-run builds nothing.

Each mutant binary then runs the conformance catalogue as an ordinary
``--scheduler-binary`` run in a pytest process of its own (so isolation,
reports and artifacts are the suite's own). A mutant is killed when any test
fails; by default a run stops at its first failing scenario (``-x``), since
one failure is the verdict. A baseline run of the unmutated builds comes
first and must be green, or the matrix is void: a flaky scenario would fake
kills.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import FILES, REPO
from harness.host import lifecycle
from harness.build import pins, toolchain
from harness.errors import KitError
from harness.targets import BUILDS

MUTANTS = FILES / "mutants"
# The mutants' own release: the one whose sources the catalogue's `original` texts quote, so
# mutants are built and their catalogue runs there. Not the kit's default release: it moves only
# when every mutant's `original` is checked against the newer sources.
MUTANTS_RELEASE = "1.34"
# Which wrapper module builds the kube-scheduler of each build, and its main package.
PACKAGES = {"upstream": ("kubernetes", "k8s.io/kubernetes/cmd/kube-scheduler"),
            "plugins": ("scheduler-plugins", "sigs.k8s.io/scheduler-plugins/cmd/scheduler")}


def scheduler(build: str, release: str = MUTANTS_RELEASE) -> tuple[str, str]:
    """(wrapper module, main package) of the build's kube-scheduler on ``release``."""
    component, package = PACKAGES[build]
    return pins.wrapper(component, release), package


SCHEDULER = {b: scheduler(b) for b in PACKAGES}


class Mutant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    module: Literal["k8s.io/kubernetes", "sigs.k8s.io/scheduler-plugins"]
    file: str = Field(min_length=1)
    original: str = Field(min_length=1)
    replacement: str
    rule: str = Field(min_length=1)
    rules: list[str] = Field(min_length=1)  # the ids of mutants/rules/index.yaml it breaks
    spec: str = Field(min_length=1)
    builds: list[Literal[BUILDS]] = Field(min_length=1)  # type: ignore[valid-type]
    equivalent: str = ""  # why no observable difference can exist; then it need not be killed
    # The release whose sources ``original`` quotes: code that exists only from a later release
    # (pod groups, 1.36+) is mutated, built and run there.
    release: str = MUTANTS_RELEASE
    # A pytest -m expression: the part of the catalogue that can reach the patched code (pod-group
    # code runs only for pods that name a group). Empty: the whole catalogue.
    scenarios: str = ""

    @property
    def where(self) -> tuple[str, str]:
        """What its baseline must match: (release, scenario selection)."""
        return self.release, self.scenarios


def load(path: Path) -> Mutant:
    try:
        raw = yaml.safe_load(path.read_text())
        m = Mutant.model_validate(raw)
    except (OSError, yaml.YAMLError) as e:
        raise KitError(f"{path}: cannot be read as YAML: {e}") from None
    except ValidationError as e:
        where = "; ".join(f"{'.'.join(str(x) for x in err['loc']) or '(top level)'}: {err['msg']}" for err in e.errors())
        raise KitError(f"{path}: {where}") from None
    if m.id != path.stem:
        raise KitError(f"{path}: id: {m.id!r} must match the file name {path.stem!r}")
    if m.original == m.replacement:
        raise KitError(f"{path}: replacement: the same as original; a mutant must change something")
    return m


def load_all(directory: Path = MUTANTS) -> list[Mutant]:
    from harness.mutant_rules import check_named

    mutants = [load(p) for p in sorted(directory.glob("*.yaml"))]
    check_named(mutants, directory)
    return mutants


# --- building ---------------------------------------------------------------------


def source_file(m: Mutant, wrapper: str) -> Path:
    """The pinned copy of the file the mutant patches, as the wrapper module resolves it."""
    version = pins.module_versions(wrapper).get(m.module)
    if version is None:
        raise KitError(f"mutant {m.id}: module {m.module} is not part of the {wrapper} build")
    path = toolchain.go_mod_cache() / f"{m.module}@{version}" / m.file
    if not path.is_file():
        # Only packages a build compiled are certain to be in the module cache; fetch the module.
        subprocess.run([toolchain.go_binary(), "mod", "download", m.module], cwd=pins.GOMOD_DIR / wrapper,
                       capture_output=True, env={**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off"})
    if not path.is_file():
        raise KitError(f"mutant {m.id}: file: {m.file} is not in {m.module}@{version} ({path})")
    return path


def patched(m: Mutant, original_text: str) -> str:
    count = original_text.count(m.original)
    if count != 1:
        raise KitError(f"mutant {m.id}: original: found {count} times in {m.file}; it must be found exactly once")
    return original_text.replace(m.original, m.replacement)


def _pristine(module: str, version: str, src_root: Path) -> Path:
    """A private, writable-by-us image of a pinned module: hard links into the module cache
    (which is read-only and checked against go.sum, so it is never patched in place)."""
    dest = toolchain.cache_root() / "mutants" / "modules" / f"{module.replace('/', '_')}@{version}"
    if not dest.exists():
        tmp = dest.with_name(dest.name + f".{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        linked = subprocess.run(["cp", "-al", str(src_root), str(tmp)], capture_output=True)
        if linked.returncode != 0:  # another file system: a plain copy
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(src_root, tmp)
        tmp.rename(dest)
    return dest


def source_tree(m: Mutant, build: str) -> tuple[Path, str]:
    """A private copy of the build's wrapper module whose go.mod points the mutated module at a
    patched copy of it; and a key naming the patch. The pinned module cache is never touched."""
    wrapper = scheduler(build, m.release)[0]
    src = source_file(m, wrapper)
    text = patched(m, src.read_text())
    version = pins.module_versions(wrapper)[m.module]
    module_root = src.parents[len(Path(m.file).parts) - 1]
    key = hashlib.sha256(f"{m.module}@{version}\0{m.file}\0{text}".encode()).hexdigest()[:16]
    d = toolchain.cache_root() / "mutants" / f"{m.id}-{build}-{key}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    tree = d / "module"
    subprocess.run(["cp", "-al", str(_pristine(m.module, version, module_root)), str(tree)], check=True)
    target = tree / m.file
    target.parent.chmod(0o755)
    target.unlink()  # break the hard link: the patch goes to a file of its own
    target.write_text(text)
    wrapper_dir = d / "wrapper"
    wrapper_dir.mkdir()
    for f in (pins.GOMOD_DIR / wrapper).iterdir():
        if f.is_file():
            shutil.copy(f, wrapper_dir / f.name)
    gomod = wrapper_dir / "go.mod"
    lines = [ln for ln in gomod.read_text().splitlines()
             if not re.match(rf"^\s*(replace\s+)?{re.escape(m.module)}\s+=>", ln)]
    lines.append(f"replace {m.module} => {tree}")
    gomod.write_text("\n".join(lines) + "\n")
    return wrapper_dir, key


def binary(m: Mutant, build: str) -> Path:
    wrapper, package = scheduler(build, m.release)
    label = f"mutant-{m.id}-{build}"
    wrapper_dir, key = source_tree(m, build)
    try:
        return toolchain.ensure_variant(wrapper, package, wrapper_dir, key, label)
    finally:
        shutil.rmtree(wrapper_dir.parent, ignore_errors=True)  # the binary is the cache entry


# --- running ----------------------------------------------------------------------


_children: set[subprocess.Popen] = set()  # catalogue runs under way, to stop on an interrupt


def _stop_children() -> None:
    for p in list(_children):
        p.terminate()  # each tears its own clusters down on SIGTERM
    for p in list(_children):
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()


@dataclass
class Run:
    mutant: str  # "" for the baseline
    build: str
    failed: list[str] = field(default_factory=list)  # tests that showed a difference from the model
    faults: list[str] = field(default_factory=list)  # tests a named scheduler fault failed
    passed: int = 0
    error: str = ""
    seconds: float = 0.0
    log: Path | None = None
    kit_errors: list[str] = field(default_factory=list)  # tests the kit could not finish: no evidence

    @property
    def killed(self) -> bool:
        return bool(self.failed)

    def to_json(self) -> dict:
        return {"mutant": self.mutant, "build": self.build, "failed": self.failed, "faults": self.faults,
                "passed": self.passed, "error": self.error, "seconds": round(self.seconds, 1),
                "log": str(self.log) if self.log else None, "kit_errors": self.kit_errors}

    @classmethod
    def from_json(cls, d: dict) -> Run:
        """A run as a shard wrote it (``to_json``); ``./kit merge`` joins shards' kill matrices."""
        return cls(d["mutant"], d["build"], list(d["failed"]), list(d["faults"]), d["passed"], d["error"],
                   d["seconds"], Path(d["log"]) if d.get("log") else None, list(d.get("kit_errors", [])))

    @property
    def inconclusive(self) -> bool:
        """Only named scheduler faults or kit errors failed: they say nothing about the mutant (a
        race the kit names, such as the 1.34 double preemption, fails a test on a correct build
        too; a PodGroup refused at set-up never asked the scheduler anything)."""
        return bool(self.faults or self.kit_errors) and not self.failed

    @property
    def unjudged(self) -> list[str]:
        """The tests that failed without evidence, each with why."""
        return [f"{t} (named scheduler fault)" for t in self.faults] + [f"{t} (kit error)" for t in self.kit_errors]


def scenario_of(testcase: ET.Element) -> str:
    """The scenario a test case ran (test_scenario[<build>-<scenario>]), or the test's own name."""
    func, _, params = testcase.get("name", "").partition("[")
    if func != "test_scenario":
        return func
    build, _, scenario = params.rstrip("]").partition("-")
    return scenario


def properties(testcase: ET.Element) -> dict[str, str]:
    """The test's JUnit properties (the verdict the suite recorded as data)."""
    return {p.get("name", ""): p.get("value", "") for p in testcase.iter("property")}


def tally(report: ET.Element, run: Run) -> Run:
    """A JUnit report's verdicts into ``run``, read from the verdict each scenario test recorded
    (conformance.plugin.verdicts.record): a FAIL resting on a difference is a kill; one a named
    scheduler fault or a kit error failed is not, whatever differences it shows beside them. A
    failing test with no recorded verdict (the smoke test) is a kill."""
    from harness.run.pods.verdict import CAUSE, VERDICT, Cause, Verdict

    stopped = 0
    for tc in report.iter("testcase"):
        props = properties(tc)
        bad = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        if bad is not None:
            why = props.get(CAUSE)
            target = (run.faults if why == Cause.FAULT.value else run.kit_errors if why == Cause.KIT_ERROR.value
                      else run.failed)
            target.append(scenario_of(tc))
        elif tc.find("skipped") is None:
            run.passed += 1
        elif props.get(VERDICT) == Verdict.STOPPED.value:
            stopped += 1
    if stopped and not run.failed and not run.faults and not run.kit_errors and not run.error:
        # -x stopped the batch at a result no test reported as failed: the catalogue was not run,
        # so "survived" would be a claim about scenarios never asked.
        run.error = f"{stopped} scenarios stopped by -x with no failing test: the run is void"
    return run


def run_catalogue(build: str, binary_: Path | None, out: Path, label: str, first_failure: bool,
                  extra: tuple[str, ...] = (), where: tuple[str, str] = (MUTANTS_RELEASE, "")) -> Run:
    release, selection = where
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    xml, log = out / f"{label}-{build}.xml", out / f"{label}-{build}.log"
    # The suite beside this package, a checkout's or an installed one's; pytest runs in `out`, so
    # nothing it writes lands in the kit's own folder (site-packages, once installed).
    suite = REPO / "conformance"
    cmd = [sys.executable, "-m", "pytest", str(suite / "test_smoke.py"), str(suite / "test_scenarios.py"),
           "--scheduler", build, "--k8s-version", release, "-p", "no:cacheprovider", "-q", f"--junitxml={xml}",
           f"--artifacts={out / f'{label}-{build}'}", *extra]
    if selection:
        cmd += ["-m", selection]
    if binary_ is not None:
        cmd += ["--scheduler-binary", str(binary_)]
    if first_failure:
        cmd.append("-x")
    started = time.monotonic()
    with open(log, "w") as f:
        if lifecycle.stopping():
            return Run(label, build, error="the run was stopped")
        proc = subprocess.Popen(cmd, cwd=out, stdout=f, stderr=subprocess.STDOUT)
        _children.add(proc)
        try:
            proc.wait()
        finally:
            _children.discard(proc)
    run = Run(label, build, seconds=time.monotonic() - started, log=log)
    if not xml.exists():
        run.error = f"pytest exited {proc.returncode} without a report; see {log}"
        return run
    tally(ET.parse(xml).getroot(), run)
    if proc.returncode not in (0, 1):
        run.error = f"pytest exited {proc.returncode}; see {log}"
    return run


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

    def base(cell: tuple[str, tuple[str, str]]) -> Run:
        b, w = cell
        label = "baseline" if w == (MUTANTS_RELEASE, "") else f"baseline-{w[0]}" + (f"-{w[1]}" if w[1] else "")
        r = run_catalogue(b, None, out, label, first_failure=False, where=w)
        if label != "baseline":
            r.build = f"{b}@{w[0]}" + (f" -m {w[1]}" if w[1] else "")
        return r

    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(builds))))
    try:
        baseline = list(pool.map(base, cells))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_children()
        raise
    pool.shutdown()
    for r in baseline:
        print_(f"baseline [{r.build}]: {r.passed} passed, {len(r.failed)} failed"
               + (f", {len(r.faults)} failed on a named scheduler fault alone" if r.faults else "")
               + f" in {r.seconds:.0f} s"
               + (f": {', '.join(r.failed)}" if r.failed else "") + (f" ({r.error})" if r.error else ""))
    if any(r.failed or r.error for r in baseline):
        raise KitError("the baseline is not green, so the kill matrix would be void (a flaky scenario fakes "
                       f"kills); logs: {out}")
    runs: dict[str, list[Run]] = {m.id: [] for m in mutants}

    def one(m: Mutant) -> None:
        # A mutant of shared code is one bug: the first build that kills it is enough, unless --full.
        for b in [b for b in BUILDS if b in m.builds and b in builds]:
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

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        list(pool.map(one, mutants))
    except BaseException:
        # Interrupted: the workers would start the next mutants; stop what runs and start nothing.
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_children()
        raise
    pool.shutdown()
    return baseline, runs


def runs_data(record: dict, baseline: list[Run], runs: dict[str, list[Run]]) -> dict:
    """A kill matrix as data (``runs.json``): the shard's record (``harness.shards.split``), the
    baseline and every mutant's runs, so that ``./kit merge`` can join shards' matrices."""
    return {"shard": record, "baseline": [r.to_json() for r in baseline],
            "runs": {k: [r.to_json() for r in v] for k, v in runs.items()}}


def verdict_of(rs: list[Run]) -> str:
    """A mutant's verdict from its runs: killed (by which scenarios), error, INCONCLUSIVE or SURVIVED."""
    k = [r for r in rs if r.killed]
    unjudged = sorted({s for r in rs for s in r.unjudged})
    return ("killed by " + ", ".join(sorted({s for r in k for s in r.failed}))) if k else (
        "error: " + "; ".join(r.error for r in rs if r.error) if any(r.error for r in rs)
        else "INCONCLUSIVE (failed without evidence: " + ", ".join(unjudged) + ")" if unjudged
        else "SURVIVED")


def verdicts_from_runs(data: dict) -> dict[str, str]:
    """mutant -> its verdict, from a kill matrix's runs.json (``runs_data``): the record, not the
    printed matrix."""
    return {m: verdict_of([Run.from_json(r) for r in rs]) for m, rs in data.get("runs", {}).items() if rs}


def summary(mutants: list[Mutant], runs: dict[str, list[Run]]) -> tuple[list[str], float]:
    lines = [f"{'mutant':<44} {'builds run':<18} verdict"]
    counted = killed = 0
    for m in mutants:
        rs = runs.get(m.id, [])
        k = [r for r in rs if r.killed]
        verdict = verdict_of(rs)
        if m.equivalent:
            verdict += f"  (equivalent: {m.equivalent[:60]})"
        else:
            counted += 1
            killed += bool(k)
        lines.append(f"{m.id:<44} {','.join(r.build for r in rs):<18} {verdict}")
    score = killed / counted if counted else 1.0
    lines.append(f"mutation score: {killed}/{counted} non-equivalent mutants killed ({score:.0%})")
    return lines, score
