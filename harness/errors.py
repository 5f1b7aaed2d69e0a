"""The one exception type the kit shows to users as a message, not a traceback."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path


class KitError(Exception):
    """A problem the user can act on: the message names the thing and where to look.

    ``logs`` are the files (or folders) that hold the failure, first written first; they are
    data, not part of the message, so whoever moves them (a failed cluster's logs kept before
    its directory goes) points the error at their new place without rewriting its text."""

    def __init__(self, message: str, logs: Sequence[Path] = (), detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.logs = tuple(Path(p) for p in logs)
        self.detail = detail

    def __str__(self) -> str:
        out = self.message
        if len(self.logs) == 1:
            out += f"; its log: {self.logs[0]}"
        elif self.logs:
            out += f"; its logs, first run first: {', '.join(map(str, self.logs))}"
        return f"{out}\n{self.detail}" if self.detail else out

    def relocated(self, src: Path, dest: Path) -> KitError:
        """This error with the logs that lay under ``src`` named under ``dest`` (where they were
        copied), keeping only those that exist there: a path the user is given must be there."""
        moved = []
        for log in self.logs:
            try:
                log = dest / log.relative_to(src)
            except ValueError:
                pass
            if log.exists():
                moved.append(log)
        if self.logs and not moved and dest.exists():
            moved = [dest]  # none of the files was written: the folder still holds what was
        err = copy.copy(self)
        err.logs = tuple(moved)
        return err
