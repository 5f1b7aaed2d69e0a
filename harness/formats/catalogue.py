"""Scenario files of every kind: which format a file is in, and the kit's whole catalogue.

A run of the conformance suite reads one kind (pods, or Karmada with
``--system karmada``); the spec readers (``validate``, ``explain``) take any
file and tell its kind from its content (harness.formats.common.kind_of).
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

from harness.formats import bindings, common, pods
from harness.formats.common import KARMADA, PODS, kind_of_file

AnyScenario = Union[pods.Scenario, bindings.KarmadaScenario]
LOADERS = {PODS: pods.load, KARMADA: bindings.load}
# The kit's own catalogue, one folder per kind.
CATALOGUES = {PODS: pods.CATALOGUE, KARMADA: bindings.CATALOGUE}


def load_any(path: str | Path) -> AnyScenario:
    """A scenario file of either kind, checked against its own format."""
    return LOADERS[kind_of_file(Path(path))](Path(path))


def files(sources: list[Path] | None = None) -> list[Path]:
    """The files named by ``sources`` (files, or folders read whole, subfolders too), or every
    file of the kit's catalogue; each file once. Whole, because either kind is told from its
    content: `validate scenarios` once skipped scenarios/karmada without a word."""
    found = common.scenario_files(list(sources) if sources else list(CATALOGUES.values()), recursive=True)
    seen: set[Path] = set()
    out = []
    for f in found:
        if f.resolve() not in seen:
            seen.add(f.resolve())
            out.append(f)
    return out


def kind(scenario: AnyScenario) -> str:
    return KARMADA if isinstance(scenario, bindings.KarmadaScenario) else PODS


def check(paths: list[Path]) -> tuple[list[AnyScenario], list[str]]:
    """Every file loaded, or why not: (the scenarios, one error per invalid file). The id rule of
    a run (one file per id) holds across all of them, and is checked once every file loads."""
    loaded, errors = [], []
    for f in paths:
        try:
            loaded.append((f, load_any(f)))
        except common.ScenarioError as e:
            errors.append(str(e))
    if not errors:
        try:
            common.unique_ids([(s.id, f) for f, s in loaded])
        except common.ScenarioError as e:
            errors.append(str(e))
    return [s for _, s in loaded], errors
