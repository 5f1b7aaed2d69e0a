"""The conformance plugin's option checks: each wrong combination is one usage error, as the README shows."""

from __future__ import annotations

import dataclasses
import subprocess
import tempfile
import sys
from pathlib import Path

import pytest

from conformance.plugin.options import check_files, targets
from conformance.plugin.state import RunOptions
from harness.build import pins

REPO = Path(__file__).resolve().parents[2]

DEFAULTS = RunOptions(
    scheduler=None, k8s_version=None, scheduler_binary=None, scheduler_config=None, keep_cluster=False,
    kubeconfig=None, cluster="local", kind_binary=None, kind_node_image=None, scheduler_image=None, repeat=1,
    scheduler_verbosity=None, artifacts=Path("artifacts"), scenarios=None, no_cluster=False, system="pods",
    karmada_scheduler_binary=None, karmada_scheduler_gates=None, feature_gates=None, runtime_config=None,
    collect_only=False, stop_at_first_failure=False)


def opts(**changes) -> RunOptions:
    return dataclasses.replace(DEFAULTS, **changes)


def test_the_targets_are_the_builds_asked_for_or_each_build_at_each_release():
    assert targets(DEFAULTS) == ["plugins"]
    assert targets(opts(scheduler="plugins, upstream")) == ["plugins", "upstream"]
    every = targets(opts(scheduler="plugins,upstream", k8s_version="all"))
    releases = pins.releases()
    # Release order, and the plugins build only where scheduler-plugins builds.
    assert every == [f"{b}@{r}" for r in releases for b in ("plugins", "upstream")
                     if b == "upstream" or pins.has_plugins(r)]
    assert targets(opts(scheduler="upstream", k8s_version=releases[-1])) == [f"upstream@{releases[-1]}"]


@pytest.mark.parametrize("changes, message", [
    ({"scheduler": "nosuch"}, "--scheduler: unknown build ['nosuch']: choose from plugins, upstream"),
    ({"scheduler": ","}, "--scheduler: unknown build []: choose from plugins, upstream"),
    ({"scheduler": "plugins,upstream", "kubeconfig": Path("k")},
     "--kubeconfig runs one existing cluster: give a single --scheduler"),
    ({"k8s_version": "1.35", "cluster": "kind"}, "--k8s-version chooses the release of the local cluster"),
    ({"k8s_version": "9.99"}, "--k8s-version: no release 9.99: choose from "),
])
def test_a_wrong_build_or_release_is_one_usage_error(changes, message):
    with pytest.raises(pytest.UsageError) as e:
        targets(opts(**changes))
    assert str(e.value).startswith(message)


def test_a_release_without_a_build_runs_the_builds_it_has_and_says_which_cell_is_not_run(tmp_path):
    """`--k8s-version 1.37` alone ran nothing (an error), and `1.34,1.37` dropped 1.37 in silence."""
    from conformance.plugin.options import plan
    from conformance.plugin.reporting import not_run_line

    without = [r for r in pins.releases() if not pins.has_plugins(r)]
    with_plugins = [r for r in pins.releases() if pins.has_plugins(r)]
    if not without:
        pytest.skip("every release has a scheduler-plugins build")
    newest, older = without[-1], with_plugins[0]
    # No --scheduler: every build that exists on the release, and the missing cell named.
    found, not_run = plan(opts(k8s_version=newest))
    assert found == [f"upstream@{newest}"]
    assert not_run == [(f"plugins@{newest}", f"no scheduler-plugins release builds on Kubernetes {newest}")]
    assert not_run_line(not_run) == f"not run: plugins@{newest} (no scheduler-plugins release builds on Kubernetes {newest})"
    # An explicit build runs where it exists; the cell it cannot run is said, not dropped.
    found, not_run = plan(opts(scheduler="plugins", k8s_version=f"{older},{newest}"))
    assert found == [f"plugins@{older}"] and [t for t, _ in not_run] == [f"plugins@{newest}"]
    # An explicit build that runs nowhere asked is one usage error.
    with pytest.raises(pytest.UsageError, match=f"--k8s-version {newest}: no scheduler-plugins release builds on it"):
        targets(opts(scheduler="plugins", k8s_version=newest))
    assert targets(opts(scheduler="plugins", k8s_version=newest, scheduler_binary=tmp_path / "s")) == [f"plugins@{newest}"]
    assert not_run_line([]) is None


def test_named_files_must_exist_and_the_scheduler_config_is_for_the_local_cluster(tmp_path):
    check_files(opts(scheduler_binary=REPO / "pyproject.toml"))
    with pytest.raises(pytest.UsageError, match="^--kubeconfig: file not found: /nonexistent$"):
        check_files(opts(kubeconfig=Path("/nonexistent")))
    with pytest.raises(pytest.UsageError, match="^--scheduler-config is for the local cluster"):
        check_files(opts(cluster="kind", scheduler_config=REPO / "pyproject.toml"))


def _suite(*args: str) -> subprocess.CompletedProcess:
    # Its own artifacts folder: the checkout's holds the user's last run (its run-summary.json,
    # which the README's figures are generated from), and a unit test must not overwrite it.
    with tempfile.TemporaryDirectory() as artifacts:
        return subprocess.run([sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider",
                               f"--artifacts={artifacts}", *args],
                              cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, line", [
    (["--scheduler", "nosuch"], "ERROR: --scheduler: unknown build ['nosuch']: choose from plugins, upstream"),
    (["--scenarios", "/nonexistent"], "ERROR: invalid scenario: /nonexistent: no such scenario file or folder"),
    (["--system", "karmada", "--karmada-scheduler-gates", "nonsense"],
     "ERROR: --karmada-scheduler-gates: 'nonsense': expected GATE=true or GATE=false"),
])
def test_the_suite_stops_with_one_line_before_anything_starts(args, line):
    out = _suite(*args)
    assert out.returncode == 4
    assert out.stderr.strip() == line


def test_without_a_cluster_every_test_is_reported_skipped_and_the_other_system_deselected():
    out = _suite("-q", "--no-cluster", "--system", "karmada", "-k", "queue")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "--no-cluster was given: cluster tests were not run" in out.stdout
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("2 skipped, 24 deselected"), last


def test_the_session_builds_the_components_of_the_clusters_the_options_start():
    from conformance.plugin.session import modules_needed
    from conformance.plugin.state import RunState

    def needed(**changes):
        o = opts(**changes)
        return modules_needed(RunState(options=o, targets=targets(o)))

    assert needed() == {None: ("etcd", "kwok", "kubernetes", "scheduler-plugins")}
    assert needed(scheduler="upstream") == {None: ("etcd", "kwok", "kubernetes")}
    assert needed(scheduler_binary=Path("s")) == {None: ("etcd", "kwok", "kubernetes")}
    r = pins.releases()[0]
    assert needed(scheduler="upstream,plugins", k8s_version=r) == {r: ("etcd", "kwok", "kubernetes", "scheduler-plugins")}
    assert needed(system="karmada", k8s_version=r) == {r: ("etcd", "kwok", "kubernetes", "karmada")}
    # Nothing for a cluster the kit does not start, or none at all.
    assert needed(kubeconfig=Path("k")) == needed(cluster="kind") == needed(no_cluster=True) == {}
    assert needed(system="karmada", no_cluster=True) == {}


def test_gates_are_checked_and_only_for_local_clusters():
    from conformance.plugin.options import check_gates

    check_gates(opts(feature_gates="GenericWorkload=true", runtime_config="scheduling.k8s.io/v1alpha1"))
    with pytest.raises(pytest.UsageError, match="--feature-gates/--runtime-config: 'Generic': write Gate=true"):
        check_gates(opts(feature_gates="Generic"))
    with pytest.raises(pytest.UsageError, match="set the local clusters the kit starts"):
        check_gates(opts(feature_gates="GenericWorkload=true", cluster="kind"))
