"""python -m harness.host.watchdog OWNER_PID WORKDIR: clean up a local cluster once its owner is gone.

Waits on a pidfd (no polling of a reusable pid); stands down when the owner
removes the directory itself (a normal teardown) or marks it kept.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from pathlib import Path

from harness.host.lifecycle import KEEP_FILE, reap


def main(argv: list[str]) -> int:
    owner, workdir = int(argv[0]), Path(argv[1])
    # Signals meant for the kit (a terminal's Ctrl-C, a hangup) are not for this process.
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        fd = None  # already gone
    if fd is not None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while workdir.exists() and not poller.poll(1000):
            pass
        os.close(fd)
    if workdir.exists() and not (workdir / KEEP_FILE).exists():
        reap(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
