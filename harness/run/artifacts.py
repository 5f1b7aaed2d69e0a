"""What a failing scenario leaves behind: one writer for every scenario kind.

A scenario's evidence goes to ``<root>/<group>/<scenario>[-copyN]/``: its report, the
history the verdict was read from, and the slices of the components' logs that mention it.
The pod runner groups by the build it ran (``artifacts/plugins/...``); the Karmada runner
by the system (``artifacts/karmada/...``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterable, Mapping

LOG_LINES = 2000  # the last lines of a scenario's log slice: enough to read, small enough to open


def scenario_dir(root: Path, group: str, scenario_id: str, copy: int = 0) -> Path:
    return root / group / (scenario_id + (f"-copy{copy}" if copy else ""))


def write(directory: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write each file (text or bytes) under ``directory``, made if need be."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)  # a name may hold a folder
        if isinstance(content, bytes):
            (directory / name).write_bytes(content)
        else:
            (directory / name).write_text(content)
    return directory


def as_json(objects: Iterable) -> str:
    return json.dumps(list(objects), indent=1, default=str)


def log_slice(log: Path | None, mentions: Callable[[str], bool], last: int = LOG_LINES) -> str | None:
    """The last ``last`` lines of ``log`` that ``mentions`` picks; None when there is no log."""
    if log is None or not log.exists():
        return None
    keep = [ln for ln in log.read_text(errors="replace").splitlines() if mentions(ln)]
    return "\n".join(keep[-last:])


def keep_bindings(root: Path, scenario_id: str, report: list[str], history: list[str],
                  logs: Mapping[str, bytes]) -> Path:
    """A failing Karmada scenario's evidence: the report, every binding version seen, and the
    lines each Karmada component logged while it ran."""
    files: dict[str, str | bytes] = {"report.txt": "\n".join(report) + "\n", "bindings.txt": "\n".join(history) + "\n"}
    files.update({f"{component}.log": text for component, text in logs.items()})
    return write(scenario_dir(root, "karmada", scenario_id), files)
