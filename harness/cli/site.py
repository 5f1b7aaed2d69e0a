"""`site`: the catalogue as a static spec site, one page per rule area and per scenario, with the
model's predictions and, given a run's JUnit XML, its verdicts. No cluster needed."""

from __future__ import annotations

import time
from pathlib import Path

DEFAULT_OUT = Path("artifacts/site")


def register(sub) -> None:
    s = sub.add_parser("site", help="render the catalogue (pods and Karmada) as a static HTML spec site")
    s.add_argument("files", nargs="*", metavar="PATH",
                   help="scenario files or folders (default: the kit's catalogue, both kinds)")
    s.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
                   help=f"where to write the site (default: {DEFAULT_OUT})")
    s.add_argument("--runs", type=Path, default=None, metavar="DIR",
                   help="a folder holding a conformance run's JUnit XML (--junitxml): its verdicts on the pages")
    s.set_defaults(func=site)


def site(args) -> int:
    from harness.site import model
    from harness.site.render import write_site
    from harness.site.runs import read_runs

    started = time.monotonic()
    loaded = model.load([Path(f) for f in args.files] or None)
    verdicts = read_runs(args.runs, [s.id for _, s in loaded]) if args.runs is not None else {}
    built = model.build(loaded, verdicts, runs=str(args.runs) if args.runs is not None else "")
    written = write_site(built, args.out)
    pages = [p for p in written if p.suffix == ".html"]
    recorded = sum(built.counts.values())
    print(f"{len(pages)} pages ({len(built.areas)} areas, {len(built.scenarios)} scenarios"
          + (f", {recorded} recorded verdicts" if args.runs is not None else "")
          + f") in {time.monotonic() - started:.1f} s; open {args.out / 'index.html'}")
    return 0
