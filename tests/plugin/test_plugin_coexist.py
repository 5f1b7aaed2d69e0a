"""The suite's plugin beside the kind plugins a user may already have: pytest-kind-ng (installed
here: the kit's kind support uses its KindCluster) and pytest-kind, its older original. Both
register --keep-cluster and --kubeconfig; the kit shares those two (options.SHARED) instead of
registering its own, which pytest refused ("option dest 'keep_cluster' already used").

Each run is in a folder of its own with the user's own pytest configuration, not the kit's: a
user's configuration has no `-p no:pytest-kind-ng` line, nor the kit's markers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_priority_conformance import SUITE, names_the_suite

REPO = Path(__file__).resolve().parents[2]

# What the run's plugins read from the command line, written where the test can see it.
RECORDER = '''
import json
from pathlib import Path

import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    from conformance.plugin.state import RUN

    o = config.stash[RUN].options
    names = [n for n, _ in config.pluginmanager.list_name_plugin()]
    Path("seen.json").write_text(json.dumps({
        "keep_cluster": o.keep_cluster, "kubeconfig": str(o.kubeconfig), "scheduler": o.scheduler,
        "cluster": o.cluster, "kind_binary": o.kind_binary,
        "kind_plugin": config.getoption("keep_cluster"), "cluster_name": config.getoption("cluster_name"),
        "kind_plugins": [n for n in names if n in ("pytest-kind", "pytest-kind-ng")]}))
'''

KIT_OPTIONS = ["--keep-cluster", "--kubeconfig", "my-kubeconfig", "--scheduler", "upstream", "--cluster", "local",
               "--kind-binary", "/usr/local/bin/kind", "--cluster-name", "theirs", "--no-cluster"]


def user_repo(folder: Path) -> Path:
    """A user's repository: its own pytest.ini (strict markers, nothing of the kit's) and a kubeconfig."""
    folder.mkdir(exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n")
    (folder / "my-kubeconfig").write_text("{}\n")
    (folder / "recorder.py").write_text(RECORDER)
    return folder


def run_suite(python: str, folder: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(env or os.environ)
    env["PYTHONPATH"] = str(folder)  # the recorder
    env.pop("PYTEST_ADDOPTS", None)
    # -c: the user's configuration, not the kit's pyproject.toml (pytest looks up from the suite's folder first).
    return subprocess.run([python, "-m", "pytest", str(SUITE), "-c", "pytest.ini", "-p", "no:cacheprovider",
                           "-p", "recorder", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=180)


def check_shared(out: subprocess.CompletedProcess, folder: Path, kind_plugin: str) -> None:
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    assert "test_smoke.py::test_high_priority_pod_preempts_low_priority_pod[upstream]" in out.stdout  # markers known
    seen = json.loads((folder / "seen.json").read_text())
    assert seen == {"keep_cluster": True, "kubeconfig": "my-kubeconfig", "scheduler": "upstream", "cluster": "local",
                    "kind_binary": "/usr/local/bin/kind", "kind_plugin": True, "cluster_name": "theirs",
                    "kind_plugins": [kind_plugin]}


def test_the_suite_runs_beside_pytest_kind_ng_and_shares_its_keep_cluster_and_kubeconfig(tmp_path):
    """Without options.SHARED this run stopped at once: ValueError: option dest 'keep_cluster'
    already used by ['--keep-cluster']."""
    pytest.importorskip("pytest_kind", reason="pytest-kind-ng is in the kit's test extra")
    folder = user_repo(tmp_path / "repo")
    out = run_suite(sys.executable, folder, "--co", "-q", *KIT_OPTIONS)
    check_shared(out, folder, "pytest-kind-ng")
    help_ = run_suite(sys.executable, folder, "--help")
    assert help_.returncode == 0, help_.stderr
    # Their group has the two shared options; the kit's says so, and has the rest.
    kind, _, kit = help_.stdout.partition("\npriority-conformance")
    assert "--keep-cluster" in kind.split("\nkind:")[-1] and "--kubeconfig=KUBECONFIG" in kind.split("\nkind:")[-1]
    assert kit.startswith("; --keep-cluster and --kubeconfig are listed under kind")
    assert "--scheduler-binary" in kit and "\n  --keep-cluster" not in kit and "\n  --kubeconfig" not in kit


def test_the_suite_runs_beside_pytest_kind_the_older_plugin(tmp_path):
    """pytest-kind (the original, 22.11.1) registers the same options as its fork: in a virtualenv
    with it instead of pytest-kind-ng (they are one module, pytest_kind), the same run."""
    from tests.venvs import dependency_links, make_venv

    links = dependency_links(tmp_path / "deps")
    for entry in list(links.iterdir()):  # pytest-kind-ng out: the two cannot be installed together
        if entry.name.lower().startswith(("pytest_kind", "pytest-kind")):
            entry.unlink()
    venv = make_venv(tmp_path / "venv", links, tmp_path / "cache")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv.python), "install", "--no-deps", "-q",
                              "pytest-kind==22.11.1"], capture_output=True, text=True, timeout=300)
    if install.returncode != 0:
        if "Could not find a version" in install.stderr or "NewConnectionError" in install.stderr \
                or "Network is unreachable" in install.stderr or "Max retries" in install.stderr:
            pytest.skip(f"PyPI unreachable: cannot install pytest-kind: {install.stderr.strip()[-300:]}")
        raise AssertionError(install.stderr)
    folder = user_repo(tmp_path / "repo")
    env = {**venv.env, "PYTHONPATH": ""}
    out = run_suite(str(venv.python), folder, "--co", "-q", *KIT_OPTIONS, env=env)
    check_shared(out, folder, "pytest-kind")


def test_another_plugin_s_option_of_the_kit_s_name_is_one_usage_error_naming_it(tmp_path):
    """A clash the kit does not share (an option of another meaning) says which option and what to
    do, instead of pytest's ValueError about a destination."""
    folder = user_repo(tmp_path / "repo")
    (folder / "clash.py").write_text("def pytest_addoption(parser):\n"
                                     "    parser.getgroup('other').addoption('--scheduler-binary', default=None)\n")
    out = run_suite(sys.executable, folder, "-p", "clash", "--co", "-q")
    assert out.returncode == 4, out.stdout + out.stderr
    assert "priority-conformance: another pytest plugin already registers --scheduler-binary" in out.stderr
    assert "-p no:<its name>" in out.stderr


@pytest.mark.parametrize("args, pyargs, runs", [
    (["conformance"], True, True),
    (["conformance.test_smoke"], True, True),
    (["conformance/test_smoke.py::test_high_priority_pod_preempts_low_priority_pod"], False, True),
    ([str(SUITE)], False, True),
    ([str(SUITE / "test_scenarios.py")], False, True),
    (["tests"], False, False),
    ([str(REPO)], False, False),  # a folder that holds the suite is not the suite (a venv inside a repo)
    (["other_package"], True, False),
    (["conformance_of_mine"], True, False),
    ([], False, False),
])
def test_the_entry_point_acts_only_in_a_session_that_names_the_suite(args, pyargs, runs):
    assert names_the_suite(args, pyargs, REPO) is runs
