"""scenarios/README.md documents every field the pod format takes and every area a scenario may
name: `podGroups:`, `group:` and the `podgroup` area were once accepted by `./kit validate` and
documented nowhere in it."""

import re
from pathlib import Path

import pytest

from harness.formats import pods

DOC = (Path(__file__).resolve().parents[2] / "scenarios" / "README.md").read_text()
MODELS = (pods.Scenario, pods.ClassSpec, pods.NodeSpec, pods.PodGroupSpec, pods.PodSpec, pods.PdbSpec,
          pods.PressureSpec, pods.Step, pods.Expect)


def written_names(model) -> list[str]:
    """A model's fields as a file spells them (an alias where it has one: `class`)."""
    return [f.alias or name for name, f in model.model_fields.items()]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_of_the_pod_format_is_documented(model):
    missing = [n for n in written_names(model) if not re.search(rf"\b{re.escape(n)}:", DOC)]
    assert missing == [], f"scenarios/README.md does not document {model.__name__}'s {missing}"


def test_every_area_is_listed_where_the_format_names_areas():
    line = next(line for line in DOC.splitlines() if line.startswith("areas:"))
    assert [a for a in pods.AREAS if a not in line] == []


def test_pod_groups_have_a_section_of_their_own():
    assert "## Pod groups" in DOC and "group:" in DOC and "docs/podgroups.md" in DOC
