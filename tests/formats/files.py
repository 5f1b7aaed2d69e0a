"""Scenario files written for a format test, and the one error loading one gives."""

import textwrap

import pytest

from harness.formats.common import ScenarioError
from harness.formats.pods import load


def written(tmp_path, template: str, name: str = "case", tail: str = "", **fields):
    """``template`` with ``{id}`` and its other ``fields`` filled in, then ``tail``, as a file."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(template).format(id=name, **fields) + tail)
    return path


def with_steps(tmp_path, base: str, steps: str, name: str = "case"):
    """``base`` (a scenario up to ``steps:``, with ``{id}``) and ``steps`` under it, as a file."""
    return written(tmp_path, base, name, textwrap.indent(textwrap.dedent(steps), "  "))


def error_of(path) -> str:
    with pytest.raises(ScenarioError) as e:
        load(path)
    return str(e.value)
