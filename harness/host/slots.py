"""Start slots: how many control planes may be starting at once on this machine, across every
kit process on it (one run's own clusters, a fault test's four, a second run beside it, whatever
its cache).

A control plane's start is the costly part of its life: the API server's post-start hooks (RBAC's
bootstrap roles, the system priority classes) take seconds of CPU, and kube-controller-manager
gives /healthz only 10 s before it exits. CI's short run starts six at a time on 2 cores (each
build's shared cluster, two own clusters a build, and the fault tests' four), and in its last
failed run three own clusters lost their controller manager so. A cluster that is up costs little, so
only the start holds a slot; the wait for one does not count against the start's own deadline.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterator

from harness.host import claims, lifecycle

# A slot is held by a claim (harness.host.claims), as a port is: seen by every process of the
# machine, dropped by the kernel with the process that holds it.
SLOT = "priority-conformance/start-slot/{}"


def count() -> int:
    """Starts at once: one a core, and never fewer than two (a run's two builds start together)."""
    return max(2, os.cpu_count() or 1)


@contextmanager
def start_slot(poll: float = 0.2) -> Iterator[int]:
    """Hold one of the machine's start slots (its index) while the block runs; a stop request
    ends the wait."""
    while True:
        for i in range(count()):
            held = claims.claim(SLOT.format(i))
            if held is None:
                continue
            try:
                yield i
            finally:
                held.close()
            return
        lifecycle.check()
        time.sleep(poll)
