"""`merge`: the results of a campaign's shards (CI jobs, an Indexed Job's pods) as one report."""

from __future__ import annotations

from pathlib import Path



def register(sub) -> None:
    m = sub.add_parser("merge", help="merge shards' results (JUnit, kill matrix, explorer, release matrix) into "
                                     "the report one machine prints, and say which shard ran what and how long")
    m.add_argument("dirs", type=Path, nargs="+", metavar="DIR",
                   help="each shard's results folder (its artifacts; searched for JUnit files, runs.json, "
                        "summary-seed*.json, release-matrix.json, .test_durations and shard records)")
    m.add_argument("--out", type=Path, default=Path("artifacts") / "merged",
                   help="where the merged files go (default: artifacts/merged)")
    m.set_defaults(func=run)


def run(args) -> int:
    from harness.shards.merge import merge

    report = merge(args.dirs, args.out)
    print("\n".join(report.lines[1:]))  # the first line is a section's blank separator
    # Exit as one run would (1: a failed test, a survivor, a divergence), and 1 also when the
    # shards do not add up to one run: a green merge of an incomplete campaign would mislead.
    return 1 if report.failed or report.problems else 0
