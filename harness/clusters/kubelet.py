"""A kind worker's kubelet: its configuration, a restart with another one, and the binary itself
replaced (a kubelet mutant, ``--kubelet-binary``). Memory and PID pressure move its eviction
thresholds (memory_pressure.py, pid_pressure.py); everything here goes with the node's container.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.clusters.pressure import node_exec, summary
from harness.errors import KitError
from harness.host.wait import NotYet, wait_for
from harness.kube import Kube

CONFIG = "/var/lib/kubelet/config.yaml"


def config(node: str) -> str:
    """The kubelet's configuration as it is: what a pressure step's relief puts back."""
    return node_exec(node, f"cat {CONFIG}", "reading the kubelet's configuration")


def with_threshold(conf: dict, signal: str, value: str) -> dict:
    """``conf`` with a hard eviction threshold for ``signal`` set to ``value``."""
    return {**conf, "evictionHard": {**(conf.get("evictionHard") or {}), signal: value}}


def restart(kube: Kube, node: str, conf: str, what: str) -> None:
    """Write the kubelet's configuration and restart it; until it serves stats again."""
    node_exec(node, f"cat > {CONFIG}.new && mv {CONFIG}.new {CONFIG} && systemctl restart kubelet", what, stdin=conf)
    wait_serving(kube, node, what)


def wait_serving(kube: Kube, node: str, what: str, timeout: float = 120) -> None:
    """Until a restarted kubelet serves stats again."""
    def serving():
        try:
            summary(kube, node)["node"]
        except Exception as e:  # restarting: refused, or no stats yet
            raise NotYet(f"the kubelet does not serve stats yet ({type(e).__name__})") from None
    wait_for(serving, timeout, f"the kubelet of {node} to serve stats after {what}", interval=1)


def replace(kube: Kube, node: str, binary: Path) -> None:
    """``node``'s kubelet replaced by ``binary`` and restarted."""
    copied = subprocess.run(["docker", "cp", str(binary), f"{node}:/usr/bin/kubelet.prioritykit"],
                            capture_output=True, text=True)
    if copied.returncode != 0:
        raise KitError(f"--kubelet-binary: could not copy {binary} into kind node {node}: {copied.stderr.strip()}")
    node_exec(node, "mv /usr/bin/kubelet.prioritykit /usr/bin/kubelet && systemctl restart kubelet",
              "replacing its kubelet")
    # Right after the cluster's creation, beside other clusters starting, one worker of four took
    # over 120 s here (the run was judged inconclusive, as a kit error).
    wait_serving(kube, node, "its kubelet was replaced", timeout=300)


__all__ = ["CONFIG", "config", "replace", "restart", "wait_serving", "with_threshold"]
