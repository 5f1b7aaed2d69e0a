"""`peers`: upstream's own preemption test cases against the kit, the peer suite's table."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from harness import SCENARIOS
from harness.cli.check import check_bindings, check_pods
from harness.errors import KitError


def register(sub) -> None:
    p = sub.add_parser("peers", help="upstream's own preemption test cases: which the kit expresses "
                                     "(a scenario, a model test), which it cannot and why, with counts")
    p.add_argument("--list", action="store_true", help="one line per case, not only the counts")
    p.add_argument("--project", choices=["kubernetes", "scheduler-plugins", "karmada"], help="only this project")
    p.add_argument("--index", type=Path, default=None, help="another index file (default: peers/upstream-cases.yaml)")
    p.add_argument("--verdicts", action="store_true",
                   help="judge every expressed case: run its model test, or check its scenario's expect: on the "
                        "model for each build; with --junit, its scenario's verdicts on those runs' clusters too "
                        "(exit 1 if any case disagrees)")
    p.add_argument("--junit", type=Path, action="append", default=[], metavar="FILE",
                   help="a conformance run's JUnit XML (./kit conformance ... --junitxml FILE), for the cluster "
                        "verdicts of the cases a scenario expresses (repeatable; implies --verdicts)")
    p.set_defaults(func=run)


def run(args) -> int:
    from harness.formats import peers
    from harness.run.peers import Agreement, verdicts
    from harness.targets import BUILDS

    cases = peers.load(args.index) if args.index else peers.load()
    if args.project:
        cases = [c for c in cases if c.project == args.project]
    judged = None
    if args.verdicts or args.junit:
        judged = verdicts(cases, lambda name: scenario_on_model(name, BUILDS), args.junit)
    files: dict[tuple[str, str, str], Counter] = {}
    agreeing: Counter = Counter()  # per file, the expressed cases that agree on the model
    for c in cases:
        key = (c.project, c.release, c.file)
        files.setdefault(key, Counter())[c.status] += 1
        if judged is not None and judged.model.get(c.id) is Agreement.AGREES:
            agreeing[key] += 1
    agree = f" {'agree':>5}" if judged is not None else ""
    print(f"{'project':<18} {'release':<13} {'cases':>5} {'expressed':>9}{agree} {'to do':>6} {'cannot':>6}  file")
    for key, n in sorted(files.items()):
        project, release, file = key
        a = f" {agreeing[key]:>5}" if judged is not None else ""
        print(f"{project:<18} {release:<13} {sum(n.values()):>5} {n['expressed']:>9}{a} "
              f"{n['to do']:>6} {n['not expressible']:>6}  {file}")
    total = Counter(c.status for c in cases)
    tested = sum(1 for c in cases if c.test)
    reviewed = sum(1 for c in cases if c.status == "expressed" and not c.test and c.reviewed)
    print(f"{len(cases)} cases: {total['expressed']} expressed ({tested} by a model test that translates the case, "
          f"{reviewed} by a catalogue scenario checked against the case's facts, "
          f"{total['expressed'] - tested - reviewed} matched to a scenario by the indexer, not yet reviewed), "
          f"{total['to do']} to do, {total['not expressible']} not expressible")
    reasons = Counter(c.reason for c in cases if c.status == "not expressible")
    print("not expressible, by reason (the scenario format's backlog):")
    for reason, n in reasons.most_common():
        print(f"  {n:>4}  {reason}")
    if args.list:
        for c in cases:
            if c.test:
                how = f"model test {c.test}"
            elif c.status == "expressed":
                how = f"scenario {c.matches}" + ("" if c.reviewed else " (unreviewed)")
            elif c.status == "not expressible":
                how = f"cannot: {c.reason}" + (f" (nearest scenario: {c.matches})" if c.matches else "")
            else:
                how = f"to do ({c.expressible})"
            print(f"{c.where}: {how}" + (_verdict_words(judged, c.id) if judged is not None else ""))
    return _verdict_summary(judged) if judged is not None else 0


def _verdict_words(judged, case_id: str) -> str:
    if case_id not in judged.model:
        return ""
    on = [f"model {judged.model[case_id].value}"]
    on += [f"{t} {a.value}" for t, a in sorted(judged.clusters.get(case_id, {}).items())]
    return " -> " + ", ".join(on)


def _verdict_summary(judged) -> int:
    from harness.run.peers import Agreement

    model = Counter(judged.model.values())
    print(f"verdicts: on the model, {model[Agreement.AGREES]} of {len(judged.model)} expressed cases agree"
          + (f", {model[Agreement.DISAGREES]} DISAGREE" if model[Agreement.DISAGREES] else ""))
    differs = model[Agreement.DISAGREES]
    for target in judged.targets:
        on = Counter(v[target] for v in judged.clusters.values() if target in v)
        ran = sum(on.values())
        print(f"  on {target}: {on[Agreement.AGREES]} of {ran} scenario cases run agree"
              + (f", {on[Agreement.DISAGREES]} DISAGREE" if on[Agreement.DISAGREES] else "")
              + (f", {on[Agreement.NOT_RUN]} gave no verdict" if on[Agreement.NOT_RUN] else ""))
        differs += on[Agreement.DISAGREES]
    if not judged.targets:
        print("  on clusters: none given (--junit FILE from a conformance run)")
    return 1 if differs else 0


def scenario_on_model(name: str, builds: Iterable[str], scenarios: Path = SCENARIOS) -> dict[str, bool]:
    """Whether the model meets every ``expect:`` of a catalogue scenario, per build (one answer
    for a Karmada scenario, under the key "karmada")."""
    from reference.release import DEFAULT_RELEASE

    from harness.formats import catalogue
    from harness.formats.common import KARMADA

    for path in (scenarios / f"{name}.yaml", scenarios / "karmada" / f"{name}.yaml"):
        if path.is_file():
            break
    else:
        raise KitError(f"peers --verdicts: no catalogue scenario {name!r}")
    scenario = catalogue.load_any(path)
    if catalogue.kind(scenario) == KARMADA:
        return {"karmada": not check_bindings(path, scenario).unmet}
    # A build the scenario does not specify (a toleration scenario on upstream) is not judged there.
    mine = [b for b in builds if scenario.applies_to(b, scenario.semantics(b, DEFAULT_RELEASE)[1])]
    return {b: not check_pods(path, scenario, b, None).unmet for b in mine or [None]}
