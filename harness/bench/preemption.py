"""``./kit bench preemption``: options, targets, and the loop over targets and cluster sizes.

Per target (build@release) one local cluster; in it, for each size in increasing order: grow to N
nodes, fill every slot with a low-priority pod, scrape the scheduler, start the watch, send the wave
of M preemptors, wait until they all run (bounded), scrape again, check the outcome, delete the
wave. A target that fails (its cluster does not start, a fill times out) is one ERROR row and the
run goes on with the next; a wrong outcome is a WRONG row. The tables are printed at the end, the
JSON and the plot written. Exit status: 0 if every row is ok, 1 if any is WRONG or ERROR, 2 for a
usage error, 130 when stopped.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

from harness.bench import check, measure, metrics, report
from harness.bench.workload import NAMESPACE, Workload, fill_timeout, report_progress
from harness.build import pins
from harness.clusters.local import ClusterOptions, LocalCluster
from harness.errors import KitError
from harness.host import console, lifecycle
from harness.host.console import log
from harness.kube import Kube
from harness.run.pods.history import PodHistory
from harness.targets import BUILDS, builds_on, not_built, parse_builds, releases_of, slug, split_target

DEFAULT_NODES = "100,1000,5000"
DEFAULT_PREEMPTORS = 50


DESCRIPTION = """How fast each scheduler build and release preempts, and whether it preempts right.

For each target, a local cluster grown to each --nodes size (kwok nodes of one slot, each taken by a
low-priority pod), then a wave of --preemptors high-priority pods that must each preempt one. Prints
the kit's figures (throughput, p50/p90/p99 of each phase from the preemptor's creation) and the
scheduler's own metrics, and writes DIR/preemption.json and DIR/preemption.png. A wave whose outcome
is not the model's is WRONG, whatever its speed. How to read it all: docs/bench.md."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="./kit bench preemption", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", default=DEFAULT_NODES, metavar="N,N,...",
                   help=f"cluster sizes, one wave each, grown in one cluster per target (default {DEFAULT_NODES})")
    p.add_argument("--preemptors", type=int, default=DEFAULT_PREEMPTORS, metavar="M",
                   help=f"preemptors in each wave, each needing one node's slot (default {DEFAULT_PREEMPTORS})")
    p.add_argument("--scheduler", default=None, metavar="BUILD,...",
                   help=f"builds ({', '.join(BUILDS)}), each on the default release or on --k8s-version's")
    p.add_argument("--k8s-version", default=None, metavar="RELEASE,...",
                   help="Kubernetes release(s) of the control plane, for every --scheduler build")
    p.add_argument("--targets", default=None, metavar="BUILD@RELEASE,...",
                   help="exact targets instead of --scheduler/--k8s-version. Default without any of the three: "
                        "both builds on the default release and upstream on the newest")
    p.add_argument("--grace", type=int, default=1, metavar="S",
                   help="the low pods' termination grace period: how long a victim stays Terminating (default 1)")
    p.add_argument("--out", type=Path, default=Path("artifacts/bench"), metavar="DIR",
                   help="where preemption.json and preemption.png go (default artifacts/bench)")
    return p


def sizes(text: str) -> list[int]:
    try:
        out = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise KitError(f"--nodes: a comma-separated list of node counts (got {text!r})") from None
    if not out or out[0] < 1:
        raise KitError(f"--nodes: node counts of at least 1 (got {text!r})")
    return out


def targets(args: argparse.Namespace) -> list[str]:
    """Every target as build@release."""
    known = pins.releases()
    default = pins.default_release()
    if args.targets:
        if args.scheduler or args.k8s_version:
            raise KitError("--targets names builds and releases itself: leave out --scheduler and --k8s-version")
        out = []
        for t in (x.strip() for x in args.targets.split(",") if x.strip()):
            build, release = split_target(t)
            parse_builds(build, "--targets")
            out.append(f"{build}@{release or default}")
    elif args.scheduler or args.k8s_version:
        builds = parse_builds(args.scheduler or ",".join(BUILDS))
        releases = [r.strip() for r in (args.k8s_version or default).split(",") if r.strip()]
        out = [f"{b}@{r}" for r in releases for b in builds]
    else:
        newest = [r for r in known if not pins.prerelease(r)][-1]  # a preview is not the newest release
        out = [f"{b}@{default}" for b in BUILDS] + ([f"upstream@{newest}"] if newest != default else [])
    for t in out:
        build, release = split_target(t)
        if release not in known:
            raise KitError(f"no Kubernetes release {release} in the kit: choose from {', '.join(known)}")
        if not builds_on(build, release):
            raise KitError(f"{t}: {not_built(build, release)}; the {build} build "
                           f"runs on {', '.join(releases_of(build))}")
    if not out:
        raise KitError("no target to run")
    return list(dict.fromkeys(out))


def scrape(cluster: LocalCluster) -> metrics.Snapshot | str:
    """The scheduler's metrics now, or why they could not be read."""
    try:
        return metrics.parse(metrics.scrape(metrics.endpoint(cluster.ports["kubeSchedulerPort"]),
                                            cluster.cluster_dir / "pki"))
    except Exception as e:  # a missing certificate, a refused connection, a parse error: reported, not fatal
        return f"{type(e).__name__}: {e}"


def scheduler_figures(before: metrics.Snapshot | str, after: metrics.Snapshot | str) -> dict:
    for s in (before, after):
        if isinstance(s, str):
            return {"error": s}
    return metrics.summary(metrics.delta(before, after))


def run_wave(cluster: LocalCluster, kube: Kube, wl: Workload, target: str, nodes: int, m: int) -> dict:
    row: dict = {"target": target, "nodes": nodes, "preemptors": m}
    row["grow_seconds"] = round(wl.grow(nodes, fill_timeout(nodes)), 1)
    report_progress(target, f"{nodes} nodes Ready", row["grow_seconds"])
    row["fill_seconds"] = round(wl.fill(fill_timeout(nodes)), 1)
    report_progress(target, f"a low pod running on each of {nodes} nodes", row["fill_seconds"])
    before = scrape(cluster)
    history = PodHistory(kube, NAMESPACE)
    try:
        t0 = time.monotonic()
        names = wl.wave(m)
        missing = measure.wait_settled(history, names, timeout=120 + 2 * m)
        report_progress(target, f"wave of {m} preemptors at {nodes} nodes settled"
                        + (f" ({len(missing)} not running)" if missing else ""), time.monotonic() - t0)
        after = scrape(cluster)
        timings = measure.wave_timings(history, names)
        row.update(measure.wave_figures(history, names, timings))
        row["problems"] = check.problems(names, measure.facts(history), timings)
    finally:
        history.close()
    row["scheduler"] = scheduler_figures(before, after)
    row["rss_mb"] = {**measure.rss_mb(cluster.pids()),
                     "kit (peak)": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
    wl.reset(timeout=60 + m)
    return row


# The controller-manager removes each new node's not-ready taint (TaintNodesByCondition adds it at
# creation) through its client, 20 requests a second by default: at 1,000 nodes that alone took
# over a minute. Raised for the benchmark's clusters only, so that growing the cluster measures
# kwok and the API server, not a client rate limit; the scheduler keeps its defaults, as measured.
CLUSTER_FLAGS = {"kube-controller-manager": {"kube-api-qps": "500", "kube-api-burst": "1000"}}


def run_target(target: str, node_counts: list[int], m: int, grace: int) -> list[dict]:
    build, release = split_target(target)
    rows: list[dict] = []
    options = ClusterOptions(build=build, release=release or "", name=f"bench-{slug(target)}",
                             extra_args=CLUSTER_FLAGS)
    log(f"[{target}] starting a local cluster")
    try:
        with LocalCluster(options) as cluster:
            kube = Kube(cluster.kubeconfig)
            try:
                wl = Workload(kube, run_id=f"bench-{os.getpid()}", grace=grace)
                wl.prepare()
                for n in node_counts:
                    rows.append(run_wave(cluster, kube, wl, target, n, m))
                    log(f"[{target}] {report.brief(rows[-1])}")
            finally:
                kube.close()
    except KitError as e:
        done = {r["nodes"] for r in rows}
        rows += [{"target": target, "nodes": n, "preemptors": m, "error": str(e)} for n in node_counts if n not in done]
        log(f"[{target}] error: {e}")
    return rows


def main(argv: list[str] | None = None) -> int:
    lifecycle.install_signal_handlers()
    args = parser().parse_args(argv)
    return console.exit_code(lambda: run(args, argv))


def run(args: argparse.Namespace, argv: list[str] | None) -> int:
    node_counts = sizes(args.nodes)
    if args.preemptors < 1 or args.preemptors > node_counts[0]:
        raise KitError(f"--preemptors: between 1 and the smallest cluster's {node_counts[0]} nodes "
                       f"(each preemptor takes one node's slot; got {args.preemptors})")
    if args.grace < 0:
        raise KitError("--grace: seconds, 0 or more")
    chosen = targets(args)
    started = time.time()
    rows = [row for t in chosen for row in run_target(t, node_counts, args.preemptors, args.grace)]
    meta = {"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join(["./kit", "bench", "preemption", *(argv if argv is not None else sys.argv[1:])]),
            "wall_seconds": round(time.time() - started, 1),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
            "grace_seconds": args.grace, "targets": chosen, "nodes": node_counts, "preemptors": args.preemptors}
    print()
    print("\n".join(report.table(rows)))
    print()
    print("the scheduler's own metrics over each wave:")
    print("\n".join(report.scheduler_table(rows)))
    for line in report.problem_lines(rows):
        print(line)
    print(f"\nJSON: {report.write_json(rows, args.out, meta)}")
    try:
        print(f"plot: {report.plot(rows, args.out)}")
    except Exception as e:  # the figures stand without the picture
        print(f"plot not drawn: {type(e).__name__}: {e}")
    return 0 if all(report.outcome(r) == "ok" for r in rows) else 1
