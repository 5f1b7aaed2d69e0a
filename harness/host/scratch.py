"""A private base folder for each pytest session of the kit's, instead of pytest's shared one.

pytest's default base (``/tmp/pytest-of-<user>/pytest-N``) is shared by every pytest process of
the user, and each session cleans the numbered folders it finds there: a `./kit test` started
while `./kit conformance` ran removed the conformance run's folders (seen: the fault tests
failed with FileNotFoundError). The private folder is a kit work directory with an owner
file, so should the session be killed, the reaper removes it like a cluster's.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from harness.host.lifecycle import WORKDIR_PREFIX, write_owner


def private_basetemp(option) -> Path | None:
    """Point pytest's ``basetemp`` option at a fresh private folder, unless the user named one;
    the work directory to remove at the end, or None."""
    if getattr(option, "basetemp", None):
        return None
    work = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX + "pytest-"))
    write_owner(work)
    option.basetemp = str(work / "tmp")  # pytest empties a given basetemp: the owner file stays beside it
    return work


def remove(work: Path | None) -> None:
    if work is not None:
        shutil.rmtree(work, ignore_errors=True)


__all__ = ["private_basetemp", "remove"]
