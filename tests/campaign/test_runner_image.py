"""The runner image a campaign's pods run: what goes in, its tag, and the nodes it goes to."""

from __future__ import annotations



from tests.campaign.fakes import _node
from harness.build import runner_image
from harness.campaign import nodes


def test_the_image_goes_only_to_nodes_a_shard_can_run_on():
    found = nodes.schedulable([
        _node("c-worker2"), _node("c-worker"),
        _node("c-control-plane", taints=[("node-role.kubernetes.io/control-plane", "NoSchedule")]),
        _node("kwok-1", labels={"type": "kwok"}, annotations={"kwok.x-k8s.io/node": "fake"}),
        _node("cordoned", unschedulable=True), _node("prefer", taints=[("x", "PreferNoSchedule")])])
    assert found == ["c-worker", "c-worker2", "prefer"]


def test_containerd_names_docker_s_short_image_names_in_full():
    assert nodes.refs("prioritykit/runner:v1-abc") == {"prioritykit/runner:v1-abc", "docker.io/prioritykit/runner:v1-abc"}
    assert nodes.refs("registry.example:5000/r:1") == {"registry.example:5000/r:1"}
    assert nodes.remove_command("n1", "prioritykit/runner:v1-abc")[-1] == "docker.io/prioritykit/runner:v1-abc"


# --- the runner image's inputs (no Docker) ------------------------------------------


def test_the_image_takes_the_kit_s_tracked_files_and_its_runtime_dependencies():
    files = runner_image.sources()
    assert "kit" in files and "harness/build/runner_image.py" in files and "pyproject.toml" in files
    assert not any(f.startswith((".venv/", "artifacts/")) for f in files)
    reqs = runner_image.requirements()
    assert any(r.startswith("kubernetes") for r in reqs) and any(r.startswith("setuptools") for r in reqs)
    assert not any(r.startswith(("freezegun", "selenium")) for r in reqs)  # test extras stay out


def test_wheels_are_chosen_for_every_manylinux_tag_up_to_the_image_s_glibc():
    got = runner_image.platforms("2.36", "x86_64")
    assert got[0] == "manylinux_2_36_x86_64" and "manylinux_2_17_x86_64" in got and "manylinux_2_5_x86_64" in got
    assert got[-3:] == ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
    assert "manylinux_2_37_x86_64" not in got


def test_the_tag_follows_the_content(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "wheel.whl").write_bytes(b"w")
    args = ("1.35", "suite: bookworm\n", "go1.26 linux amd64", ["a.py"], {}, [tmp_path / "wheel.whl"])
    tag = runner_image.tag_for(*args, repo=tmp_path)
    assert tag.startswith("prioritykit/runner:v1.35.") and tag == runner_image.tag_for(*args, repo=tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert runner_image.tag_for(*args, repo=tmp_path) != tag


# --- bad input ----------------------------------------------------------------------
