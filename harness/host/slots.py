"""Start slots: how many control planes may be starting at once on this machine, across every
kit process that shares the cache (one run's own clusters, a fault test's four, a second run
beside it; a run with a cache of its own, PRIORITYKIT_CACHE, has slots of its own).

A control plane's start is the costly part of its life: the API server's post-start hooks (RBAC's
bootstrap roles, the system priority classes) take seconds of CPU, and kube-controller-manager
gives /healthz only 10 s before it exits. CI's short run starts six at a time on 2 cores (each
build's shared cluster, two own clusters a build, and the fault tests' four), and in its last
failed run three own clusters lost their controller manager so. A cluster that is up costs little, so
only the start holds a slot; the wait for one does not count against the start's own deadline.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from typing import Iterator

from harness.host import lifecycle
from harness.host.cache import cache_root


def count() -> int:
    """Starts at once: one a core, and never fewer than two (a run's two builds start together)."""
    return max(2, os.cpu_count() or 1)


@contextmanager
def start_slot(poll: float = 0.2) -> Iterator[int]:
    """Hold one of the machine's start slots (its index) while the block runs. A lock on a file in
    the cache, so a process that dies frees its slot with it; a stop request ends the wait."""
    folder = cache_root() / "start-slots"
    folder.mkdir(parents=True, exist_ok=True)
    files = [open(folder / f"{i}.lock", "a+") for i in range(count())]
    try:
        while True:
            for i, f in enumerate(files):
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                yield i
                return
            lifecycle.check()
            time.sleep(poll)
    finally:
        for f in files:
            f.close()  # closing drops the lock
