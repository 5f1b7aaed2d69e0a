"""The model's pod views against the cluster's: the differences that fail a step."""

from __future__ import annotations

from harness.run.pods.expectation import Mismatch
from reference.scheduler import PodView


def compare(predicted: dict[str, PodView], observed: dict[str, PodView],
            allowed: dict[str, frozenset[str]]) -> list[Mismatch]:
    out = []
    for name in sorted(set(predicted) | set(observed)):
        p = predicted.get(name, PodView("gone"))
        o = observed.get(name, PodView("gone"))
        # A victim that is already gone and one still terminating are the same outcome seen at different moments.
        p_phase = "gone" if p.phase in ("terminating", "gone") and p.preempted else p.phase
        o_phase = "gone" if o.phase in ("terminating", "gone") and o.preempted else o.phase
        if p_phase != o_phase:
            out.append(Mismatch(name, "phase", p_phase, o_phase))
            continue
        if p.preempted != o.preempted:
            out.append(Mismatch(name, "preempted", str(p.preempted), str(o.preempted)))
        if p_phase == "running":
            nodes = allowed.get(f"default/{name}", frozenset({p.node}))
            if o.node not in nodes:
                out.append(Mismatch(name, "node", " or ".join(sorted(nodes)), o.node))
        if p_phase == "pending":
            nodes = allowed.get(f"default/{name}", frozenset({p.nominated})) if p.nominated else frozenset({""})
            if o.nominated not in nodes:
                out.append(Mismatch(name, "nominated", " or ".join(sorted(nodes)) or "(none)", o.nominated or "(none)"))
    return out
