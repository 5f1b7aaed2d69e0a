"""Ports for local clusters, chosen by the kit so that clusters started together never collide.

kwokctl, left to itself, gives every cluster the first free ports counting
down from 32767: two clusters created at the same moment (in one run or in
two runs side by side) both find 32766 free and the second component to bind
it dies with "address already in use". So the kit picks each cluster's ports
itself: at random from a range below the kernel's ephemeral range (where
outgoing connections take their ports), skipping ports that another cluster
of any kit process on this machine holds, or that are bound now.

A port is held by a claim (harness.host.claims) named after the port, by the process that owns
the cluster until the cluster is released. Every kit process of
the machine (whatever its cache or user) sees the claim, it is held while the component is
down (a fault step's restart, when the port itself is free and a bind check alone would hand it
to a cluster starting in another run: that run's cluster then took the restarted API server's
port), and the kernel drops it with its process: no file, nothing stale to clean. A collision
with a program outside the kit is still possible; the cluster detects it by its log line and
starts again on fresh ports.
"""

from __future__ import annotations

import random
import socket
import threading

from harness.host import claims

LOW, HIGH = 20000, 32000
# The components that listen, as kwokctl's configuration names their ports.
PORT_OPTIONS = ("etcdPort", "etcdPeerPort", "kubeApiserverPort", "kwokControllerPort",
                "kubeControllerManagerPort", "kubeSchedulerPort")
BIND_FAILURE = "address already in use"
CLAIM = "priority-conformance/port/{}"

_held: dict[str, list[socket.socket]] = {}  # a cluster's key -> its claims
_lock = threading.Lock()


def _free(port: int) -> bool:
    for host in ("127.0.0.1", "0.0.0.0"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((host, port))
        except OSError:
            return False
        finally:
            s.close()
    return True


def reserve(cluster: str, rng: random.Random | None = None, names: tuple[str, ...] = PORT_OPTIONS) -> dict[str, int]:
    """Ports for every listening component of one cluster (or ``names``), held until ``release``."""
    rng = rng or random.Random()
    chosen: list[int] = []
    got: list[socket.socket] = []
    with _lock:
        for _ in range(2000):
            p = rng.randrange(LOW, HIGH)
            if p in chosen:
                continue
            mine = claims.claim(CLAIM.format(p))
            if mine is None:  # another cluster's, of this process or another
                continue
            if not _free(p):
                mine.close()
                continue
            chosen.append(p)
            got.append(mine)
            if len(chosen) == len(names):
                break
        if len(chosen) < len(names):
            for c in got:
                c.close()
            raise OSError(f"no {len(names)} free ports between {LOW} and {HIGH}")
        for c in _held.pop(cluster, []):  # reserved again (a start on fresh ports): the old ones go
            c.close()
        _held[cluster] = got
    return dict(zip(names, chosen))


def held(port: int) -> bool:
    """Whether a kit process of this machine holds a claim on ``port``."""
    return claims.held(CLAIM.format(port))


def release(cluster: str) -> None:
    with _lock:
        for c in _held.pop(cluster, []):
            c.close()
