"""Where the kit keeps what outlives a run: built binaries, logs, the port registry, kept clusters.

Outside the repository and outside /tmp, so a fresh clone shares the builds
and nothing is left in temporary folders. PRIORITYKIT_CACHE moves it.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("PRIORITYKIT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "priority-conformance"
    )
    return Path(base)
