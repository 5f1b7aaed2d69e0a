"""The explorer: generated scenarios on a real cluster, compared with the model step by step.

Jepsen's split: the generator draws scenarios (``harness.generate``), the
client runs them (``harness.batch``, the suite's own runner, so the same
isolation and observation), and the checker is the runner's per-step
comparison of what the cluster showed with the model's allowed outcomes. A
scenario whose comparison fails is a divergence; it is shrunk on the cluster
(pods, nodes, classes, steps removed while the same kind of divergence
persists) and written as a scenario file that ``--replay`` runs again.
"""

from __future__ import annotations

import copy as copy_
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import yaml

from harness.host import lifecycle
from harness.errors import KitError
from harness.explore.generate import looks_midway
from harness.formats.nodes import NODE_ACTIONS

# The cluster events a draw may use (harness/explore/cluster_events.py), counted per scenario.
EVENTS = NODE_ACTIONS + ("resizePod",)
from harness.formats.pods import FAULT_ACTIONS
from harness.run.pods.placement import why_alone
from harness.run.pods.result import Result
from harness.formats.pods import Scenario

KINDS = ("outcome", "scheduler fault", "runner")


def kind_of(result: Result) -> str | None:
    """What kind of divergence a result shows, or None for agreement (or a run stopped early)."""
    if result.cancelled:
        return None
    if result.error:
        return "runner"  # the kit could not observe or act: never evidence about the scheduler
    if any(f.fails for s in result.steps for f in s.findings) or result.explained_by_known_fault:
        # A known race of this build and release that moved pods (the plugins build's two-node
        # race) explains the differences beside it: the scheduler's, named, not the model's.
        return "scheduler fault"
    if result.violations:
        return "history rule"  # harness.run.pods.invariants: broken between two looks
    if any(s.mismatches or s.expect_mismatches for s in result.steps):
        return "outcome"
    return None


@dataclass
class Divergence:
    build: str
    kind: str
    original: dict  # the generated tree
    shrunk: dict
    report: str
    reproduced: bool = True  # False: seen once; neither the draw run again nor a smaller one showed it


@dataclass
class Summary:
    build: str
    scenarios: int = 0
    steps: int = 0
    agreed: int = 0
    midway: int = 0  # scenarios with a step looked at before things settle
    known_faults: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    seconds: float = 0.0
    # Cluster events (EVENTS) and faults: how many scenarios used each.
    events: dict[str, int] = field(default_factory=dict)

    def count_events(self, tree: dict) -> None:
        used = {k for step in tree.get("steps", []) for k in step if k in EVENTS + FAULT_ACTIONS}
        used |= {f"during.{k}@{step['during']['at']}" for step in tree.get("steps", []) if "during" in step
                 for k in step["during"] if k != "at"}
        for action in sorted(used):
            self.events[action] = self.events.get(action, 0) + 1

    def to_json(self) -> dict:
        """The counts and each divergence's id and kind (its files stay beside it): for ./kit merge."""
        return {"build": self.build, "scenarios": self.scenarios, "steps": self.steps, "agreed": self.agreed,
                "midway": self.midway, "known_faults": self.known_faults, "seconds": round(self.seconds, 1),
                "events": dict(self.events),
                "divergences": [{"id": d.shrunk["id"], "kind": d.kind, "reproduced": d.reproduced}
                                for d in self.divergences]}

    @classmethod
    def from_json(cls, d: dict) -> Summary:
        return cls(d["build"], d["scenarios"], d["steps"], d["agreed"], d["midway"], d["known_faults"],
                   [Divergence(d["build"], x["kind"], {}, {"id": x["id"]}, "", x["reproduced"])
                    for x in d["divergences"]], d["seconds"], dict(d.get("events", {})))

    def lines(self) -> list[str]:
        by_kind = {k: sum(1 for d in self.divergences if d.kind == k) for k in KINDS}
        out = [f"[{self.build}] {self.scenarios} scenarios ({self.midway} looked mid-way), "
               f"{self.steps} steps compared, {self.agreed} agreed, "
               f"{len(self.divergences)} diverged ({', '.join(f'{k}: {n}' for k, n in by_kind.items())}), "
               f"{self.known_faults} with a known scheduler fault that left the outcome as specified; "
               f"{self.seconds / 60:.1f} min"]
        if any(k in EVENTS for k in self.events):
            out.append("  cluster events, scenarios using each: "
                       + ", ".join(f"{k} {self.events.get(k, 0)}" for k in EVENTS))
        faults = sorted(k for k in self.events if k not in EVENTS)
        if faults:
            out.append("  faults, scenarios using each: " + ", ".join(f"{k} {self.events[k]}" for k in faults))
        out += [f"  {d.shrunk['id']}: {d.kind}" + ("" if d.reproduced else " (seen once)") for d in self.divergences]
        return out


# --- shrinking ---------------------------------------------------------------------


def size(tree: dict) -> int:
    return (len(tree.get("nodes", [])) + len(tree.get("pods", [])) + len(tree.get("priorityClasses", []))
            + len(tree.get("pdbs", [])) + 2 * len(tree.get("steps", []))
            + sum(len(p) for s in tree.get("steps", []) for p in s.values() if isinstance(p, dict)))


def _without(tree: dict, key: str, i: int) -> dict:
    t = copy_.deepcopy(tree)
    del t[key][i]
    return t


def smaller(tree: dict) -> Iterator[dict]:
    """Trees one removal smaller: each may turn out invalid (a dangling name), and is then skipped."""
    for i in range(len(tree.get("steps", []))):
        if len(tree["steps"]) > 1:
            yield _without(tree, "steps", i)
    for i in range(len(tree.get("pods", []))):
        yield _without(tree, "pods", i)
    for i, node in enumerate(tree.get("nodes", [])):
        if len(tree["nodes"]) > 1:
            t = _without(tree, "nodes", i)
            t["pods"] = [p for p in t.get("pods", []) if p["node"] != node["name"]]
            yield t
    for i in range(len(tree.get("priorityClasses", []))):
        yield _without(tree, "priorityClasses", i)
    for i in range(len(tree.get("pdbs", []))):
        yield _without(tree, "pdbs", i)
    # Simpler parts: fewer fields on created pods, no class annotations.
    for i, s in enumerate(tree.get("steps", [])):
        pod = s.get("createPod")
        for k in ("labels", "nodeSelector", "tolerations", "podAffinity", "podAntiAffinity", "priority",
                  "preemptionPolicy", "class"):
            if pod and k in pod:
                t = copy_.deepcopy(tree)
                del t["steps"][i]["createPod"][k]
                yield t
        if pod and "milliCPU" in pod:  # BestEffort again: a request and its QoS class go together
            t = copy_.deepcopy(tree)
            for k in ("qos", "milliCPU"):
                del t["steps"][i]["createPod"][k]
            yield t
    for i, c in enumerate(tree.get("priorityClasses", [])):
        if c.get("annotations"):
            t = copy_.deepcopy(tree)
            del t["priorityClasses"][i]["annotations"]
            yield t


def valid(tree: dict) -> Scenario | None:
    try:
        return Scenario.model_validate(tree)
    except Exception:  # pydantic's ValidationError, or a ScenarioError from a check
        return None


RunMany = Callable[[list[Scenario]], dict[str, Result]]


def shrink(tree: dict, kind: str, run_many: RunMany, rounds: int = 6, per_round: int = 24) -> tuple[dict, str, bool]:
    """The smallest tree found that still diverges in the same way, its report, and whether
    the divergence showed again at all.

    Each round runs up to ``per_round`` one-removal candidates side by side (the first round
    also the tree itself, to tell a repeatable divergence from one seen once) and keeps the
    smallest that still diverges; it stops when none does.
    """
    best, report, again = tree, "", False
    for r in range(rounds):
        lifecycle.check()
        candidates = [dict(tree, id=f"{tree['id']}-again")] if r == 0 else []
        for i, t in enumerate(sorted(smaller(best), key=size)):
            t["id"] = f"{tree['id']}-r{r}c{i}"
            candidates.append(t)
            if len(candidates) > per_round:
                break
        checked = [(t, s) for t, s in ((t, valid(t)) for t in candidates) if s is not None]
        if not checked:
            break
        results = run_many([s for _, s in checked])
        hits = [(t, results[s.id]) for t, s in checked if s.id in results and kind_of(results[s.id]) == kind]
        if not hits:
            break
        again = True
        t, res = min(hits, key=lambda h: size(h[0]))
        if size(t) >= size(best):
            report = report or res.report()
            break
        best, report = t, res.report()
    return best, report, again


# --- the exploration ----------------------------------------------------------------


def run_batch(cluster, build: str, run_id: str, scenarios: list[Scenario], artifacts: Path | None,
              on_result=None) -> dict[str, Result]:
    from harness.run.pods.batch import Batch
    from harness.kube import Kube
    from harness.run.pods.nodes import KwokNodes

    def own(suffix: str, needs):
        # Batch brings each up and down around its scenario.
        from harness.clusters.local import ClusterOptions, LocalCluster
        return LocalCluster(ClusterOptions(build=build, release=cluster.options.release, gates=needs, flush_interval=None,
                                           name=f"explore-{build}-{os.getpid()}-{suffix}"))

    b = Batch(scenarios, Kube(cluster.kubeconfig), cluster, build, run_id, KwokNodes(),
              artifacts=artifacts, alone_cluster=own, on_result=on_result)
    try:
        b.run()
    except BaseException:
        b.cancel()
        raise
    return {sid: r for (sid, _), r in b.results.items()}


def explore(trees: list[dict], build: str, out: Path, shrink_rounds: int = 6, print_=print,
            release: str = "") -> Summary:
    from harness.clusters.local import ClusterOptions, LocalCluster

    started = time.monotonic()
    summary = Summary(build)
    scenarios = []
    for t in trees:
        s = valid(t)
        if s is None:
            raise KitError(f"the generator drew an invalid scenario {t.get('id')}: a bug in harness/generate.py")
        scenarios.append(s)
    by_id = {t["id"]: t for t in trees}
    run_id = f"e{os.getpid() % 100000}"
    build_out = out / build
    build_out.mkdir(parents=True, exist_ok=True)
    # The release's own flush interval: the draws' times are not written around the flush's 30 s
    # period (a short interval would retry parked pods mid-scenario at a moment the model cannot pin).
    with LocalCluster(ClusterOptions(build=build, release=release, name=f"explore-{build}-{os.getpid()}",
                                     flush_interval=None)) as cluster:
        quiet = sum(bool(why_alone(s, build, cluster.options.release)) for s in scenarios)
        print_(f"[{build}] running {len(scenarios)} generated scenarios ({quiet} on a cluster of their own)")
        done = [0, 0]

        def progress(r: Result) -> None:
            # The batch calls this under its lock: a running count, every tenth of the way.
            done[0] += 1
            done[1] += kind_of(r) is not None
            if done[0] % max(len(scenarios) // 10, 1) == 0:
                print_(f"[{build}] {done[0]}/{len(scenarios)} run, {done[1]} diverged so far "
                       f"({time.monotonic() - started:.0f} s)")

        results = run_batch(cluster, build, run_id, scenarios, build_out / "runs", on_result=progress)
        rounds = 0

        def run_many(batch: list[Scenario]) -> dict[str, Result]:
            nonlocal rounds
            rounds += 1
            return run_batch(cluster, build, f"{run_id}s{rounds}", batch, None)

        for s in scenarios:
            r = results.get(s.id)
            if r is None:
                continue
            summary.scenarios += 1
            summary.midway += looks_midway(by_id[s.id])
            summary.count_events(by_id[s.id])
            summary.steps += len(r.steps)
            kind = kind_of(r)
            if kind is None:
                summary.agreed += 1
                summary.known_faults += bool(r.known_faults)
                continue
            print_(f"[{build}] {s.id}: {kind}; shrinking")
            tree = by_id[s.id]
            shrunk, report, again = (shrink(tree, kind, run_many, rounds=shrink_rounds) if shrink_rounds
                                     else (tree, "", False))
            d = Divergence(build, kind, tree, dict(shrunk, id=s.id, title=f"explorer: {kind} divergence",
                                                   spec=f"generated by ./kit explore, shrunk from {s.id}"),
                           report or r.report(), reproduced=again)
            summary.divergences.append(d)
            write(d, build_out)
    summary.seconds = time.monotonic() - started
    return summary


def write(d: Divergence, where: Path) -> None:
    sid = d.shrunk["id"]
    header = (f"# {d.kind} divergence on the {d.build} build, found by ./kit explore.\n"
              f"# Replay: ./kit explore --replay {where / (sid + '.yaml')} --scheduler {d.build}\n")
    (where / f"{sid}.yaml").write_text(header + yaml.safe_dump(d.shrunk, sort_keys=False))
    (where / f"{sid}.original.yaml").write_text(yaml.safe_dump(d.original, sort_keys=False))
    (where / f"{sid}.txt").write_text(d.report + "\n")


def replay(path: Path, build: str, out: Path, release: str = "") -> Result:
    from harness.clusters.local import ClusterOptions, LocalCluster
    from harness.formats.pods import load

    s = load(path)
    with LocalCluster(ClusterOptions(build=build, release=release, name=f"replay-{build}-{os.getpid()}",
                                     flush_interval=None)) as cluster:
        results = run_batch(cluster, build, f"r{os.getpid() % 100000}", [s], out / "replay")
    if s.id not in results:
        raise KitError(f"{path}: the run was stopped before a verdict")
    return results[s.id]


__all__ = ["explore", "replay", "shrink", "smaller", "kind_of", "Summary"]
