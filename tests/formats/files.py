"""Scenario files written for a format test, and the one error loading one gives."""

import textwrap

import pytest

from harness.formats.common import ScenarioError
from harness.formats.pods import load


def with_steps(tmp_path, base: str, steps: str, name: str = "case"):
    """``base`` (a scenario up to ``steps:``, with ``{id}``) and ``steps`` under it, as a file."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(base).format(id=name) + textwrap.indent(textwrap.dedent(steps), "  "))
    return path


def error_of(path) -> str:
    with pytest.raises(ScenarioError) as e:
        load(path)
    return str(e.value)
