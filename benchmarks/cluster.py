"""Figures for the embedded local cluster: cold build, warm bring-up, teardown.

Targets: bring-up <= 10 s warm, teardown <= 3 s.
Run: ./kit bench cluster [--cold] [--runs N]
  --cold  also build everything into a fresh, temporary cache and time it
          (about 10 minutes on two cores; Go's module cache is reused).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.build import toolchain  # noqa: E402
from harness.clusters.local import ClusterOptions, LocalCluster  # noqa: E402
from harness.targets import BUILDS  # noqa: E402


def cold_build() -> float:
    tmp = tempfile.mkdtemp(prefix="priority-conformance-cold-")
    old = os.environ.get("PRIORITYKIT_CACHE")
    os.environ["PRIORITYKIT_CACHE"] = tmp
    try:
        t0 = time.perf_counter()
        toolchain.ensure_all()
        return time.perf_counter() - t0
    finally:
        if old is None:
            del os.environ["PRIORITYKIT_CACHE"]
        else:
            os.environ["PRIORITYKIT_CACHE"] = old
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if args.cold:
        print(f"cold build of every binary: {cold_build():.0f} s")
    t0 = time.perf_counter()
    toolchain.ensure_all()
    print(f"warm build check (cache hit, nothing built): {time.perf_counter() - t0:.2f} s")
    for build in BUILDS:
        ups, downs = [], []
        for i in range(args.runs):
            c = LocalCluster(ClusterOptions(build=build, name=f"bench-{build}-{i}"))
            try:
                c.up()
            finally:
                c.down()
            ups.append(c.timings["up"])
            downs.append(c.timings["down"])
        print(f"{build:<9} bring-up (warm, to ready): median {statistics.median(ups):.2f} s, max {max(ups):.2f} s; "
              f"teardown: median {statistics.median(downs):.2f} s, max {max(downs):.2f} s  ({args.runs} runs)")


if __name__ == "__main__":
    main()
