"""The local cluster under faults: a clear message naming the component, and nothing left behind.

These start clusters of their own (a few seconds each) from the cached binaries.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.clusters.local import ClusterOptions, LocalCluster
from harness.errors import KitError

# They start local clusters of their own: a run on another cluster deselects them (plugin/collection.py).
pytestmark = [pytest.mark.cluster, pytest.mark.local_clusters]


def kit_processes(workdir: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if workdir in line and "ps -eo" not in line]


def test_a_scheduler_that_does_not_start_is_named_with_its_log(tmp_path):
    broken = tmp_path / "kube-scheduler"
    # Answers --version like a scheduler (kwokctl asks), then fails to run.
    broken.write_text(textwrap.dedent("""\
        #!/bin/sh
        [ "$1" = "--version" ] && { echo "Kubernetes v1.34.4"; exit 0; }
        echo "scheduler: cannot start" >&2; exit 1
        """))
    broken.chmod(0o755)
    # Its logs kept in the test's folder, not the user's cache: this failure is the test's own.
    c = LocalCluster(ClusterOptions(build="upstream", scheduler_binary=broken, name=f"fault-{os.getpid()}",
                                    ready_timeout=20, failure_logs=tmp_path / "kept"))
    with pytest.raises(KitError) as e:
        c.up()
    message = str(e.value)
    assert "kube-scheduler did not become ready" in message
    # What it was waiting on: the scheduler down, and what the API server said of its health.
    assert re.search(r"kube-scheduler: not running; the API server's failing health checks: \S", message), message
    assert all(tmp_path / "kept" in log.parents for log in e.value.logs)
    # Every log the error names outlives the cluster and is named in the message, the first run's
    # first (a component that exits is started once more, as the kubelet restarts a static pod);
    # the first run's holds the failure.
    assert e.value.logs and all(log.is_file() and str(log) in message for log in e.value.logs)
    assert "cannot start" in e.value.logs[0].read_text()
    assert c.workdir is None  # removed
    time.sleep(0.5)
    assert not [p for p in kit_processes("priority-conformance-") if f"fault-{os.getpid()}" in p]


REPO = Path(__file__).resolve().parent.parent


def _wait_until(cond, timeout: float, interval: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(interval)
    return cond()


def _ignore_sigint() -> None:
    # What a background job of a non-interactive shell inherits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("how", ["SIGINT", "SIGINT-inherited-ignored", "SIGTERM", "SIGHUP", "SIGKILL"])
def test_a_stopped_kit_leaves_no_process_or_directory(tmp_path, how):
    """`./kit conformance` stopped while its cluster runs: nothing of it stays behind.

    SIGKILL runs no cleanup in the kit at all: the cluster's watchdog does it.
    """
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}  # the child's cluster directory lands here, where we can see it
    # From a checkout, `./kit conformance`; from an installed kit, what it runs: pytest on the suite.
    kit = REPO / "kit"
    entry = [str(kit), "conformance"] if kit.is_file() else [sys.executable, "-m", "pytest", str(Path(__file__).parent)]
    proc = subprocess.Popen(
        [*entry, "-m", "smoke", "--scheduler", "upstream", "-p", "no:cacheprovider", "-q"],
        cwd=REPO if kit.is_file() else tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=_ignore_sigint if how == "SIGINT-inherited-ignored" else None)
    try:
        def scheduler_started() -> list[Path]:
            return [d for d in tmp.glob("priority-conformance-*") if list(d.glob("clusters/*/pids/kube-scheduler.pid"))]

        assert _wait_until(lambda: scheduler_started() or proc.poll() is not None, 120), "no cluster came up"
        assert proc.poll() is None, f"the kit ended before it could be stopped:\n{proc.stdout.read()}"
        workdir = scheduler_started()[0]
        time.sleep(1)  # mid-run: the cluster is up and the smoke test under way
        assert kit_processes(str(workdir)), "the cluster's processes should be running before the signal"
        proc.send_signal(getattr(signal, how.split("-")[0]))
        out, _ = proc.communicate(timeout=90)
        if how != "SIGKILL":
            assert proc.returncode not in (0, None), f"the run was not interrupted by {how}:\n{out}"
        # After SIGKILL the watchdog needs a moment; otherwise teardown is done when the kit exits.
        assert _wait_until(lambda: not kit_processes(str(workdir)) and not workdir.exists(), 45), (
            f"left behind after {how}: {kit_processes(str(workdir))}, directory exists: {workdir.exists()}")
        assert not [p for p in kit_processes("harness.host.watchdog") if str(workdir) in p], "the watchdog outlived its job"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for d in tmp.glob("priority-conformance-*"):  # never leave a test's own leftovers
            from harness.host.lifecycle import reap
            reap(d)


def test_four_clusters_started_at_once_all_come_up():
    """Clusters started together get ports of their own: none loses a port to another."""
    from concurrent.futures import ThreadPoolExecutor

    clusters = [LocalCluster(ClusterOptions(build="upstream", name=f"together-{i}-{os.getpid()}")) for i in range(4)]
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            errors = [f.exception() for f in [pool.submit(c.up) for c in clusters]]
        assert errors == [None] * 4, f"clusters that did not come up: {errors}"
        used = [set(c.ports.values()) for c in clusters]
        assert all(a.isdisjoint(b) for i, a in enumerate(used) for b in used[i + 1:])
    finally:
        for c in clusters:
            c.down()
