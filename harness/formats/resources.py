"""A scenario pod's resources: its QoS class, its requests of cpu, memory and disk, what it holds
of them once it runs, and the step that resizes it in place (``resizePod``).

Room on a scenario node is counted in slots, an extended resource, which cannot be resized in
place; so a resize changes a pod's cpu or memory request, and a node says how much cpu it has
(``milliCPU``, harness/formats/nodes.py) when that matters.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from harness.formats.common import Bytes, Name, Strict
from harness.kube import NODE_MILLI_CPU, NODE_STORAGE, POD_MEMORY, POD_PROCESSES, QOS_MEMORY, QOS_MILLI_CPU


class PodResources(Strict):
    # The QoS class its cpu and memory requests and limits give it (a slot is an extended
    # resource: it does not count).
    qos: Literal["BestEffort", "Burstable", "Guaranteed"] = "BestEffort"
    milliCPU: int = Field(default=0, ge=0, le=NODE_MILLI_CPU, description="its cpu request, in millicores")
    storageRequest: Bytes = Field(default=0, le=NODE_STORAGE, description="its ephemeral-storage request")
    # Bytes it writes to an emptyDir once it runs, and keeps: its use of the node filesystem as
    # the kubelet measures it. Only a real kubelet runs the pod, so only there it shows.
    writes: Bytes = Field(default=0, le=NODE_STORAGE)
    # Bytes it holds in memory once it runs (a memory-backed emptyDir, charged to its memory
    # cgroup): its working set as the kubelet measures it. Again only a real kubelet shows it.
    memory: Bytes = Field(default=0, le=POD_MEMORY)
    memoryRequest: Bytes = Field(default=0, le=POD_MEMORY, description="its memory request")
    # Processes it runs once it runs, besides its own (sleepers): what the kubelet ranks by under
    # PID pressure. Again only a real kubelet shows them.
    processes: int = Field(default=0, ge=0, le=POD_PROCESSES)

    @property
    def memory_request(self) -> int:
        """What its QoS class and ``memoryRequest`` give it (a Guaranteed pod's limit too)."""
        return self.memoryRequest or (QOS_MEMORY if self.qos == "Guaranteed" else 0)

    @property
    def cpu_request(self) -> int:
        """Its cpu request in millicores (a Guaranteed pod's limit too); none for BestEffort."""
        return 0 if self.qos == "BestEffort" else self.milliCPU or QOS_MILLI_CPU

    @model_validator(mode="after")
    def _requests_fit_qos(self):
        for name in ("memoryRequest", "milliCPU"):
            if getattr(self, name) and self.qos == "BestEffort":
                raise ValueError(f"{name}: a pod with a request is not BestEffort: say qos: Burstable")
        if self.qos == "Guaranteed" and self.memory > self.memory_request:
            raise ValueError(f"memory: a Guaranteed pod's memory limit is its request ({self.memory_request >> 20}Mi): "
                             "holding more gets it killed, not ranked")
        return self


class ResizePod(Strict):
    """Change a running pod's cpu or memory request in place (the pods/resize subresource): a
    decrease is an UpdatePodScaleDown event (reference/requeue.py). Its QoS class may not change,
    so a Guaranteed pod's limits follow its requests."""

    name: Name
    milliCPU: int | None = Field(default=None, ge=1, le=NODE_MILLI_CPU)
    memoryRequest: Bytes | None = Field(default=None, ge=1 << 20, le=POD_MEMORY)

    @model_validator(mode="after")
    def _changes_something(self):
        if self.milliCPU is None and self.memoryRequest is None:
            raise ValueError("resizePod: give milliCPU or memoryRequest (or both)")
        return self


__all__ = ["PodResources", "ResizePod"]
