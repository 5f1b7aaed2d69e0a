"""priority-conformance: the command line for people exploring by hand.

  cluster up|down|status   the embedded local cluster, kept running between commands
  build                    build (or find cached) the control-plane binaries
  validate [FILES]         check scenario files without a cluster
  explain FILE             step the model through a scenario and say why, node by node
  explore --count N        generated scenarios against the model on a real cluster
  matrix FILE              which class can preempt which: immediately, after N s, never
"""

from __future__ import annotations

from harness import REPO

import argparse
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import KitError



def _state_dir() -> Path:
    from harness.build.toolchain import cache_root

    return cache_root() / "clusters"


def cmd_cluster_up(args) -> int:
    from harness.clusters.local import ClusterOptions, LocalCluster

    record = _state_dir() / f"{args.name}.json"
    if record.exists():
        raise KitError(f"a cluster named {args.name} is already recorded ({record}); run `cluster down --name {args.name}` first")
    workdir = _state_dir() / args.name
    options = ClusterOptions(build=args.scheduler, release=args.k8s_version or "", scheduler_binary=args.scheduler_binary,
                             scheduler_config=args.scheduler_config, name=args.name, workdir=workdir)
    c = LocalCluster(options)
    c.up()  # on failure or Ctrl-C, up() has already removed what it started
    c.keep()  # meant to outlive this command: no watchdog, no reaping
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"name": args.name, "build": args.scheduler, "release": options.release,
                                  "workdir": str(c.workdir),
                                  "kwokctl": str(c.kwokctl_path), "kubeconfig": str(c.kubeconfig)}))
    print(f"cluster {args.name} is up ({args.scheduler} scheduler, Kubernetes {options.release}) "
          f"in {c.timings['up']:.1f} s")
    print(f"export KUBECONFIG={c.kubeconfig}")
    print(f"stop it with: ./kit cluster down --name {args.name}")
    return 0


def _recorded(name: str) -> dict:
    record = _state_dir() / f"{name}.json"
    if not record.exists():
        known = sorted(p.stem for p in _state_dir().glob("*.json")) if _state_dir().exists() else []
        raise KitError(f"no cluster named {name} is recorded" + (f" (known: {', '.join(known)})" if known else ""))
    return json.loads(record.read_text())


def cmd_cluster_down(args) -> int:
    from harness.clusters.local import LocalCluster

    rec = _recorded(args.name)
    c = LocalCluster.kept(rec["name"], Path(rec["workdir"]), Path(rec["kwokctl"]))
    c.down()
    import shutil

    shutil.rmtree(rec["workdir"], ignore_errors=True)
    (_state_dir() / f"{args.name}.json").unlink()
    print(f"cluster {args.name} stopped and removed in {c.timings['down']:.1f} s")
    return 0


def cmd_cluster_status(args) -> int:
    from harness.clusters.local import LocalCluster

    records = sorted(_state_dir().glob("*.json")) if _state_dir().exists() else []
    if not records:
        print("no local cluster is recorded")
        return 0
    for record in records:
        rec = json.loads(record.read_text())
        c = LocalCluster.kept(rec["name"], Path(rec["workdir"]))
        alive = {name: c.process_alive(name) for name in c.pids()}
        state = "running" if alive and all(alive.values()) else ("partly running" if any(alive.values()) else "stopped")
        print(f"{rec['name']}: {state} ({rec['build']} scheduler); KUBECONFIG={rec['kubeconfig']}")
        for name, ok in sorted(alive.items()):
            print(f"  {name:<24} {'up' if ok else 'DOWN'}  log: {c.log_path(name)}")
    return 0


def cmd_build(args) -> int:
    from harness.build import toolchain

    chosen = toolchain.releases() if args.k8s_version == "all" else [args.k8s_version or toolchain.default_release()]
    for release in chosen:
        started = time.monotonic()
        for name, path in toolchain.ensure_all(release=release).items():
            print(f"{name:<34} {path}")
        print(f"Kubernetes {release}: " + ", ".join(f"{k} {v}" for k, v in toolchain.versions(release).items())
              + f" ({time.monotonic() - started:.0f} s)")
    return 0


def cmd_kind_image(args) -> int:
    from harness.build import node_image

    started = time.monotonic()
    tag = node_image.ensure()
    print(f"{tag} ({time.monotonic() - started:.0f} s)")
    if args.save:
        subprocess.run(["docker", "save", "-o", str(args.save), tag], check=True)
        print(f"saved to {args.save}: on another Docker host, `docker load -i {args.save.name}` and "
              f"`./kit conformance --cluster kind --kind-node-image {tag}`")
    return 0


def cmd_add_release(args) -> int:
    from harness.build import wrappers

    root = wrappers.write_release(args.kubernetes, args.etcd, args.scheduler_plugins)
    print(f"wrote {root}; build it with: ./kit build --k8s-version {root.name}")
    return 0


def cmd_validate(args) -> int:
    from harness.formats.pods import CATALOGUE, ScenarioError, load, load_sources, scenario_files

    files = scenario_files([Path(f) for f in args.files] or [CATALOGUE])
    failed = 0
    for f in files:
        try:
            load(f)
        except ScenarioError as e:
            failed += 1
            print(f"INVALID {e}")
    if not failed:
        try:
            load_sources(files)  # ids unique across folders
        except ScenarioError as e:
            failed += 1
            print(f"INVALID {e}")
    print(f"{len(files) - failed} valid, {failed} invalid")
    return 1 if failed else 0


def cmd_explain(args) -> int:
    from reference import scheduler as sched

    from harness.run.pods.expectation import apply_step, check_expect, model_messages, model_priorities, model_rejections
    from harness.formats.pods import initial_state, load, to_pdb

    s = load(args.file)
    build = args.scheduler
    now = datetime.now(timezone.utc)
    from dataclasses import replace

    state = initial_state(s, now)
    state = replace(state, pdbs=tuple(to_pdb(b, "default") for b in s.pdbs))
    from reference.release import DEFAULT_RELEASE, RELEASES

    release = args.k8s_version or DEFAULT_RELEASE
    if release not in RELEASES:
        raise KitError(f"--k8s-version: the model knows releases {', '.join(RELEASES)}, not {release}")
    world = sched.start(state, build, now, release)
    scope = "" if s.applies_to(build, release) else " (the scenario does not specify this build or release)"
    print(f"{s.id}: {s.title}\nspec: {s.spec}\nmodel of the {build} scheduler, Kubernetes {release}{scope}\n")
    print("start: " + ", ".join(f"{p.name} (priority {p.priority}) on {p.node_name}" for p in state.pods) or "start: no pods")
    for i, step in enumerate(s.steps):
        before = world
        world = apply_step(world, step)
        print(f"\nstep {i}: {step.action or 'expect'}" + (f" {_step_arg(step)}" if step.action else ""))
        for line in world.log[len(before.log):]:
            print(f"  {line}")
        for pr in world.predictions[len(before.predictions):]:
            for v in pr.per_node:
                mark = "candidate" if v.candidate else "no"
                print(f"    {pr.pod} / node {v.node}: {mark}: {v.reason}")
                for key, why in v.spared:
                    print(f"      spared {key}: {why}")
                for key, why in v.exempted:
                    print(f"      exempted {key}: {why}")
            if pr.retry_not_before:
                print(f"    a toleration ends at {pr.retry_not_before.isoformat()}; that is no cluster event,"
                      " so the retry comes from another event or the 5-minute flush")
        if step.expect:
            miss = check_expect(step.expect, sched.view(world), model_rejections(world), model_priorities(world),
                                model_messages(world))
            print("  expect: " + ("met" if not miss else "NOT met: " + "; ".join(
                f"{m.pod} {m.field}: wanted {m.expected}, model has {m.actual}" for m in miss)))
    return 0


def _step_arg(step) -> str:
    value = getattr(step, step.action)
    if hasattr(value, "name"):
        return value.name
    return str(value)


def cmd_matrix(args) -> int:
    from reference.objects import ClusterState
    from reference.toleration import preemption_matrix

    if (args.file is None) == (args.kubeconfig is None):
        raise KitError("matrix: give a scenario FILE or --kubeconfig PATH (a cluster whose classes to read)")
    if args.kubeconfig is not None:
        classes, source = _live_classes(args.kubeconfig), f"the cluster of {args.kubeconfig}"
    else:
        from harness.formats.pods import load, to_class

        classes, source = tuple(to_class(c) for c in load(args.file).priorityClasses), str(args.file)
    if not classes:
        raise KitError(f"{source} has no PriorityClasses")
    state = ClusterState(priority_classes=classes)
    builds = ("plugins", "upstream")
    matrices = {b: preemption_matrix(state, build=b) for b in builds}
    names = [c.name for c in sorted(classes, key=lambda c: (-c.value, c.name))]
    rows = [{"preemptor": a, "victim": b, "build": build, "verdict": matrices[build][a, b].verdict,
             "reason": matrices[build][a, b].reason} for build in builds for a in names for b in names]
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


def cmd_mutants(args) -> int:
    from harness import mutants as mutate

    mutants = mutate.load_all()
    skipped: list[str] = []
    if args.mutant:
        known = {m.id for m in mutants}
        unknown = [i for i in args.mutant if i not in known]
        if unknown:
            raise KitError(f"--mutant: no mutant named {', '.join(unknown)} in {mutate.MUTANTS}")
        mutants = [m for m in mutants if m.id in args.mutant]
    elif not args.full:
        # An equivalent mutant cannot count either way, and surviving costs a whole catalogue run.
        skipped = [m.id for m in mutants if m.equivalent]
        mutants = [m for m in mutants if not m.equivalent]
        if skipped:
            print(f"not run, argued equivalent (run them with --full or --mutant): {', '.join(skipped)}")
    builds = _builds(args.scheduler)
    from harness.build import toolchain

    toolchain.ensure_all()
    out = REPO / "artifacts" / "mutants"
    started = time.monotonic()
    baseline, runs = mutate.kill_matrix(mutants, builds, args.jobs, args.full, out,
                                        print_=lambda s: print(s, flush=True))
    lines, score = mutate.summary(mutants, runs)
    if skipped:
        lines.append(f"not run, argued equivalent: {', '.join(skipped)}")
    wall = time.monotonic() - started
    lines.append(f"wall time: {wall / 60:.1f} min ({len(mutants)} mutants, builds {', '.join(builds)}, "
                 f"{args.jobs} at a time)")
    print("\n" + "\n".join(lines))
    (out / "matrix.txt").write_text("\n".join(lines) + "\n")
    survivors = [m.id for m in mutants if not m.equivalent and not any(r.killed for r in runs[m.id])]
    return 1 if survivors else 0


def _builds(text: str) -> list[str]:
    builds = [b.strip() for b in text.split(",") if b.strip()]
    if not builds or any(b not in ("plugins", "upstream") for b in builds):
        raise KitError(f"--scheduler: choose from plugins, upstream (got {text!r})")
    return builds


def cmd_explore(args) -> int:
    from harness.explore import campaign as explore
    from harness.build import toolchain
    from harness.explore.generate import generate

    builds = _builds(args.scheduler)
    out = args.out
    toolchain.ensure_all(release=args.k8s_version)
    if args.replay is not None:
        diverged = False
        for b in builds:
            r = explore.replay(args.replay, b, out, args.k8s_version or "")
            kind = explore.kind_of(r)
            diverged |= kind is not None
            print(f"[{b}] {args.replay}: " + (f"{kind} divergence\n{r.report()}" if kind else
                                             f"model and cluster agree on {len(r.steps)} step(s)"))
        return 1 if diverged else 0
    if args.count < 1:
        raise KitError("--count: at least 1")
    trees = generate(args.count, args.seed)
    release = args.k8s_version or toolchain.default_release()
    lines = [f"./kit explore --count {args.count} --seed {args.seed} on Kubernetes {release}: "
             f"{len(trees)} scenarios drawn"]
    print(lines[0], flush=True)
    summaries = []
    for b in builds:
        summaries.append(explore.explore(trees, b, out, shrink_rounds=args.shrink_rounds, release=args.k8s_version or "",
                                         print_=lambda s: print(s, flush=True)))
    for sm in summaries:
        lines += sm.lines()
    print("\n".join(lines[1:]))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"summary-seed{args.seed}.txt").write_text("\n".join(lines) + "\n")
    return 1 if any(sm.divergences for sm in summaries) else 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="priority-conformance", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    cl = sub.add_parser("cluster", help="the embedded local cluster").add_subparsers(dest="action", required=True)
    up = cl.add_parser("up", help="start a local cluster and leave it running")
    up.add_argument("--scheduler", choices=["plugins", "upstream"], default="plugins")
    up.add_argument("--scheduler-binary", type=Path)
    up.add_argument("--scheduler-config", type=Path)
    up.add_argument("--name", default="explore")
    up.add_argument("--k8s-version", metavar="RELEASE", help="Kubernetes release of the control plane "
                    "(default: the newest on which both builds run)")
    up.set_defaults(func=cmd_cluster_up)
    down = cl.add_parser("down", help="stop a local cluster and remove its files")
    down.add_argument("--name", default="explore")
    down.set_defaults(func=cmd_cluster_down)
    st = cl.add_parser("status", help="show recorded local clusters and their processes")
    st.set_defaults(func=cmd_cluster_status)
    b = sub.add_parser("build", help="build or find the cached control-plane binaries")
    b.add_argument("--k8s-version", metavar="RELEASE", help="this release's binaries, or all (default: the "
                   "newest release on which both builds run)")
    b.set_defaults(func=cmd_build)
    ki = sub.add_parser("kind-image", help="build (or find) the kind node image of the kit's release, offline: "
                                           "Debian packages, the kit's builds, no registry")
    ki.add_argument("--save", type=Path, default=None, metavar="FILE",
                    help="also write it to FILE with `docker save` (to carry to an air-gapped host)")
    ki.set_defaults(func=cmd_kind_image)
    ar = sub.add_parser("add-release", help="write the wrapper Go modules of a Kubernetes release (for maintainers)")
    ar.add_argument("--kubernetes", required=True, metavar="vX.Y.Z", help="k8s.io/kubernetes version")
    ar.add_argument("--etcd", required=True, metavar="vX.Y.Z", help="etcd server version (kubeadm's for the release)")
    ar.add_argument("--scheduler-plugins", metavar="VERSION", help="a scheduler-plugins release that builds on it")
    ar.set_defaults(func=cmd_add_release)
    v = sub.add_parser("validate", help="check scenario files (or folders of them; default: the catalogue)")
    v.add_argument("files", nargs="*", metavar="PATH")
    v.set_defaults(func=cmd_validate)
    e = sub.add_parser("explain", help="step the model through a scenario file, with reasons")
    e.add_argument("file", type=Path)
    e.add_argument("--scheduler", choices=["plugins", "upstream"], default="plugins")
    e.add_argument("--k8s-version", metavar="RELEASE", help="the release whose behaviour to model (default 1.34)")
    e.set_defaults(func=cmd_explain)
    mu = sub.add_parser("mutants", help="run the catalogue against seeded scheduler bugs: the kill matrix")
    mu.add_argument("--mutant", action="append", help="only this mutant (repeatable)")
    mu.add_argument("--scheduler", default="plugins,upstream", help="builds to mutate (default: both)")
    mu.add_argument("--jobs", type=int, default=2, help="mutants run at once, each on its own cluster (default 2)")
    mu.add_argument("--full", action="store_true",
                    help="run every scenario on every build a mutant affects (default: stop at the first kill), "
                         "and the mutants argued equivalent too")
    mu.set_defaults(func=cmd_mutants)
    x = sub.add_parser("explore", help="generated scenarios on a real cluster against the model: "
                                       "divergences, shrunk, as scenario files")
    x.add_argument("--count", type=int, default=100, help="scenarios to generate (default 100)")
    x.add_argument("--seed", type=int, default=1, help="the same seed draws the same scenarios")
    x.add_argument("--scheduler", default="plugins,upstream", help="builds to run on (default: both, in turn)")
    x.add_argument("--replay", type=Path, metavar="FILE", help="run one scenario file (a divergence) again")
    x.add_argument("--shrink-rounds", type=int, default=6, help="rounds of shrinking per divergence (0: none)")
    x.add_argument("--k8s-version", metavar="RELEASE", help="Kubernetes release of the clusters (default: the "
                   "newest on which both builds run)")
    x.add_argument("--out", type=Path, default=REPO / "artifacts" / "explore", help="where divergences go")
    x.set_defaults(func=cmd_explore)
    m = sub.add_parser("matrix", help="who can preempt whom, now, after N s or never: a scenario's classes "
                                      "or a live cluster's (read only)")
    m.add_argument("file", type=Path, nargs="?")
    m.add_argument("--kubeconfig", type=Path, help="read the PriorityClasses of this cluster (changes nothing)")
    m.add_argument("--format", choices=["table", "csv", "json"], default="table")
    m.set_defaults(func=cmd_matrix)
    return p


def main(argv: list[str] | None = None) -> int:
    from harness.host.lifecycle import install_signal_handlers

    install_signal_handlers()
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except KitError as e:
        print(f"priority-conformance: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("priority-conformance: interrupted; everything started was stopped", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): the rest of the output is not wanted.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
