"""Where the kit keeps what outlives a run: built binaries, logs, locks, kept clusters.

Outside the repository and outside /tmp, so a fresh clone shares the builds
and nothing is left in temporary folders. PRIORITYKIT_CACHE moves it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def kept_logs_dir(name: str, root: Path | None = None) -> Path:
    """Where the logs of ``name``, a control plane that failed to start, are kept before it is
    removed: under ``root`` (a run's artifacts, so they travel with its results), else the cache's
    log folder."""
    return (root or cache_root() / "logs") / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"


def cache_root() -> Path:
    base = os.environ.get("PRIORITYKIT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "priority-conformance"
    )
    return Path(base)
