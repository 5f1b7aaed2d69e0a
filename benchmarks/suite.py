"""Where a stranger's first run goes: the README's two commands from a fresh clone with an empty
kit cache, split into the virtualenv, each binary's download and compile, the clusters' start, the
longest scenario, the unit tests and the total.

Run: ./kit bench suite [--cold-go] [--keep] [-- CONFORMANCE ARGS...]
  --cold-go  Go's module and build caches empty too (a machine that never built Go); by default
             they are this machine's, as a developer's second clone finds them
  --keep     keep the clone (its artifacts/) instead of removing it
  after --, arguments for `./kit conformance` (e.g. `-- -k smoke`); default: none, the README's
  command as written

It runs the commands in the background, as a non-interactive shell does (no terminal), and reads
the figures from the run's own record (artifacts/run-summary.json: the builds it made, its
targets' cluster starts and longest scenarios), never from its printed text.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.run import summary  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, int]:
    """Seconds and exit status of ``cmd``, its output in ``log``, with no terminal and no input."""
    t0 = time.monotonic()
    with open(log, "a") as out:
        status = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True).returncode
    return time.monotonic() - t0, status


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:4.1f} s" if seconds >= 60 else f"{seconds:.1f} s"


def main() -> int:
    ap = argparse.ArgumentParser(prog="bench suite")
    ap.add_argument("--cold-go", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("conformance", nargs="*")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="priority-conformance-bench-suite-"))
    clone, log = scratch / "clone", scratch / "output.log"
    env = {k: v for k, v in os.environ.items() if k not in ("PRIORITYKIT_VENV",)}
    env["PRIORITYKIT_CACHE"] = str(scratch / "cache")
    if args.cold_go:
        env["GOMODCACHE"], env["GOCACHE"] = str(scratch / "gomod"), str(scratch / "gocache")
    try:
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        venv, status = timed(["./kit", "--version"], clone, env, log)
        conf, conf_status = timed(["./kit", "conformance", "-q", *args.conformance], clone, env, log)
        test, test_status = timed(["./kit", "test", "-q"], clone, env, log)
        record = summary.read(clone / "artifacts" / summary.FILE)
        print(f"bench suite: a fresh clone of {record.commit[:7]}, an empty kit cache"
              f"{' and empty Go caches' if args.cold_go else ' (Go caches as this machine has them)'}, "
              f"{record.machine.cores} cores; output in {log if args.keep else 'a folder removed at the end'}")
        print(f"  {'virtualenv':<44} {minutes(venv)}")
        built = 0.0
        for b in record.builds:
            built += b["seconds"]
            print(f"  {'build ' + b['module']:<44} {minutes(b['seconds'])}  "
                  f"({b['downloads']} modules downloaded, {b['packages']} packages compiled)")
        for t in record.targets:
            if t.cluster_up_seconds is not None:
                print(f"  {'cluster start, ' + t.name:<44} {minutes(t.cluster_up_seconds)}")
            print(f"  {'longest scenario, ' + t.name:<44} {minutes(t.longest_seconds)}  ({t.longest_scenario})")
        print(f"  {'./kit conformance, build included':<44} {minutes(conf)}  (exit {conf_status}; "
              f"binaries {minutes(built)}, tests {minutes(max(0.0, record.wall_seconds - built))})")
        print(f"  {'./kit test':<44} {minutes(test)}  (exit {test_status})")
        print(f"  {'total':<44} {minutes(venv + conf + test)}")
        return 0 if status == conf_status == test_status == 0 else 1
    finally:
        if args.keep:
            print(f"kept: {scratch}")
        else:
            if args.cold_go:  # Go keeps its module cache read-only: only go itself removes it
                subprocess.run(["go", "clean", "-modcache"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
