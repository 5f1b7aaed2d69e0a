"""One rule for when a step's outcome is final: it held long enough, or time ran out.

Right after an action a cluster often shows the model's outcome only for a moment (a
victim not yet marked, a binding not yet written), so a match counts once it has held
for ``hold`` seconds; until the deadline, a difference only means "not yet". At the
deadline the last observation is the verdict. Pods and Karmada bindings both ask this
loop; each keeps its own hold time.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TypeVar

from harness.host import lifecycle

T = TypeVar("T")

POLL = 0.25  # seconds between looks at the recorded history


def settle(observe: Callable[[], T], good: Callable[[T], bool], deadline: float, hold: float,
           cancel: threading.Event | None = None, hold_past_deadline: bool = False,
           interval: float = POLL, clock: Callable[[], float] = time.monotonic,
           pause: Callable[[float, threading.Event | None], None] = lifecycle.pause) -> T:
    """Observe until ``good`` has held for ``hold`` seconds, or ``deadline`` seconds have passed:
    the last observation. ``hold_past_deadline``: a match that began before the deadline still
    gets its whole hold (Karmada's rule) rather than being taken as it stands (the pods')."""
    end = clock() + deadline
    held_since: float | None = None
    while True:
        seen = observe()
        now = clock()
        if good(seen):
            held_since = now if held_since is None else held_since
            if now - held_since >= hold:
                return seen
        else:
            held_since = None
        if now >= end and (held_since is None or not hold_past_deadline):
            return seen
        pause(interval, cancel)
