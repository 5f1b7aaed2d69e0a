"""The kit's progress lines on stderr: builds, images and clusters say what takes time."""

from __future__ import annotations

import sys
from typing import Callable


def log(msg: str) -> None:
    print(f"[priority-conformance] {msg}", file=sys.stderr, flush=True)


def exit_code(command: Callable[[], int]) -> int:
    """A command's exit code, with the kit's own errors as one line and exit 2, never a traceback,
    and an interrupt as 130 (whatever it started was stopped by then)."""
    from harness.errors import KitError

    try:
        return command()
    except KitError as e:
        print(f"priority-conformance: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("priority-conformance: interrupted; everything started was stopped", file=sys.stderr)
        return 130
