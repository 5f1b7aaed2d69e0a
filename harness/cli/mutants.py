"""`mutants`: the catalogue against seeded scheduler bugs, the kill matrix."""

from __future__ import annotations

import json
import time
from pathlib import Path

from harness.errors import KitError
from harness.targets import BUILDS, parse_builds


def register(sub) -> None:
    mu = sub.add_parser("mutants", help="run the catalogue against seeded scheduler bugs: the kill matrix")
    mu.add_argument("--mutant", action="append", help="only this mutant (repeatable)")
    mu.add_argument("--scheduler", default=",".join(BUILDS), help="builds to mutate (default: both)")
    mu.add_argument("--jobs", type=int, default=2, help="mutants run at once, each on its own cluster (default 2)")
    mu.add_argument("--full", action="store_true",
                    help="run every scenario on every build a mutant affects (default: stop at the first kill), "
                         "and the mutants argued equivalent too")
    mu.add_argument("--rules", action="store_true",
                    help="print each rule, the mutants that break it and the last kill matrix's verdict; run nothing")
    mu.add_argument("--shard", metavar="i/N",
                    help="run the i-th of N parts of the mutants (i from 1), or auto/N: i from JOB_COMPLETION_INDEX "
                         "(a Kubernetes Indexed Job's, from 0); every shard runs the baseline itself; "
                         "./kit merge joins the shards' runs.json")
    mu.add_argument("--out", type=Path, default=Path("artifacts") / "mutants",
                    help="where the matrix, runs.json and each run's log and JUnit go (default: artifacts/mutants)")
    mu.set_defaults(func=run)


RUNS = "runs.json"  # every run of every mutant of this shard (or of the whole matrix), for ./kit merge


def rules_table() -> int:
    from harness.formats.mutants import MUTANTS, load_all, load_rules
    from harness.mutants import rules, runs as kill

    last = Path("artifacts") / "mutants" / RUNS
    verdicts = kill.verdicts_from_runs(json.loads(last.read_text())) if last.exists() else {}
    lines = rules.table(load_rules(MUTANTS), load_all(), verdicts)
    print("\n".join(lines))
    print(f"(verdicts from {last})" if last.exists() else "(no kill matrix yet: run ./kit mutants)")
    return 0


def _without_kind(mutants, asked: bool) -> tuple[str, list[str]]:
    """The kubelet mutants (they run on kind) when this machine cannot run kind, and why. Asked
    for by name, that is an error; in the whole matrix they are reported as not run."""
    if not any(m.cluster == "kind" for m in mutants):
        return "", []
    from harness.clusters.kind import preflight

    try:
        preflight(None)
    except KitError as e:
        if asked:
            raise KitError(f"--mutant: a kubelet mutant runs on kind: {e}") from None
        print(f"not run, kubelet mutants: {e}", flush=True)
        return str(e), [m.id for m in mutants if m.cluster == "kind"]
    return "", []


def run(args) -> int:
    from harness.formats.mutants import MUTANTS, load_all
    from harness.mutants import matrix, runs as kill

    if args.rules:
        return rules_table()
    mutants = load_all()
    skipped: list[str] = []
    if args.mutant:
        known = {m.id for m in mutants}
        unknown = [i for i in args.mutant if i not in known]
        if unknown:
            raise KitError(f"--mutant: no mutant named {', '.join(unknown)} in {MUTANTS}")
        mutants = [m for m in mutants if m.id in args.mutant]
    elif not args.full:
        # An equivalent mutant cannot count either way, and surviving costs a whole catalogue run.
        skipped = [m.id for m in mutants if m.equivalent]
        mutants = [m for m in mutants if not m.equivalent]
        if skipped:
            print(f"not run, argued equivalent (run them with --full or --mutant): {', '.join(skipped)}")
    builds = parse_builds(args.scheduler)
    why_not_kind, no_kind = _without_kind(mutants, asked=bool(args.mutant))
    mutants = [m for m in mutants if m.id not in no_kind]
    from harness.shards import split

    shard = split.parse(args.shard) if args.shard else split.WHOLE
    if shard != split.WHOLE:
        # By sorted id (load_all's order), the same parts on every machine given the same options.
        # With -x a mutant costs one catalogue run up to its first kill, whatever builds it affects;
        # with --full it runs on each of them.
        whole = len(mutants)
        mutants = split.pick(mutants, shard, (lambda m: len(set(m.builds) & set(builds))) if args.full
                             else (lambda m: 1))
        print(f"shard {shard}: {len(mutants)} of {whole} mutants: {', '.join(m.id for m in mutants) or 'none'}",
              flush=True)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    begun = time.time()
    started = time.monotonic()
    if mutants:
        from harness.build import toolchain

        toolchain.ensure_all()
        baseline, runs = matrix.kill_matrix(mutants, builds, args.jobs, args.full, out,
                                             print_=lambda s: print(s, flush=True))
    else:
        baseline, runs = [], {}
    lines, score = kill.summary(mutants, runs)
    if skipped:
        lines.append(f"not run, argued equivalent: {', '.join(skipped)}")
    if no_kind:
        lines.append(f"NOT RUN, kubelet mutants ({why_not_kind}): {', '.join(no_kind)}")
    wall = time.monotonic() - started
    lines.append(f"wall time: {wall / 60:.1f} min ({len(mutants)} mutants, builds {', '.join(builds)}, "
                 f"{args.jobs} at a time)")
    if shard != split.WHOLE:
        lines.append(f"shard {shard} only: ./kit merge joins every shard's {RUNS} into the whole matrix")
    print("\n" + "\n".join(lines))
    (out / "matrix.txt").write_text("\n".join(lines) + "\n")
    rec = split.record("mutants", shard, [m.id for m in mutants], begun, builds=builds, full=args.full,
                       only=sorted(args.mutant or []), skipped=skipped, jobs=args.jobs)
    (out / RUNS).write_text(json.dumps(kill.runs_data(rec, baseline, runs), indent=1) + "\n")
    survivors = [m.id for m in mutants if not m.equivalent and not any(r.killed for r in runs[m.id])]
    return 1 if survivors else 0
