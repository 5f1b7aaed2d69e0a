"""PID pressure on a kind worker: the kubelet's threshold moved near what is free, then a filler of
sleeping processes.

The kubelet's ``pid.available`` is the kernel's task limit less every task the kernel runs
(``/proc/loadavg``, pidlimit_linux.go): the host's count, not the node container's. So, as for
memory (memory_pressure.py, whose order it keeps for the same reasons: a kubelet restarted under
pressure refuses pods at re-admission), the kit reads ``pid.available`` as the kubelet reports
it, sets ``evictionHard: pid.available`` HEADROOM tasks below it and restarts the kubelet; then it
starts sleeping processes in the node container, outside every pod, until the node is short by
what the model's ranking calls for. The filler is killed and the configuration put back after.
A pod's processes are its ``processes:`` sleepers (manifests.py writer_command), which the kubelet
counts from the pod's cgroup (``process_stats``) and ranks by after priority (rankPIDPressure).
"""

from __future__ import annotations

from typing import Callable

import yaml

from harness.clusters import kubelet
from harness.clusters.pressure import node_exec, summary, wait_calm, wait_for_pods
from harness.errors import KitError
from harness.kube import Kube

FILLER_PIDS = "/run/prioritykit-pids"  # the filler's process ids, in the node container
HEADROOM = 200  # tasks free above the moved threshold while the kubelet restarts
PID_PRESSURE_TAINT = "node.kubernetes.io/pid-pressure"
# Half the last victim's processes must cover the host's drift in tasks over a kubelet pass or two
# (threads of the cluster's own processes come and go by tens here).
MIN_MARGIN = 50


def available(kube: Kube, node: str) -> int:
    r = summary(kube, node)["node"]["rlimit"]
    return r["maxpid"] - r["curproc"]


def wait_for_processes(kube: Kube, node: str, namespace: str, held: dict[str, int], timeout: float = 120) -> None:
    """Until the kubelet's stats show each pod running at least the processes it holds."""
    wait_for_pods(kube, node, namespace, held, lambda pod: (pod.get("process_stats") or {}).get("process_count"),
                  "processes", timeout=timeout)


def squeeze(kube: Kube, node: str, original: str, shortfall: int, stats_shown: Callable[[], None]) -> None:
    """Put ``node`` ``shortfall`` tasks below its kubelet's PID threshold; ``stats_shown`` waits
    until the restarted kubelet's stats show the pods' processes again: without them every pod
    counts 0 processes and the ranking within a priority is chance (a mutant that ranks by
    processes alone once passed so)."""
    threshold = available(kube, node) - HEADROOM
    conf = kubelet.with_threshold(yaml.safe_load(original), "pid.available", str(threshold))
    kubelet.restart(kube, node, yaml.safe_dump(conf), "moving its PID threshold")
    stats_shown()
    count = available(kube, node) - threshold + shortfall
    if count <= shortfall:
        raise KitError(f"kind node {node} came back from the kubelet's restart already short of PIDs")
    # setsid: the sleepers outlive docker exec's shell; their ids are kept to end them.
    node_exec(node, f"i=0; while [ $i -lt {count} ]; do setsid sleep 86400 </dev/null >/dev/null 2>&1 & "
              f"echo $! >> {FILLER_PIDS}; i=$((i+1)); done", "starting the PID filler", timeout=300)


def relieve(kube: Kube, node: str, original: str, timeout: float = 120) -> None:
    """End the filler and put the kubelet's configuration back; until the node shows no PID pressure."""
    node_exec(node, f"[ ! -f {FILLER_PIDS} ] || {{ xargs kill -9 < {FILLER_PIDS} 2>/dev/null || true; rm -f {FILLER_PIDS}; }}",
              "ending the PID filler")
    kubelet.restart(kube, node, original, "putting its configuration back")
    wait_calm(kube, node, "PIDPressure", PID_PRESSURE_TAINT, timeout)


__all__ = ["available", "relieve", "squeeze", "wait_for_processes", "MIN_MARGIN"]
