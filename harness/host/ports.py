"""Ports for local clusters, chosen by the kit so that clusters started together never collide.

kwokctl, left to itself, gives every cluster the first free ports counting
down from 32767: two clusters created at the same moment (in one run or in
two runs side by side) both find 32766 free and the second component to bind
it dies with "address already in use". So the kit picks each cluster's ports
itself: at random from a range below the kernel's ephemeral range (where
outgoing connections take their ports), skipping ports that another live
cluster of this machine holds (a registry under a lock) or that are bound
now. A collision with a program outside the kit is still possible; the
cluster detects it by its log line and starts again on fresh ports.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import socket
from contextlib import contextmanager
from pathlib import Path

from harness.host.cache import cache_root
from harness.host.lifecycle import start_time

LOW, HIGH = 20000, 32000
# The components that listen, as kwokctl's configuration names their ports.
PORT_OPTIONS = ("etcdPort", "etcdPeerPort", "kubeApiserverPort", "kwokControllerPort",
                "kubeControllerManagerPort", "kubeSchedulerPort")
BIND_FAILURE = "address already in use"


def _registry() -> Path:
    # In the cache, not in /tmp: nothing the kit leaves in temporary folders. Runs with
    # different caches keep apart by the random choice and the bind check, and retry.
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    return root / "ports.json"


@contextmanager
def _locked():
    path = _registry()
    with open(str(path) + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                data = json.loads(path.read_text())
            except (FileNotFoundError, ValueError):
                data = {}
            yield data
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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
    with _locked() as data:
        # Holders that are gone no longer hold anything.
        for name in [n for n, rec in data.items()
                     if start_time(rec["pid"]) is None or start_time(rec["pid"]) != rec.get("start")]:
            del data[name]
        taken = {p for rec in data.values() for p in rec["ports"]}
        chosen: list[int] = []
        for _ in range(2000):
            p = rng.randrange(LOW, HIGH)
            if p not in taken and p not in chosen and _free(p):
                chosen.append(p)
                if len(chosen) == len(names):
                    break
        if len(chosen) < len(names):
            raise OSError(f"no {len(names)} free ports between {LOW} and {HIGH}")
        data[cluster] = {"pid": os.getpid(), "start": start_time(os.getpid()), "ports": chosen}
    return dict(zip(names, chosen))


def release(cluster: str) -> None:
    with _locked() as data:
        data.pop(cluster, None)
