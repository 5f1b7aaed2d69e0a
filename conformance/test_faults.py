"""The local cluster under faults: a clear message naming the component, and nothing left behind.

These start clusters of their own (a few seconds each) from the cached binaries.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.cluster import ClusterOptions, LocalCluster
from harness.errors import KitError

pytestmark = [pytest.mark.cluster]


@pytest.fixture(autouse=True)
def local_only(request):
    if request.config.getoption("--kubeconfig") or request.config.getoption("--cluster") != "local":
        pytest.skip("fault tests start local clusters of their own; asked to use another cluster")


def kit_processes(workdir: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
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
    c = LocalCluster(ClusterOptions(build="upstream", scheduler_binary=broken, name=f"fault-{os.getpid()}",
                                    ready_timeout=20))
    with pytest.raises(KitError) as e:
        c.up()
    message = str(e.value)
    assert "kube-scheduler did not become ready" in message
    log = Path(message.split("its log: ")[1].strip())
    assert "cannot start" in log.read_text()  # the log outlives the cluster
    assert c.workdir is None  # removed
    time.sleep(0.5)
    assert not [p for p in kit_processes("priority-conformance-") if f"fault-{os.getpid()}" in p]


def test_ctrl_c_during_a_run_leaves_no_process_or_directory(tmp_path):
    marker = tmp_path / "workdir.txt"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""\
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from harness.cluster import ClusterOptions, LocalCluster
        with LocalCluster(ClusterOptions(build="plugins", name="ctrlc-{os.getpid()}")) as c:
            open({str(marker)!r}, "w").write(str(c.workdir))
            time.sleep(120)
        """))
    proc = subprocess.Popen([sys.executable, str(script)])
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marker.exists(), "the cluster did not come up"
    workdir = marker.read_text()
    assert kit_processes(workdir), "the cluster's processes should be running before Ctrl-C"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    time.sleep(0.5)
    assert kit_processes(workdir) == []
    assert not Path(workdir).exists()
