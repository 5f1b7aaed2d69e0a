"""This machine's memory, as /proc/meminfo and this process's cgroup say it."""

from __future__ import annotations

from pathlib import Path

MEMINFO = Path("/proc/meminfo")
CGROUP = Path("/sys/fs/cgroup")


def meminfo(field: str, path: Path = MEMINFO) -> int | None:
    """A /proc/meminfo field (``MemTotal``, ``MemAvailable``) in bytes; None where it is not there."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available(meminfo_path: Path = MEMINFO, cgroup: Path = CGROUP) -> int | None:
    """The memory this process may still take, in bytes: MemAvailable, or less where its cgroup's
    limit leaves less (a campaign's shard in a pod: /proc/meminfo shows the node's); None where
    neither says."""
    found = [] if (free := meminfo("MemAvailable", meminfo_path)) is None else [free]
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            found.append(int(limit) - int((cgroup / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        pass
    return max(0, min(found)) if found else None


__all__ = ["available", "meminfo"]
