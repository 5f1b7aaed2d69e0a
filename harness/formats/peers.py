"""The peer suite's index (peers/upstream-cases.yaml): upstream's own preemption test cases, each
with how the kit expresses it (a catalogue scenario, a model test) or why it cannot.

Read like every other format: one clear error naming the file, the case and the field. A
``matches`` scenario must be in the catalogue, and a ``test`` must name a test function in one of
the kit's test files, so that the table never points at nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harness import FILES, REPO, SCENARIOS
from harness.errors import KitError
from harness.formats.common import load_list

PEERS = FILES / "peers" / "upstream-cases.yaml"
PROJECTS = ("kubernetes", "scheduler-plugins", "karmada")


class PeerCase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$", max_length=130)
    project: Literal[PROJECTS]  # type: ignore[valid-type]
    release: str = Field(min_length=1)
    file: str = Field(min_length=1)
    function: str = Field(min_length=1)
    case: str = ""
    kind: Literal["integration", "unit", "e2e", "e2e-node"]
    topic: str = ""
    given: str = ""
    expect: str = ""
    expressible: Literal["scenario", "model-test", "no"]
    reason: str = ""
    matches: str = ""  # a catalogue scenario showing the same facts (with expressible: no, the nearest one)
    reviewed: bool = False  # the match was checked against the upstream case's facts, not only named
    test: str = ""  # tests/...py::function[param]: the model test translating the case

    @property
    def status(self) -> str:
        """expressed (a model test, or a matching scenario), not expressible, or to do. A case the
        kit cannot express may still name the nearest scenario: it does not count as expressed."""
        if self.test or (self.matches and self.expressible != "no"):
            return "expressed"
        return "not expressible" if self.expressible == "no" else "to do"

    @property
    def where(self) -> str:
        return f"{self.project} {self.release} {self.file} {self.function}" + (f" {self.case!r}" if self.case else "")


def load(path: Path = PEERS, scenarios: Path = SCENARIOS, tests_root: Path = REPO) -> list[PeerCase]:
    out = load_list(path, PeerCase, "upstream cases")
    known = {p.stem for p in [*scenarios.glob("*.yaml"), *scenarios.glob("karmada/*.yaml")]}
    for c in out:
        name = c.id
        if c.expressible == "no" and not c.reason:
            raise KitError(f"{path}: {name}: reason: a case the kit cannot express says why")
        if c.matches and c.matches not in known:
            raise KitError(f"{path}: {name}: matches: no catalogue scenario {c.matches!r}")
        if c.test and not _test_exists(tests_root, c.test):
            raise KitError(f"{path}: {name}: test: {c.test!r} names no test function of the kit")
    return out


def _test_exists(root: Path, node: str) -> bool:
    file, _, func = node.partition("::")
    func = func.split("[", 1)[0]
    f = root / file
    if not func or not f.is_file():
        # An installed kit ships no tests: a test named there cannot be checked, only trusted.
        return not (root / "tests").is_dir()
    return re.search(rf"^def {re.escape(func)}\(", f.read_text(), re.M) is not None


__all__ = ["PeerCase", "PEERS", "load"]
