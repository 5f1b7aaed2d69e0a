"""Scheduler faults recognised by name from the recorded events: what no specification allows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from reference.preemption import PLUGINS
from reference.release import ONE_PREEMPTION_AT_A_TIME, DEFAULT_RELEASE, has


PREEMPTED_BY = re.compile(r"Preempted by pod (\S+) on node (\S+)")


@dataclass(frozen=True)
class Fault:
    """A scheduler fault recognised by name, with its evidence."""

    name: str
    evidence: str
    # True: it counts against the build. False: a known upstream bug of the release running.
    fails: bool
    # Whether it changes where pods end (a second victim, the preemptor elsewhere): a known one
    # then explains the differences beside it, which are its own consequences.
    changes_outcome: bool = False

    def __str__(self) -> str:
        return f"{self.name}: {self.evidence}"


def preempted_again(events: list, release: str = DEFAULT_RELEASE, build: str = "upstream",
                    displaced: frozenset[str] = frozenset(), restarts: tuple[datetime, ...] = ()) -> list[Fault]:
    """A preemptor that preempted and waits on its nominated node for its victims to go must not
    preempt again meanwhile (semantics.md 3, eligibility). Read from the Preempted events
    ("Preempted by pod UID on node N"): victims on a second node change the outcome; the same
    victim preempted again (it was still terminating) leaves the outcome as it was. Both are a
    known bug of asynchronous preemption before 1.35 (kubernetes#134249), gated there (#134730):
    a regression after. The synchronous plugins build has no such gate: its informer race
    (docs/scheduler-faults.md) stays a known fault on every release.

    ``displaced``: the UIDs of preemptors whose nomination was cleared meanwhile (a higher
    preemptor took their node): preempting again elsewhere is then what the spec asks
    (queue-cleared-nomination-retried-at-once), not the race.

    ``restarts``: when the kit restarted the scheduler (a fault). A restarted scheduler forgets
    what it preempted, so preempting again after a restart is what the spec allows
    (reference/restart.py): each preemptor's victims are judged per scheduler run."""
    by_preemptor: dict[tuple[str, int], list[tuple[str, str, str]]] = {}
    for e in events:
        m = PREEMPTED_BY.search(e.message or "")
        if m:
            when = e.event_time or e.first_timestamp or e.last_timestamp
            stamp = when.strftime("%H:%M:%S.%f")[:-3] if when else "?"
            run = sum(1 for r in restarts if when is not None and r <= when)
            by_preemptor.setdefault((m.group(1), run), []).append((stamp, e.involved_object.name, m.group(2)))
    out = []
    fixed = has(release, ONE_PREEMPTION_AT_A_TIME) and PLUGINS[build].asynchronous
    for (uid, _), victims in sorted(by_preemptor.items()):
        related = next((e.related.name for e in events if e.related is not None and e.related.uid == uid), uid)
        seen = f"{related} preempted " + ", ".join(f"{v} on {n} at {t}" for t, v, n in sorted(victims))
        if len({node for _, _, node in victims}) > 1 and uid not in displaced:
            out.append(Fault("one preemptor, victims on two nodes", seen + " (a scheduler race, not a model "
                             "difference: the preemptor was tried again before its first preemption was settled, "
                             "and preempted elsewhere; " + _where_fixed(fixed) + ")", fixed, changes_outcome=True))
        elif len({v for _, v, _ in victims}) < len(victims):
            # 1.35's gate narrows this race but leaves a window (docs/scheduler-faults.md): a
            # known bug of the release, which leaves the outcome as specified.
            out.append(Fault("one preemptor preempted the same victim twice", seen + " (a scheduler race: the "
                             "preemptor was tried again while its victim was terminating on its nominated node, "
                             "where it should have waited; the pods still end as specified; "
                             + (GATE_WINDOW if fixed else _where_fixed(False)) + ")", False))
    return out


# Read from v1.35.8 (docs/scheduler-faults.md has the lines): DefaultPreemption's PreEnqueue lets
# the preemptor back once the informer's lister shows its last victim terminating, but victims are
# chosen from the scheduler's cache, which the event handler updates a moment later.
GATE_WINDOW = (f"the gate of {ONE_PREEMPTION_AT_A_TIME.since} ({ONE_PREEMPTION_AT_A_TIME.upstream}) leaves a window: "
               "it opens when the informer shows the victim terminating, but victims are chosen from the scheduler's "
               "cache, which learns it a moment later; a known bug of this release: see docs/scheduler-faults.md")


def _where_fixed(fixed: bool) -> str:
    return (f"fixed in {ONE_PREEMPTION_AT_A_TIME.since} by {ONE_PREEMPTION_AT_A_TIME.upstream}, so here a regression"
            if fixed else "a known bug of this build and release: see docs/scheduler-faults.md")
