"""What pytest's JUnit XML is, for every reader of a run's results (the figures, the spec site's
recorded verdicts, the merge of shards)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path


def is_junit(path: Path) -> bool:
    """Whether ``path`` is a JUnit report (a testsuites or testsuite root), not just any XML."""
    try:
        return ET.parse(path).getroot().tag in ("testsuites", "testsuite")
    except (ET.ParseError, OSError):
        return False


__all__ = ["is_junit"]
