"""The spec readers, no cluster needed: `validate` scenario files, `explain` one through the model,
`matrix` of who can preempt whom. Every scenario kind (pods, Karmada bindings) is read the same way."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from reference.release import DEFAULT_RELEASE, RELEASES

from harness.errors import KitError
from harness.targets import BUILDS, DEFAULT_BUILD


def register(sub) -> None:
    v = sub.add_parser("validate", help="check that scenario files follow their format (files or folders, read "
                                        "whole: pods and Karmada; default: the catalogue)")
    v.add_argument("files", nargs="*", metavar="PATH")
    v.set_defaults(func=validate)
    e = sub.add_parser("explain", help="step the model through a scenario file, with reasons (it says whether "
                                       "each expect is met and exits 0 either way: `check` is the pass/fail one)")
    e.add_argument("file", type=Path)
    e.add_argument("--scheduler", choices=list(BUILDS), default=None,
                   help=f"the build whose behaviour to model (default: {DEFAULT_BUILD}, or the build the "
                        "scenario specifies)")
    e.add_argument("--k8s-version", metavar="RELEASE", help=f"the release whose behaviour to model (default: the "
                   f"kit's default release, {DEFAULT_RELEASE}, or the nearest the scenario specifies)")
    e.set_defaults(func=explain)
    m = sub.add_parser("matrix", help="who can preempt whom, now, after N s or never: a scenario's classes "
                                      "or a live cluster's (read only)")
    m.add_argument("file", type=Path, nargs="?")
    m.add_argument("--kubeconfig", type=Path, help="read the PriorityClasses of this cluster (changes nothing)")
    m.add_argument("--format", choices=["table", "csv", "json"], default="table")
    m.set_defaults(func=matrix)


# --- validate ---------------------------------------------------------------------------


def validate(args) -> int:
    from harness.formats import catalogue
    from harness.formats.common import KARMADA, PODS

    files = catalogue.files([Path(f) for f in args.files])
    scenarios, errors = catalogue.check(files)
    for e in errors:
        print(f"INVALID {e}")
    kinds = [catalogue.kind(s) for s in scenarios]
    summary = (f"{len(scenarios)} valid ({kinds.count(PODS)} pod, {kinds.count(KARMADA)} Karmada), "
               f"{len(files) - len(scenarios)} invalid")
    if errors and len(scenarios) == len(files):
        summary += "; an id is used twice"  # every file is valid alone, the set is not
    print(summary)
    return 1 if errors else 0


# --- explain ----------------------------------------------------------------------------


def explain(args) -> int:
    from harness.formats.common import KARMADA, kind_of_file

    if kind_of_file(args.file) == KARMADA:
        return _explain_bindings(args)
    return _explain_pods(args)


def modelled(scenario, build: str | None, release: str | None) -> tuple[str, str, str]:
    """(build, release, a note for the header): what the user named, else the kit's defaults. A
    default the scenario does not specify (it is for other builds or releases) gives way to the
    nearest the scenario does specify, and the note says so: every expect then is one the model
    should meet. What the user named is modelled as named, with a note when it is out of scope."""
    if release is not None and release not in RELEASES:
        raise KitError(f"--k8s-version: the model knows releases {', '.join(RELEASES)}, not {release}")
    wanted = (build or DEFAULT_BUILD, release or DEFAULT_RELEASE)
    if scenario.applies_to(*wanted):
        return (*wanted, "")
    near_build, near_release = scenario.semantics(*wanted)
    chosen = (build or near_build, release or near_release)
    if not scenario.applies_to(*chosen):
        return (*wanted, " (the scenario does not specify this build or release: expect differences)")
    defaults, specified = [], []
    if chosen[0] != wanted[0]:
        defaults.append(f"build {wanted[0]}")
        specified.append(f"builds {', '.join(scenario.builds)}")
    if chosen[1] != wanted[1]:
        defaults.append(f"release {wanted[1]}")
        specified.append(f"releases {scenario.releases_of(chosen[0])}")
    verb = "is" if len(defaults) == 1 else "are"
    return (*chosen, f" (the default {' and '.join(defaults)} {verb} outside what the scenario specifies: "
                     f"{'; '.join(specified)})")


def _explain_pods(args) -> int:
    from harness.formats.pods import load
    from harness.run.pods.narrate import describe_misses, narrate

    s = load(args.file)
    build, release, note = modelled(s, args.scheduler, args.k8s_version)
    account = narrate(s, build, release, datetime.now(timezone.utc))
    print(f"{s.id}: {s.title}\nspec: {s.spec}\nmodel of the {build} scheduler, Kubernetes {release}{note}\n")
    print("start: " + (", ".join(account.start) or "no pods"))
    for st in account.steps:
        print(f"\nstep {st.index}: {st.action}" + (f" {st.argument}" if st.argument else ""))
        for line in st.lines:
            print("  " * (line.depth + 1) + line.text)
        if st.misses is not None:
            print("  expect: " + ("met" if not st.misses else "NOT met: " + describe_misses(st.misses)))
    return 0


def _explain_bindings(args) -> int:
    from harness.build import pins
    from harness.formats.bindings import load
    from harness.run.bindings.narrate import narrate

    if args.scheduler is not None or args.k8s_version is not None:
        raise KitError(f"{args.file}: a Karmada scenario; --scheduler and --k8s-version choose what a pod scenario's "
                       "model predicts, and the binding model has no such choice")
    s = load(args.file)
    gate = "on" if s.gates.PriorityBasedScheduling else "off"
    print(f"{s.id}: {s.title}\nspec: {s.spec}\nmodel of karmada-scheduler {pins.karmada_version()} (the kit's "
          f"Karmada build), PriorityBasedScheduling {gate}; the kit runs it on Kubernetes {DEFAULT_RELEASE}, "
          f"which the binding model does not depend on\n")
    print("members: " + ", ".join(f"{m.name} ({m.cpu}m cpu)" for m in s.members))
    if s.priorityClasses:
        print("classes: " + ", ".join(f"{c.name} ({c.value})" for c in s.priorityClasses))
    for st in narrate(s):
        print(f"\nstep {st.index}: {st.action}" + (f" {st.argument}" if st.argument else ""))
        if st.misses is None:
            continue
        for line in st.lines:
            print(f"    {line}")
        print("  expect: " + ("met" if not st.misses else "NOT met: " + "; ".join(st.misses)))
    return 0


# --- matrix -----------------------------------------------------------------------------


def matrix(args) -> int:
    from reference.objects import ClusterState
    from reference.toleration import preemption_matrix

    if (args.file is None) == (args.kubeconfig is None):
        raise KitError("matrix: give a scenario FILE or --kubeconfig PATH (a cluster whose classes to read)")
    if args.kubeconfig is not None:
        classes, source = _live_classes(args.kubeconfig), f"the cluster of {args.kubeconfig}"
    else:
        from harness.formats.pods import load
        from harness.formats.pod_model import to_class

        classes, source = tuple(to_class(c) for c in load(args.file).priorityClasses), str(args.file)
    if not classes:
        raise KitError(f"{source} has no PriorityClasses")
    state = ClusterState(priority_classes=classes)
    matrices = {b: preemption_matrix(state, build=b) for b in BUILDS}
    names = [c.name for c in sorted(classes, key=lambda c: (-c.value, c.name))]
    rows = [{"preemptor": a, "victim": b, "build": build, "verdict": matrices[build][a, b].verdict,
             "reason": matrices[build][a, b].reason} for build in BUILDS for a in names for b in names]
    if args.format == "json":
        print(json.dumps(rows, indent=1))
    elif args.format == "csv":
        import csv

        w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    else:
        width = max(len(n) for n in names) + 2
        for build, title in (("plugins", "PreemptionToleration (scheduler-plugins)"), ("upstream", "upstream DefaultPreemption")):
            print(f"can a pod of ROW preempt a running pod of COLUMN, {title}; classes of {source}\n")
            print(" " * width + "".join(f"{n:<{width}}" for n in names))
            for a in names:
                print(f"{a:<{width}}" + "".join(f"{matrices[build][a, b].verdict:<{width}}" for b in names))
            print()
        print("why (plugins):")
        for a in names:
            for b in names:
                cell = matrices["plugins"][a, b]
                if cell.verdict != "no":
                    print(f"  {a} -> {b}: {cell.verdict}: {cell.reason}")
    return 0


def _live_classes(kubeconfig: Path) -> tuple:
    """The PriorityClasses of a real cluster, read only."""
    from reference.objects import PriorityClass

    from harness.kube import Kube

    kube = Kube(kubeconfig)
    try:
        kube.check_reachable()
        items = kube.scheduling.list_priority_class().items
    finally:
        kube.close()
    return tuple(PriorityClass(pc.metadata.name, pc.value, bool(pc.global_default),
                               pc.preemption_policy or "PreemptLowerPriority",
                               tuple(sorted((pc.metadata.annotations or {}).items())), pc.description or "")
                 for pc in items)
