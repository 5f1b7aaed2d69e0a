"""The PreemptionToleration policy: when a lower-priority pod is exempt from preemption.

Upstream: scheduler-plugins pkg/preemptiontoleration (ExemptedFromPreemption
and the policy parser). The policy is read from the victim's PriorityClass as
it is *now*, by name; the victim's priority is the value stamped at admission.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime, timedelta

from .objects import PREEMPT_NEVER, ClusterState, Pod, PriorityClass

DEFAULT_PREFIX = "preemption-toleration.scheduling.x-k8s.io/"
# The other KEP revision's spelling. The released plugin ignores it.
SIGS_PREFIX = "preemption-toleration.scheduling.sigs.k8s.io/"

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Policy:
    minimum_preemptable_priority: int
    toleration_seconds: int


class PolicyError(ValueError):
    """An annotation that does not parse; the plugin then applies no policy."""


class ClassMissing(LookupError):
    """The victim names a PriorityClass that no longer exists."""


def _parse_int(text: str, bounds: tuple[int, int], key: str) -> int:
    # Go's strconv.ParseInt: optional sign, base-10 digits, nothing else.
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        raise PolicyError(f"{key}={text!r} is not an integer")
    value = int(text)
    if not bounds[0] <= value <= bounds[1]:
        raise PolicyError(f"{key}={text!r} is out of range")
    return value


@lru_cache(maxsize=4096)
def parse_policy(pc: PriorityClass, prefix: str = DEFAULT_PREFIX) -> Policy:
    ann = pc.annotation_map
    mpp_key, ts_key = prefix + "minimum-preemptable-priority", prefix + "toleration-seconds"
    mpp = _parse_int(ann[mpp_key], INT32, mpp_key) if mpp_key in ann else pc.value + 1
    ts = _parse_int(ann[ts_key], INT64, ts_key) if ts_key in ann else 0
    return Policy(mpp, ts)


@dataclass(frozen=True)
class Exemption:
    exempted: bool
    reason: str
    until: datetime | None = None  # when a time-limited exemption ends

    def __bool__(self) -> bool:
        return self.exempted


def exempted_from_preemption(
    victim: Pod, preemptor: Pod, state: ClusterState, now: datetime, prefix: str = DEFAULT_PREFIX
) -> Exemption:
    """Whether ``victim`` tolerates preemption by ``preemptor`` at ``now``.

    Raises ClassMissing when the victim's class cannot be read: the plugin
    then puts the whole node out of this preemption attempt.
    """
    if not victim.priority_class_name:
        return Exemption(False, "has no priorityClassName, so no toleration policy")
    pc = state.class_named(victim.priority_class_name)
    if pc is None:
        raise ClassMissing(f'priorityclass.scheduling.k8s.io "{victim.priority_class_name}" not found')
    verdict = _class_verdict(pc, preemptor.priority, preemptor.preemption_policy, prefix)
    if isinstance(verdict, Exemption):
        return verdict
    policy = verdict
    if victim.scheduled_at is None:
        return Exemption(True, "has no PodScheduled=True condition, so its toleration never starts")
    until = victim.scheduled_at + timedelta(seconds=policy.toleration_seconds)
    if until > now:
        return Exemption(
            True, f"tolerates preemption for {policy.toleration_seconds}s after scheduling, until {until.isoformat()}", until
        )
    return Exemption(False, f"toleration of {policy.toleration_seconds}s ended at {until.isoformat()}")


@lru_cache(maxsize=65536)
def _class_verdict(pc: PriorityClass, preemptor_priority: int, preemptor_policy: str, prefix: str) -> Exemption | Policy:
    """Everything the rule decides from the class and the preemptor alone (a final
    answer), or the policy whose toleration window still has to be checked."""
    if preemptor_policy == PREEMPT_NEVER:
        return Exemption(True, "preemptor has preemptionPolicy Never")
    try:
        policy = parse_policy(pc, prefix)
    except PolicyError as e:
        return Exemption(False, f"class {pc.name} policy does not parse ({e}): no toleration")
    if preemptor_priority >= policy.minimum_preemptable_priority:
        return Exemption(
            False,
            f"preemptor priority {preemptor_priority} >= minimum-preemptable-priority "
            f"{policy.minimum_preemptable_priority} of class {pc.name}",
        )
    if policy.toleration_seconds < 0:
        return Exemption(True, f"class {pc.name} tolerates priority < {policy.minimum_preemptable_priority} forever")
    return policy


@dataclass(frozen=True)
class MatrixCell:
    verdict: str  # "immediately" | "after Ns" | "never" | "no" (priority not higher)
    reason: str


def preemption_matrix(state: ClusterState, prefix: str = DEFAULT_PREFIX,
                      build: str = "plugins") -> dict[tuple[str, str], MatrixCell]:
    """For every (preemptor class, victim class): can a running pod of the second be preempted
    by a pod of the first, and when? ``build`` "upstream" knows no toleration policy."""
    out: dict[tuple[str, str], MatrixCell] = {}
    for a in state.priority_classes:
        for b in state.priority_classes:
            if a.preemption_policy == PREEMPT_NEVER:
                out[a.name, b.name] = MatrixCell("never", f"{a.name} has preemptionPolicy Never")
                continue
            if a.value <= b.value:
                out[a.name, b.name] = MatrixCell("no", f"{a.value} is not higher than {b.value}")
                continue
            if build == "upstream":
                out[a.name, b.name] = MatrixCell("immediately", f"{a.value} > {b.value}; no toleration policy upstream")
                continue
            ignored = " (its scheduling.sigs.k8s.io annotations are ignored)" if any(
                k.startswith(SIGS_PREFIX) for k in b.annotation_map) and prefix != SIGS_PREFIX else ""
            try:
                policy = parse_policy(b, prefix)
            except PolicyError as e:
                out[a.name, b.name] = MatrixCell("immediately", f"policy does not parse ({e})")
                continue
            if a.value >= policy.minimum_preemptable_priority:
                out[a.name, b.name] = MatrixCell(
                    "immediately", f"{a.value} >= minimum-preemptable-priority {policy.minimum_preemptable_priority}"
                    + ignored)
            elif policy.toleration_seconds < 0:
                out[a.name, b.name] = MatrixCell("never", "toleration-seconds < 0" + ignored)
            elif policy.toleration_seconds == 0:
                out[a.name, b.name] = MatrixCell("immediately", "toleration-seconds 0" + ignored)
            else:
                out[a.name, b.name] = MatrixCell(
                    f"after {policy.toleration_seconds}s", "once the victim has been scheduled that long" + ignored
                )
    return out
