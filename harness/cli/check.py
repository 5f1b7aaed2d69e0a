"""`check`: does the model meet every `expect:` of these scenario files? The offline test of a
spec a user writes: exit 1 naming each unmet expectation by file, step and field; 2 for a file
that is not a scenario; 0 when every expect holds. No cluster, the whole catalogue in seconds.

Where `explain` narrates, `check` judges, from the same structured results (the pod model's
Mismatch records, the binding model's disagreements), never from explain's sentences.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from reference.release import DEFAULT_RELEASE

from harness.errors import KitError
from harness.targets import BUILDS, DEFAULT_BUILD


def register(sub) -> None:
    c = sub.add_parser("check", help="check that the model meets every expect: of scenario files (files or "
                                     "folders, pods and Karmada; default: the catalogue): exit 1 naming each "
                                     "one it does not, by file, step and field")
    c.add_argument("files", nargs="*", metavar="PATH")
    c.add_argument("--scheduler", choices=list(BUILDS), default=None,
                   help=f"model this build for pod scenarios (default: {DEFAULT_BUILD}, or the build a scenario "
                        "specifies when it specifies others only)")
    c.add_argument("--k8s-version", metavar="RELEASE",
                   help=f"model this release for pod scenarios (default: {DEFAULT_RELEASE}, or the nearest a "
                        "scenario specifies); Karmada scenarios have one model")
    c.set_defaults(func=check)


@dataclass(frozen=True)
class Unmet:
    """One expectation the model does not meet: where in the file, and what each side says."""

    file: Path
    where: str  # steps[1].expect.preempted
    what: str  # victim: wanted preempted, model predicts running on n1

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.what}"


@dataclass(frozen=True)
class Checked:
    expects: int  # expect blocks looked at
    unmet: tuple[Unmet, ...]
    elsewhere: bool  # modelled at a build or release the scenario specifies, not the default one


def check_pods(path: Path, scenario, build: str | None, release: str | None) -> Checked:
    from harness.cli.spec import modelled
    from harness.formats.common import field_path
    from harness.run.pods.narrate import narrate

    chosen_build, chosen_release, note = modelled(scenario, build, release)
    account = narrate(scenario, chosen_build, chosen_release)
    unmet = tuple(Unmet(path, field_path("steps", st.index, "expect", m.field),
                        f"{m.pod}: wanted {m.expected}, model predicts {m.actual}")
                  for st in account.steps for m in st.misses or ())
    expects = sum(st.misses is not None for st in account.steps)
    return Checked(expects, unmet, bool(note) and build is None and release is None)


def check_bindings(path: Path, scenario) -> Checked:
    from reference.binding.predict import Undetermined, predict

    from harness.formats.bindings import disagreements

    try:
        predicted = predict(scenario)
    except Undetermined as e:
        raise KitError(f"{path}: the binding model cannot predict one outcome: {e}") from None
    unmet = tuple(Unmet(path, d.where, d.what) for d in disagreements(scenario, predicted))
    return Checked(sum(st.expect is not None for st in scenario.steps), unmet, False)


def check(args) -> int:
    from harness.formats import catalogue
    from harness.formats.common import KARMADA, PODS

    from reference.release import RELEASES

    if args.k8s_version is not None and args.k8s_version not in RELEASES:
        # Once, before any file: otherwise every pod file would be "invalid" for it.
        raise KitError(f"--k8s-version: the model knows releases {', '.join(RELEASES)}, not {args.k8s_version}")
    started = time.monotonic()
    files = catalogue.files([Path(f) for f in args.files])
    problems: list[str] = []
    results: dict[str, list[Checked]] = {PODS: [], KARMADA: []}
    for f in files:
        try:
            s = catalogue.load_any(f)
            kind = catalogue.kind(s)
            result = (check_bindings(f, s) if kind == KARMADA
                      else check_pods(f, s, args.scheduler, args.k8s_version))
        except KitError as e:  # a malformed file (ScenarioError), or a model that cannot say
            problems.append(str(e))
            print(f"INVALID {e}")
            continue
        results[kind].append(result)
        for u in result.unmet:
            print(u)
    return _summary(files, results, problems, time.monotonic() - started)


def _summary(files: list[Path], results: dict[str, list[Checked]], problems: list[str], seconds: float) -> int:
    from harness.formats.common import KARMADA, PODS

    checked = results[PODS] + results[KARMADA]
    unmet = sum(len(c.unmet) for c in checked)
    expects = sum(c.expects for c in checked)
    kinds = f"{len(results[PODS])} pod, {len(results[KARMADA])} Karmada"
    if problems:
        print(f"{len(problems)} of {len(files)} files could not be checked; of the others ({kinds}), "
              f"{_count(unmet, 'expectation')} not met")
        return 2
    if unmet:
        failing = sum(1 for c in checked if c.unmet)
        print(f"{_count(unmet, 'expectation')} not met by the model, in {failing} of {len(files)} files ({kinds})")
        return 1
    elsewhere = sum(c.elsewhere for c in checked)
    print(f"{len(files)} files ({kinds}): the model meets all {expects} expects"
          + (f" ({elsewhere} files at the build or release they specify)" if elsewhere else "")
          + f", in {seconds:.1f} s")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
