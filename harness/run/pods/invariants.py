"""Rules the whole recorded history must keep, whatever happened between two looks.

The step checks compare states the runner looked at; a scheduler can break the spec between
two looks and end where the model does (a restart mid-preemption that deletes a victim without
marking it, or preempts a pod of the preemptor's own priority and is then made whole by the
next attempt). Each rule here reads every recorded version and event, as a Jepsen checker reads
a history, and names the versions that break it. A broken rule is a difference from the spec
(a verdict against the build), never a named fault.

Rules, from the pinned releases' code (docs/semantics.md, "History rules"):

- ``victim-of-lower-priority``: a preemptor only evicts pods of lower priority than its own
  (``preemption.go`` SelectVictimsOnNode takes only pods whose priority is lower; the pod-group
  path of 1.37 and PreemptionToleration keep that test).
- ``marked-before-deleted``: a victim carries the DisruptionTarget condition
  (PreemptionByScheduler) before its deletion is recorded (``preemption/executor.go``
  PrepareCandidate patches the condition and deletes only once the patch succeeded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from harness.kube import disrupted_by_preemption
from harness.run.pods.faults import PREEMPTED_BY


@dataclass(frozen=True)
class Violation:
    rule: str
    evidence: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.evidence}"


@dataclass(frozen=True)
class History:
    """What the rules read: every recorded pod version in order, and the Preempted events.
    ``complete``: no gap in the versions (the watch never had to list again after a 410)."""

    versions: tuple  # harness.run.pods.history.Version
    preempted_events: tuple
    complete: bool = True
    # Pods in a pod group: 1.37 compares their group's priority, which a pod does not carry
    # (preemption/util.go GetPodPriority), so the priority rule leaves them out.
    grouped: frozenset[str] = frozenset()
    # Pods the scenario deletes itself: 1.34 preempts a terminating pod again, marking it after
    # its deletion began (1.35 leaves terminating victims alone).
    deleted: frozenset[str] = frozenset()

    def uid_names(self) -> dict[str, str]:
        return {v.pod.metadata.uid: v.name for v in self.versions if v.pod.metadata.uid}

    def priority(self, name: str) -> int | None:
        for v in self.versions:
            if v.name == name and v.pod.spec.priority is not None:
                return v.pod.spec.priority
        return None

    def preemptions(self) -> list[tuple[str, str]]:
        """(victim, preemptor) for each Preempted event whose preemptor the history knows."""
        uids = self.uid_names()
        out = []
        for e in self.preempted_events:
            m = PREEMPTED_BY.search(e.message or "")
            preemptor = (e.related.name if e.related is not None and e.related.name
                         else uids.get(m.group(1)) if m else None)
            if preemptor and e.involved_object is not None:
                out.append((e.involved_object.name, preemptor))
        return out


Rule = Callable[[History], list[Violation]]


def victim_of_lower_priority(h: History) -> list[Violation]:
    out = []
    for victim, preemptor in sorted(set(h.preemptions())):
        if {victim, preemptor} & h.grouped:
            continue
        pv, pp = h.priority(victim), h.priority(preemptor)
        if pv is not None and pp is not None and pv >= pp:
            out.append(Violation("victim-of-lower-priority", f"{victim} (priority {pv}) was preempted by "
                                 f"{preemptor} (priority {pp}): a victim's priority must be lower"))
    return out


def marked_before_deleted(h: History) -> list[Violation]:
    if not h.complete:  # a gap may hide the version that carried the mark
        return []
    out = []
    victims = {victim for victim, _ in h.preemptions()} - h.deleted
    for name in sorted(victims):
        marked = False
        for v in h.versions:
            if v.name != name:
                continue
            marked = marked or disrupted_by_preemption(v.pod)
            if v.pod.metadata.deletion_timestamp is not None or v.kind == "DELETED":
                if not marked:
                    out.append(Violation("marked-before-deleted", f"{name} was deleted (version #{v.seq}) before "
                                         "any recorded version carried DisruptionTarget (PreemptionByScheduler)"))
                break
    return out


RULES: tuple[tuple[str, Rule], ...] = (
    ("victim-of-lower-priority", victim_of_lower_priority),
    ("marked-before-deleted", marked_before_deleted),
)


def check(h: History, rules: Iterable[tuple[str, Rule]] = RULES) -> list[Violation]:
    return [v for _, rule in rules for v in rule(h)]


__all__ = ["History", "RULES", "Violation", "check"]
