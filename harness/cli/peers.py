"""`peers`: upstream's own preemption test cases against the kit, the peer suite's table."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("peers", help="upstream's own preemption test cases: which the kit expresses "
                                     "(a scenario, a model test), which it cannot and why, with counts")
    p.add_argument("--list", action="store_true", help="one line per case, not only the counts")
    p.add_argument("--project", choices=["kubernetes", "scheduler-plugins", "karmada"], help="only this project")
    p.add_argument("--index", type=Path, default=None, help="another index file (default: peers/upstream-cases.yaml)")
    p.set_defaults(func=run)


def run(args) -> int:
    from harness.formats import peers

    cases = peers.load(args.index) if args.index else peers.load()
    if args.project:
        cases = [c for c in cases if c.project == args.project]
    files: dict[tuple[str, str, str], Counter] = {}
    for c in cases:
        files.setdefault((c.project, c.release, c.file), Counter())[c.status] += 1
    print(f"{'project':<18} {'release':<13} {'cases':>5} {'expressed':>9} {'to do':>6} {'cannot':>6}  file")
    for (project, release, file), n in sorted(files.items()):
        print(f"{project:<18} {release:<13} {sum(n.values()):>5} {n['expressed']:>9} {n['to do']:>6} "
              f"{n['not expressible']:>6}  {file}")
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
            print(f"{c.where}: {how}")
    return 0
