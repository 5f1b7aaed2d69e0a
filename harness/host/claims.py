"""Claims on a machine-wide name: a Unix socket bound in Linux's abstract namespace.

Every process of the machine (in one network namespace, as the ports it guards are) sees a claim,
whatever its cache or user, and the kernel drops it with the process that holds it: no file, and
nothing stale to clean after a crash. The kit claims a cluster's ports (harness.host.ports) and
its start slots (harness.host.slots) so.
"""

from __future__ import annotations

import socket


def claim(name: str) -> socket.socket | None:
    """This process's claim on ``name`` (held until the socket is closed), or None when a process
    of the machine, this one included, holds it already."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind("\0" + name)
    except OSError:
        s.close()
        return None
    return s


def held(name: str) -> bool:
    """Whether some process of the machine holds a claim on ``name``."""
    s = claim(name)
    if s is None:
        return True
    s.close()
    return False


__all__ = ["claim", "held"]
