"""`campaign`: the suite in N shards as a Kubernetes Indexed Job, collected and merged (docs/campaign.md)."""

from __future__ import annotations

from pathlib import Path

from harness.targets import DEFAULT_BUILD, DEFAULT_RELEASE, parse_builds


def register(sub) -> None:
    c = sub.add_parser("campaign", help="run the suite in N shards as the pods of a Kubernetes Indexed Job, "
                                        "collect their results, delete what it made, and merge the shards")
    where = c.add_mutually_exclusive_group()
    where.add_argument("--kubeconfig", type=Path, metavar="FILE",
                       help="the cluster to run on (a kind cluster of this Docker host, unless --no-load)")
    where.add_argument("--kind", action="store_true",
                       help="make the kit's own kind cluster for the campaign, and remove it after")
    c.add_argument("--shards", type=int, required=True, metavar="N", help="the Job's completions and parallelism")
    c.add_argument("--scheduler", default=DEFAULT_BUILD,
                   help=f"build(s) each shard tests, comma-separated (default: {DEFAULT_BUILD})")
    c.add_argument("--k8s-version", metavar="RELEASE",
                   help=f"the release of the runner image's binaries (default: the kit's, {DEFAULT_RELEASE})")
    c.add_argument("--image", metavar="TAG", help="a runner image already built (default: `./kit runner-image`'s, "
                                                  "built or found)")
    c.add_argument("--no-load", action="store_true",
                   help="the nodes have the --image already (or pull it): load nothing into them")
    c.add_argument("--out", type=Path, default=Path("artifacts") / "campaign",
                   help="where each campaign's folder goes: shard-i/ per shard, merged/ (default: artifacts/campaign)")
    c.add_argument("--timeout", type=float, default=120, metavar="MINUTES",
                   help="how long the shards may take, from the Job's submission (default: 120)")
    c.add_argument("--manifest", action="store_true",
                   help="print the namespace and the Job as YAML, and run nothing")
    c.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS",
                   help="after --: more arguments for each shard's ./kit conformance (-k, -m, -x, ...)")
    c.set_defaults(func=run)


def run(args) -> int:
    from harness.campaign.run import Options, run as run_campaign

    parse_builds(args.scheduler)
    return run_campaign(Options(
        shards=args.shards, kubeconfig=args.kubeconfig, kind=args.kind, scheduler=args.scheduler,
        release=args.k8s_version, image=args.image, no_load=args.no_load, out=args.out,
        timeout=args.timeout * 60, pytest_args=tuple(args.pytest_args), manifest=args.manifest))
