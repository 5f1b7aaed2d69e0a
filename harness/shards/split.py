"""Which part of a campaign one machine runs: the shard convention every campaign shares.

``--shard i/N`` runs the i-th of N parts, i counted from 1 as pytest-split's ``--group`` is.
``--shard auto/N`` takes i from ``JOB_COMPLETION_INDEX``, the index (from 0) a Kubernetes
Indexed Job gives each of its pods, so a Job runs the kit with no wrapper script. An explicit
i always wins over the environment.

The parts need no coordination between machines: every shard computes all of them from the
same inputs and keeps its own, so they are disjoint and their union is the whole, each item
once. Each shard leaves a record (``record``) beside its results: which part, which host, what
it ran and for how long, for the merge to say so and to notice a missing shard.
"""

from __future__ import annotations

import os
import re
import socket
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from harness.errors import KitError

ENV = "JOB_COMPLETION_INDEX"  # set by Kubernetes on each pod of an Indexed Job, from 0
T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    index: int  # from 1
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def suffix(self) -> str:
        """For file names: two shards writing into one folder do not overwrite each other."""
        return f"-shard{self.index}of{self.count}"


WHOLE = Shard(1, 1)


def job_index(env: Mapping[str, str] = os.environ) -> int | None:
    """The shard number (from 1) a Kubernetes Indexed Job gives this pod, or None outside one."""
    raw = env.get(ENV)
    if raw is None or raw.strip() == "":
        return None
    if not raw.strip().isdigit():
        raise KitError(f"{ENV}={raw!r}: expected the index of an Indexed Job's pod, a whole number from 0")
    return int(raw) + 1


def parse(text: str, env: Mapping[str, str] = os.environ) -> Shard:
    """``i/N`` (i from 1) or ``auto/N`` (i from JOB_COMPLETION_INDEX + 1)."""
    m = re.fullmatch(r"\s*(auto|\d+)\s*/\s*(\d+)\s*", text or "")
    if m is None:
        raise KitError(f"--shard {text!r}: expected i/N (the i-th of N shards, from 1) or auto/N "
                       f"(i from {ENV}, which Kubernetes counts from 0)")
    count = int(m.group(2))
    if count < 1:
        raise KitError(f"--shard {text}: N must be 1 or more")
    if m.group(1) == "auto":
        index = job_index(env)
        if index is None:
            raise KitError(f"--shard {text}: auto needs {ENV} (set on each pod of a Kubernetes Indexed Job); "
                           f"elsewhere name the shard: --shard 1/{count}")
    else:
        index = int(m.group(1))
    if not 1 <= index <= count:
        raise KitError(f"--shard {text}: shard {index} of {count} does not exist (shards count from 1"
                       + (f"; {ENV} counts from 0" if m.group(1) == "auto" else "") + ")")
    return Shard(index, count)


def parts(items: Sequence[T], count: int, weight: Callable[[T], float] = lambda _: 1) -> list[list[T]]:
    """``items`` in ``count`` parts of about equal weight, each part in the items' own order.

    Greedy, heaviest first (ties in the given order), each to the lightest part so far (ties to
    the lowest-numbered): deterministic, and with equal weights exactly round-robin by position,
    which spreads the rare slow items (an explorer draw that needs a cluster of its own) evenly.
    """
    load = [0.0] * count
    where: dict[int, int] = {}
    for pos in sorted(range(len(items)), key=lambda p: -weight(items[p])):
        part = min(range(count), key=lambda i: (load[i], i))
        where[pos] = part
        load[part] += weight(items[pos])
    return [[items[p] for p in range(len(items)) if where[p] == i] for i in range(count)]


def pick(items: Sequence[T], shard: Shard, weight: Callable[[T], float] = lambda _: 1) -> list[T]:
    return parts(items, shard.count, weight)[shard.index - 1]


def record(campaign: str, shard: Shard, ran: Iterable[str], started: float, **extra) -> dict:
    """What a shard writes beside its results; ``started`` is a ``time.time()``."""
    return {"campaign": campaign, "index": shard.index, "count": shard.count, "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "seconds": round(time.time() - started, 1), "ran": list(ran), **extra}
