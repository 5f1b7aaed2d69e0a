"""docs/environment.md lists every PRIORITYKIT_* variable the kit's code reads, and no other: they
were scattered over the README, docs/campaign.md, a test's docstring and a CI script, and
PRIORITYKIT_RUNC and PRIORITYKIT_BROWSER were named nowhere a user would look."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "environment.md"
NAME = re.compile(r"\bPRIORITYKIT_[A-Z0-9_]+\b")
# The code, whatever its language: the packages, the entry script, CI, benchmarks and tests.
CODE = ("harness", "reference", "conformance", "benchmarks", "tests", ".ci")
SUFFIXES = {".py", ".sh", ""}  # "" for the scripts without one (kit, .ci/run, ...)


def code_files():
    yield REPO / "kit"
    for top in CODE:
        for f in sorted((REPO / top).rglob("*")):
            if f.is_file() and f.suffix in SUFFIXES and "__pycache__" not in f.parts:
                yield f


def read_by_code() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for f in code_files():
        if f == Path(__file__).resolve():
            continue
        for name in NAME.findall(f.read_text(errors="replace")):
            found.setdefault(name, f)
    return found


def documented() -> set[str]:
    """The variables of the doc's table: its rows' first cells."""
    return {m.group(1) for m in re.finditer(r"^\| `([A-Z0-9_]+)` \|", DOC.read_text(), re.M)}


def test_every_variable_the_code_reads_is_in_the_environment_doc():
    found = read_by_code()
    missing = {name: str(f.relative_to(REPO)) for name, f in found.items() if name not in documented()}
    assert missing == {}, f"add these to docs/environment.md: {missing}"
    assert {"PRIORITYKIT_CACHE", "PRIORITYKIT_VENV", "PRIORITYKIT_RUNC", "PRIORITYKIT_BROWSER"} <= set(found)


def test_the_doc_lists_no_kit_variable_the_code_no_longer_reads():
    gone = {n for n in documented() if n.startswith("PRIORITYKIT_")} - set(read_by_code())
    assert gone == set()


def test_each_row_says_what_it_does_and_its_default():
    rows = [line for line in DOC.read_text().splitlines() if re.match(r"^\| `[A-Z0-9_]+` \|", line)]
    assert rows and all(len(r.strip("|").split(" | ")) == 3 for r in rows)
    assert all(r.split(" | ")[1].strip() for r in rows)
