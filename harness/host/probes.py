"""Is a local component up: listening on its port, healthy on /healthz; and the end of its log.

Every cluster adapter waits on its own processes with these; an error names
the component and quotes the last lines of what it said.
"""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) == 0


def healthy(port: int, host: str = "127.0.0.1") -> bool:
    """An HTTP 200 from /healthz; an error while it is still starting is the caller's to retry."""
    with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=2) as r:
        return r.status == 200


def tail(text: str, lines: int = 15) -> str:
    """The last ``lines`` lines of a command's output."""
    return "\n".join(text.strip().splitlines()[-lines:])


def log_tail(path: Path, lines: int = 12) -> str:
    """The last ``lines`` lines of a log file; "" if it cannot be read (it may never have been written)."""
    try:
        return tail(path.read_text(errors="replace"), lines)
    except OSError:
        return ""
