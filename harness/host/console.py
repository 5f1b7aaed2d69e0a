"""The kit's progress lines on stderr: builds, images and clusters say what takes time."""

from __future__ import annotations

import sys


def log(msg: str) -> None:
    print(f"[priority-conformance] {msg}", file=sys.stderr, flush=True)
