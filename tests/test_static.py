"""Code that only a cluster run reaches must still be checked without one.

The conformance suite's own helpers run only against a cluster, so a misspelt
name there shows up as a failed smoke test in CI, 20 minutes in, and reads like
a scheduler fault. pyflakes finds such names (and dead imports) statically.
"""

from __future__ import annotations

from pathlib import Path

from pyflakes.api import checkPath
from pyflakes.reporter import Reporter

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("reference", "harness", "conformance", "tests", "benchmarks", "mutants")


class _Collect(Reporter):
    def __init__(self) -> None:
        self.found: list[str] = []

    def unexpectedError(self, filename, message):
        self.found.append(f"{filename}: {message}")

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.found.append(f"{filename}:{lineno}: {msg}")

    def flake(self, message):
        self.found.append(str(message))


def test_no_undefined_names_or_dead_imports():
    report = _Collect()
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    assert files, "no sources found"
    for path in files:
        checkPath(str(path), report)
    assert report.found == []
