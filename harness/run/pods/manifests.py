"""The objects a pod scenario's client sends, built from the scenario's specs: classes, pods (with
what makes their QoS class, their disk, memory and processes), PodGroups in the release's API
version, and the admission probe. Pure: no calls.
"""

from __future__ import annotations

from kubernetes import client

from harness import gates
from harness.formats.pods import ClassSpec, PodGroupSpec, PodSpec
from harness.kube import SLOT
from harness.run.names import SCENARIO_LABEL, Names

TOPOLOGY_KEYS = {"hostname": "kubernetes.io/hostname", "zone": "topology.kubernetes.io/zone"}


def v1_class(c: ClassSpec, names: Names) -> client.V1PriorityClass:
    return client.V1PriorityClass(
        metadata=client.V1ObjectMeta(name=names.class_name(c.name), annotations=dict(c.annotations) or None),
        value=c.value, global_default=c.globalDefault, preemption_policy=c.preemptionPolicy,
        description=c.description or None)


def v1_pod(p: PodSpec, names: Names, image: str, node_name: str | None = None,
           pin_to: str | None = None) -> client.V1Pod:
    def terms(ts):
        return [client.V1PodAffinityTerm(label_selector=client.V1LabelSelector(match_labels=dict(t.labels)),
                                         topology_key=TOPOLOGY_KEYS[t.topology]) for t in ts]

    affinity = None
    if p.podAffinity or p.podAntiAffinity:
        affinity = client.V1Affinity(
            pod_affinity=client.V1PodAffinity(required_during_scheduling_ignored_during_execution=terms(p.podAffinity))
            if p.podAffinity else None,
            pod_anti_affinity=client.V1PodAntiAffinity(
                required_during_scheduling_ignored_during_execution=terms(p.podAntiAffinity))
            if p.podAntiAffinity else None)
    limits = {SLOT: str(p.slots)} if p.slots else {}
    requests = dict(limits)
    # Small enough to fit any node; what matters is only the QoS class they make (and the memory
    # request, which the kubelet's memory ranking reads).
    if p.qos == "Guaranteed":
        qos = {"cpu": f"{p.cpu_request}m", "memory": str(p.memory_request)}
        limits, requests = {**limits, **qos}, {**requests, **qos}
    elif p.qos == "Burstable":
        requests = {**requests, "cpu": f"{p.cpu_request}m",
                    **({"memory": str(p.memory_request)} if p.memory_request else {})}
    if p.storageRequest:
        requests["ephemeral-storage"] = str(p.storageRequest)
    volumes, mounts, command = [], [], None
    # No sizeLimit and no limit: the kubelet's limit eviction would act instead of its ranking.
    if p.writes:
        volumes.append(client.V1Volume(name="data", empty_dir=client.V1EmptyDirVolumeSource()))
        mounts.append(client.V1VolumeMount(name="data", mount_path="/data"))
    if p.memory:  # tmpfs: what is written there is charged to the pod's memory cgroup
        volumes.append(client.V1Volume(name="mem", empty_dir=client.V1EmptyDirVolumeSource(medium="Memory")))
        mounts.append(client.V1VolumeMount(name="mem", mount_path="/mem"))
    if p.writes or p.memory or p.processes:
        command = writer_command(p.writes, p.memory, p.processes)
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=p.name, labels=dict(p.labels) or None),
        spec=client.V1PodSpec(
            priority_class_name=names.class_name(p.priorityClassName) or None,
            priority=p.priority,
            preemption_policy=p.preemptionPolicy,
            termination_grace_period_seconds=p.grace,
            node_name=node_name,
            # Only the scenario's own nodes: scenarios side by side never meet.
            node_selector={SCENARIO_LABEL: names.namespace, **p.nodeSelector,
                           **({"kubernetes.io/hostname": pin_to} if pin_to else {})},
            tolerations=[client.V1Toleration(key=t.key or None, operator=t.operator, value=t.value or None,
                                             effect=t.effect or None) for t in p.tolerations] or None,
            affinity=affinity,
            containers=[client.V1Container(name="c", image=image, command=command, volume_mounts=mounts or None,
                                           resources=client.V1ResourceRequirements(limits=limits or None,
                                                                                   requests=requests or None))],
            volumes=volumes or None,
        ),
    )


def admission_probe(class_name: str | None, image: str) -> client.V1Pod:
    """A pod that is only ever created with dry run: what admission makes of a class."""
    return client.V1Pod(metadata=client.V1ObjectMeta(name="admission-probe"),
                        spec=client.V1PodSpec(priority_class_name=class_name,
                                              containers=[client.V1Container(name="c", image=image)]))


# The PodGroup as each release's API has it (docs/research/workload-aware-preemption.md 1.1-1.2):
# v1alpha2 (1.36) spells the disruption mode as a string, v1beta1 (1.37+) as a one-of object.
DISRUPTION_V1ALPHA2 = {"single": "Pod", "all": "PodGroup"}


def pod_group_api(release: str) -> tuple[str, str]:
    """(group, version) of PodGroups on ``release``: the one GenericWorkload serves there."""
    served = gates.SERVES["GenericWorkload"].get(release)
    if served is None:
        raise KeyError(f"Kubernetes {release} has no PodGroup API the kit knows")
    group, version = served.split("/")
    return group, version


def v1_pod_group(g: PodGroupSpec, names: Names, release: str) -> dict:
    group, version = pod_group_api(release)
    spec: dict = {"schedulingPolicy": {"gang": {"minCount": g.minCount}} if g.minCount else {"basic": {}}}
    if g.priorityClassName:
        spec["priorityClassName"] = names.class_name(g.priorityClassName)
    spec["disruptionMode"] = (DISRUPTION_V1ALPHA2[g.disruptionMode] if version == "v1alpha2"
                              else {g.disruptionMode: {}})
    if g.preemptionPolicy:
        spec["preemptionPolicy"] = g.preemptionPolicy
    return {"apiVersion": f"{group}/{version}", "kind": "PodGroup", "metadata": {"name": g.name}, "spec": spec}


def writer_command(disk: int, memory: int = 0, processes: int = 0) -> list[str]:
    """Write ``disk`` bytes to the disk emptyDir and ``memory`` to the memory-backed one, once,
    start ``processes`` sleepers, then hold on like the holdout image's program."""
    fill = [f"/busybox dd if=/dev/zero of=/{where}/fill bs=1M count={size >> 20} 2>/dev/null; "
            for where, size in (("data", disk), ("mem", memory)) if size]
    if processes:
        fill.append(f"i=0; while [ $i -lt {processes} ]; do /busybox sleep 86400 & i=$((i+1)); done; ")
    return ["/busybox", "sh", "-c", "".join(fill) + "trap '' TERM; while :; do /busybox sleep 1; done"]
