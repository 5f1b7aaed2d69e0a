"""The Indexed Job of a campaign: one pod per shard, each running the suite on its own local cluster.

Each pod runs ``./kit conformance --splits N`` with no ``--group``: pytest-split's group comes
from ``JOB_COMPLETION_INDEX``, which Kubernetes sets on each pod of an Indexed Job (from 0; the
kit adds 1). The pod's local cluster (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok) runs as processes inside the pod, bound to ports on the pod's own
loopback: nothing is shared with the node or the other pods, and nothing needs privilege.

A pod writes its results under ``/results`` (an emptyDir), then the exit code of the suite, then
waits. Its readiness probe passes once the exit code is there, so "Ready" means "results ready
to collect"; the collector copies ``/results`` out (``collect``) and creates ``.collected``,
and the pod exits with the suite's exit code. Waiting inside the pod, rather than copying after
it ends, is what keeps the files reachable: a finished container cannot be exec'd into, and an
emptyDir goes with its pod.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.build.runner_image import KIT_DIR, UID
from harness.kube import KIT_LABEL
from harness.targets import DEFAULT_BUILD

RESULTS = "/results"
EXIT_CODE = f"{RESULTS}/exit-code"  # written last: its presence is the readiness probe
COLLECTED = f"{RESULTS}/.collected"  # created by the collector: the pod may end
ARTIFACTS = f"{RESULTS}/artifacts"
LOG = f"{RESULTS}/conformance.log"
JOB_NAME = "campaign"
CONTAINER = "shard"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
MANAGED_BY = {"app.kubernetes.io/managed-by": "priority-conformance", "app.kubernetes.io/component": "campaign"}
# After its suite ends, how long a pod waits to be collected before it exits anyway: a campaign
# whose kit died (and whose watchdog could not delete the namespace) does not hold nodes forever.
COLLECT_WINDOW = 3600

# What one shard needs, per target (build) it runs at once: the suite runs at most two targets
# side by side (conformance/plugin/session.py BATCHES_AT_ONCE), each with its shared local
# cluster and clusters for scenarios that need one alone, as many as its memory limit holds
# (harness/run/pods/batch.py alone_rooms reads the cgroup's limit). The kit's own figure: a release-matrix run, two targets at once, peaked at
# 6.2 GiB for the kit and all its clusters (docs/history/release-matrix-runs.md), so about 3 GiB a
# target; the limit leaves room above that before the kernel kills the shard. Each shard's
# summary prints its real peak ("peak memory of the kit and its clusters"). No CPU limit: CFS
# throttling would stall the control plane in bursts and let the scenarios' timing, not the
# scheduler, decide verdicts; the CPU request only keeps shards apart where nodes have room.
MEMORY_GIB = {"requests": 3, "limits": 5}
TARGETS_AT_ONCE = 2
CPU_REQUEST = "1"
@dataclass(frozen=True)
class Plan:
    namespace: str
    image: str
    shards: int
    scheduler: str = DEFAULT_BUILD  # --scheduler of ./kit conformance: one build or several, comma-separated
    pytest_args: tuple[str, ...] = ()
    timeout: int = 7200  # seconds the whole campaign may take
    run_id: str = ""  # the kit's run label on what it creates

    @property
    def labels(self) -> dict[str, str]:
        return {**MANAGED_BY, KIT_LABEL: self.run_id or self.namespace}


def resources(plan: Plan) -> dict:
    at_once = min(len([b for b in plan.scheduler.split(",") if b.strip()]), TARGETS_AT_ONCE) or 1
    return {"requests": {"cpu": CPU_REQUEST, "memory": f"{MEMORY_GIB['requests'] * at_once}Gi"},
            "limits": {"memory": f"{MEMORY_GIB['limits'] * at_once}Gi"}}


def conformance_args(plan: Plan) -> list[str]:
    """What each pod runs: its shard of the suite, results under /results, nothing written beside
    the kit's source (the pods' user may not: no pytest cache)."""
    return ["./kit", "conformance", "--scheduler", plan.scheduler, "--splits", str(plan.shards),
            "--artifacts", ARTIFACTS, f"--junitxml={ARTIFACTS}/junit.xml", "-p", "no:cacheprovider",
            *plan.pytest_args]


# The pod's program: bash's "$@" is the suite's command line, so no argument is ever re-quoted.
SCRIPT = f"""\
mkdir -p {ARTIFACTS}
"$@" 2>&1 | tee {LOG}
code=${{PIPESTATUS[0]}}
echo "$code" > {EXIT_CODE}.tmp && mv {EXIT_CODE}.tmp {EXIT_CODE}
waited=0
while [ ! -e {COLLECTED} ] && [ "$waited" -lt {COLLECT_WINDOW} ]; do sleep 2; waited=$((waited + 2)); done
exit "$code"
"""


def args(plan: Plan) -> list[str]:
    """The container's args: the image's entrypoint (tini) stays PID 1 and runs them."""
    return ["bash", "-c", SCRIPT, "shard", *conformance_args(plan)]


def namespace(plan: Plan) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": plan.namespace, "labels": plan.labels}}


def job(plan: Plan) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": JOB_NAME, "namespace": plan.namespace, "labels": plan.labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": plan.shards,
            "parallelism": plan.shards,
            # Each shard runs once. Per index, so that one shard's failure (a failed test exits 1)
            # neither stops the others, as backoffLimit 0 would, nor runs that shard again.
            "backoffLimitPerIndex": 0,
            # A backstop should the kit and its watchdog both be gone: the Job ends itself.
            "activeDeadlineSeconds": plan.timeout + COLLECT_WINDOW,
            "template": {
                "metadata": {"labels": plan.labels},
                "spec": {
                    "restartPolicy": "Never",
                    # The pod talks only to its own local cluster, never to this one.
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    # The kit's SIGTERM path stops its clusters in seconds.
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {
                        # Every component is an ordinary process on ports above 1024 of the pod's
                        # own loopback, writing only under /tmp, /results and the image's cache
                        # folder (which uid 1000 owns): no root, no capability, no host access.
                        "runAsNonRoot": True,
                        "runAsUser": UID,
                        "runAsGroup": UID,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        # Not on a kwok node a conformance run on the same cluster made: no kubelet runs there.
                        "nodeSelectorTerms": [{"matchExpressions": [
                            {"key": "type", "operator": "NotIn", "values": ["kwok"]}]}]}}},
                    # One shard per node where the cluster has the nodes; never a reason to wait.
                    "topologySpreadConstraints": [{
                        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"job-name": JOB_NAME}}}],
                    "containers": [{
                        "name": CONTAINER,
                        "image": plan.image,
                        # Loaded into the nodes by the kit (no registry): never pulled.
                        "imagePullPolicy": "Never",
                        "workingDir": KIT_DIR,
                        "args": args(plan),
                        "resources": resources(plan),
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                            # The image's cache folder (logs, ports, locks) and /tmp (the local
                            # clusters' etcd data and logs) are written in the image's layer.
                            "readOnlyRootFilesystem": False,
                        },
                        "readinessProbe": {"exec": {"command": ["test", "-e", EXIT_CODE]},
                                           "periodSeconds": 5, "failureThreshold": 1},
                        "volumeMounts": [{"name": "results", "mountPath": RESULTS}],
                    }],
                    # Results only (JUnit, the shard's record, failing scenarios' artifacts): small.
                    "volumes": [{"name": "results", "emptyDir": {"sizeLimit": "1Gi"}}],
                },
            },
        },
    }


def indexes(text: str | None) -> set[int]:
    """Shards (from 1) named by a Job's ``failedIndexes`` / ``completedIndexes``: "0,2-4" is
    Kubernetes' indexes 0, 2, 3 and 4, the kit's shards 1, 3, 4 and 5."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        out.update(range(int(first) + 1, int(last or first) + 2))
    return out
