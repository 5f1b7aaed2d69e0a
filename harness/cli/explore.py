"""`explore`: generated scenarios on a real cluster against the model; divergences, shrunk."""

from __future__ import annotations

import json
import time
from pathlib import Path

from harness.errors import KitError
from harness.targets import BUILDS, DEFAULT_RELEASE, parse_builds


def register(sub) -> None:
    x = sub.add_parser("explore", help="generated scenarios on a real cluster against the model: "
                                       "divergences, shrunk, as scenario files")
    x.add_argument("--count", type=int, default=100, help="scenarios to generate (default 100)")
    x.add_argument("--seed", type=int, default=1, help="the same seed draws the same scenarios")
    x.add_argument("--scheduler", default=",".join(BUILDS), help="builds to run on (default: both, in turn)")
    x.add_argument("--replay", type=Path, metavar="FILE", help="run one scenario file (a divergence) again")
    x.add_argument("--shrink-rounds", type=int, default=6, help="rounds of shrinking per divergence (0: none)")
    x.add_argument("--k8s-version", metavar="RELEASE", help="Kubernetes release of the clusters (default: the "
                   f"kit's default release, {DEFAULT_RELEASE})")
    x.add_argument("--faults", action="store_true",
                   help="draw faults too (scheduler restarts, pauses, failovers (a leader killed or its lease "
                        "taken), API server restarts, the scheduler's connection cut, at quiet moments and at "
                        "named points of a preemption): each such draw runs on a cluster of its own")
    x.add_argument("--out", type=Path, default=Path("artifacts") / "explore", help="where divergences go")
    x.add_argument("--shard", metavar="i/N",
                   help="run the i-th of N parts of the draws (i from 1; by draw index, round-robin; the seed "
                        "and ids unchanged, so the shards' union is the unsharded draw), or auto/N: i from "
                        "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's, from 0); ./kit merge joins them")
    x.set_defaults(func=run)


def summary_name(seed: int, shard) -> str:
    """The summary's file name without its suffix; a shard's names its shard, so that shards
    sharing an --out folder keep theirs apart."""
    return f"summary-seed{seed}" + ("" if shard.count == 1 else shard.suffix)


def run(args) -> int:
    from harness.explore import campaign as explore
    from harness.build import pins, toolchain
    from harness.explore.generate import generate

    builds = parse_builds(args.scheduler)
    out = args.out
    toolchain.ensure_all(release=args.k8s_version)
    if args.replay is not None and args.shard:
        raise KitError("--shard splits the generated draws; --replay runs one file")
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
    from harness.shards import split

    shard = split.parse(args.shard) if args.shard else split.WHOLE
    begun = time.time()
    drawn = generate(args.count, args.seed, faults=args.faults)
    # Every shard draws all of them (a few seconds) and keeps its own: the same draws, the same ids.
    trees = split.pick(drawn, shard)
    release = args.k8s_version or pins.default_release()
    lines = [f"./kit explore --count {args.count} --seed {args.seed}{' --faults' if args.faults else ''} on Kubernetes {release}: "
             f"{len(drawn)} scenarios drawn" + ("" if shard == split.WHOLE else f", shard {shard}: {len(trees)} of them")]
    print(lines[0], flush=True)
    summaries = []
    for b in builds:
        summaries.append(explore.explore(trees, b, out, shrink_rounds=args.shrink_rounds, release=args.k8s_version or "",
                                         print_=lambda s: print(s, flush=True)))
    for sm in summaries:
        lines += sm.lines()
    print("\n".join(lines[1:]))
    out.mkdir(parents=True, exist_ok=True)
    name = summary_name(args.seed, shard)
    (out / f"{name}.txt").write_text("\n".join(lines) + "\n")
    rec = split.record("explore", shard, [t["id"] for t in trees], begun, seed=args.seed, draws=args.count,
                       release=release, builds=builds)
    (out / f"{name}.json").write_text(json.dumps({"shard": rec, "summaries": [sm.to_json() for sm in summaries]},
                                                 indent=1) + "\n")
    return 1 if any(sm.divergences for sm in summaries) else 0
