"""How long each preemption took, read from the recorded history: when the preemptor was
created, nominated, when its victims' deletion was asked for, when they were gone, and when
the preemptor was bound.

Times are the kit's clock at the moment the watch delivered each version (``Version.seen_at``),
measured from the preemptor's first version. The API server's own stamps have whole seconds
only (creationTimestamp, deletionTimestamp, condition transitions), too coarse for a phase of
a few milliseconds; ``server_lag`` compares the two clocks where they overlap (the creation),
so a reader can tell the watch's delay from the scheduler's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from harness.run.pods.faults import PREEMPTED_BY
from harness.run.pods.history import PodLog, Version


@dataclass(frozen=True)
class PreemptionTiming:
    preemptor: str
    node: str  # the node its victims were on (cluster name)
    victims: tuple[str, ...]
    nominated: float | None  # seconds after the preemptor's first version; None: never seen
    victims_deleting: float | None  # the first victim's deletion asked for (deletionTimestamp seen)
    victims_gone: float | None  # the last victim gone (deleted, or terminal on a real kubelet)
    bound: float | None
    server_lag: float | None  # first version seen minus creationTimestamp (whole seconds on the server)

    def record(self, **context) -> dict:
        return {**context, **asdict(self), "victims": list(self.victims)}


def _first(versions: list[Version], predicate) -> float | None:
    return next((v.seen_at for v in versions if predicate(v)), None)


def _gone(v: Version) -> bool:
    return v.kind == "DELETED" or (v.pod.status is not None and v.pod.status.phase in ("Failed", "Succeeded"))


def preemptions(log: PodLog) -> list[PreemptionTiming]:
    """One record per preemptor the Preempted events name, in the order they were created."""
    by_uid: dict[str, list[tuple[str, str]]] = {}
    for e in log.preempted_events():
        m = PREEMPTED_BY.search(e.message or "")
        if m and e.involved_object is not None:
            victims = by_uid.setdefault(m.group(1), [])
            if (e.involved_object.name, m.group(2)) not in victims:
                victims.append((e.involved_object.name, m.group(2)))
    names = {v.pod.metadata.uid: v.name for v in log.versions}
    out = []
    for uid, victims in by_uid.items():
        name = names.get(uid)
        if name is None:
            continue  # the preemptor's versions were not recorded (another namespace's pod)
        mine = log.of(name)
        start = mine[0].seen_at
        created = mine[0].pod.metadata.creation_timestamp

        def since(t: float | None) -> float | None:
            return None if t is None else round(t - start, 3)

        of_victims = [log.of(v) for v, _ in victims]
        deleting = [_first(vs, lambda v: v.pod.metadata.deletion_timestamp is not None) for vs in of_victims]
        gone = [_first(vs, _gone) for vs in of_victims]
        out.append(PreemptionTiming(
            preemptor=name, node=victims[0][1], victims=tuple(v for v, _ in victims),
            nominated=since(_first(mine, lambda v: bool(v.pod.status and v.pod.status.nominated_node_name))),
            victims_deleting=since(min((t for t in deleting if t is not None), default=None)),
            victims_gone=since(max(gone) if gone and all(t is not None for t in gone) else None),
            bound=since(_first(mine, lambda v: bool(v.pod.spec.node_name))),
            server_lag=round(start - created.timestamp(), 3) if created is not None else None,
        ))
    return sorted(out, key=lambda t: t.preemptor)


__all__ = ["PreemptionTiming", "preemptions"]
