"""A shard's pod: what state it is in, and its results copied out of it.

The results leave the pod through the API server's exec (the kubernetes client's stream), as
``tar | base64``: the client's exec channel is text, and base64 survives it on every client
version the kit accepts. Nothing outside the pod's own /results is read, and nothing in the
archive is written outside the shard's folder.
"""

from __future__ import annotations

import base64
import binascii
import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

from harness.campaign.job import COLLECTED, CONTAINER, EXIT_CODE, INDEX_ANNOTATION, RESULTS
from harness.errors import KitError
from harness.host import console

# A container waiting for one of these never starts by itself: the campaign stops at once.
CANNOT_START = {"ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                "CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


@dataclass(frozen=True)
class PodState:
    name: str
    shard: int  # from 1, as the kit numbers shards
    node: str
    kind: str  # "pending", "running", "ready" (results to collect), "ended" (before collection), "stuck"
    detail: str = ""

    def where(self) -> str:
        return f"pod {self.name} (shard {self.shard}" + (f", node {self.node})" if self.node else ")")


def shard_of(pod) -> int:
    """The kit's shard number (from 1) of an Indexed Job's pod (whose index counts from 0)."""
    raw = (pod.metadata.annotations or {}).get(INDEX_ANNOTATION)
    if raw is None or not raw.isdigit():
        raise KitError(f"pod {pod.metadata.name} has no {INDEX_ANNOTATION} annotation: not a pod of an Indexed Job")
    return int(raw) + 1


def state(pod) -> PodState:
    name, shard, node = pod.metadata.name, shard_of(pod), pod.spec.node_name or ""
    status = pod.status
    phase = status.phase or "Pending"
    containers = status.container_statuses or []
    if phase in ("Succeeded", "Failed"):
        return PodState(name, shard, node, "ended", _ended(pod))
    for c in containers:
        waiting = c.state.waiting if c.state else None
        if waiting is not None and waiting.reason in CANNOT_START:
            return PodState(name, shard, node, "stuck", f"{waiting.reason}: {waiting.message or ''}".strip(": "))
    if phase == "Pending":
        sched = next((c for c in status.conditions or [] if c.type == "PodScheduled"), None)
        why = f"not scheduled: {sched.message}" if sched is not None and sched.status == "False" else "starting"
        return PodState(name, shard, node, "pending", why)
    ready = any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])
    return PodState(name, shard, node, "ready" if ready else "running")


def _ended(pod) -> str:
    """Why a pod ended before its results were collected: the container's end, or the pod's reason."""
    parts = []
    if pod.status.reason:
        parts.append(f"{pod.status.reason}: {pod.status.message or ''}".strip(": "))
    for c in pod.status.container_statuses or []:
        term = c.state.terminated if c.state else None
        if term is not None:
            parts.append(f"container exited {term.exit_code}" + (f" ({term.reason})" if term.reason else ""))
    return "; ".join(parts) or f"phase {pod.status.phase}"


def exec_in(core, namespace: str, pod: str, command: list[str], timeout: float = 300) -> tuple[int, str, str]:
    """Run ``command`` in the shard's container; (exit code, stdout, stderr)."""
    from kubernetes.stream import stream

    try:
        resp = stream(core.connect_get_namespaced_pod_exec, pod, namespace, container=CONTAINER, command=command,
                      stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    except Exception as e:
        raise KitError(f"cannot exec into pod {pod} ({namespace}): {e}") from None
    try:
        resp.run_forever(timeout=timeout)
        if resp.is_open():
            raise KitError(f"`{' '.join(command)[:60]}` in pod {pod} did not end within {timeout:.0f} s")
        out, err = resp.read_stdout(), resp.read_stderr()
        return resp.returncode, out, err
    finally:
        resp.close()


def archive_command() -> list[str]:
    return ["sh", "-c", f"tar -C {RESULTS} -czf - --exclude=./{Path(COLLECTED).name} . | base64 -w0"]


def unpack(encoded: str, dest: Path) -> list[str]:
    """The pod's base64 tar.gz of /results into ``dest``; the files written, relative to it.

    Only plain files and folders inside ``dest`` are taken; anything else is refused, so a pod
    (whose contents the kit does not control once a user's pytest arguments ran in it) cannot
    write elsewhere on the host."""
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as e:
        raise KitError(f"the results sent for {dest.name} are not base64: {e}") from None
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    written = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            for m in members:
                target = (root / m.name).resolve()
                if not (m.isfile() or m.isdir()) or (target != root and root not in target.parents):
                    raise KitError(f"the results of {dest.name} hold {m.name!r}, which is not a plain file "
                                   f"or folder inside the results: refused")
            # tarfile's "data" filter where this Python has it: the same checks, and no modes or owners kept.
            extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(root, members=members, **extra)
            written = [str(Path(m.name)) for m in members if m.isfile()]
    except (tarfile.TarError, EOFError, OSError) as e:
        raise KitError(f"the results of {dest.name} could not be unpacked: {e}") from None
    return sorted(written)


def collect(core, namespace: str, pod: PodState, dest: Path) -> int:
    """Copy the pod's /results into ``dest``, tell the pod it may end; the shard's exit code."""
    code, out, err = exec_in(core, namespace, pod.name, archive_command())
    if code != 0:
        raise KitError(f"copying the results out of {pod.where()} failed (exit {code}): {err.strip()[-300:]}")
    unpack(out, dest)
    exit_file = dest / Path(EXIT_CODE).name
    try:
        shard_exit = int(exit_file.read_text().strip())
    except (OSError, ValueError):
        raise KitError(f"{pod.where()} was ready but its {EXIT_CODE} is missing or not a number") from None
    code, _, err = exec_in(core, namespace, pod.name, ["touch", COLLECTED])
    if code != 0:
        # The results are safe; the pod only waits longer (its namespace goes at the end anyway).
        console.log(f"could not tell {pod.where()} it was collected: {err.strip()[-300:]}")
    return shard_exit


def log_tail(core, namespace: str, pod: str, lines: int = 15) -> str:
    """The last lines the shard printed (kept by the kubelet after its container ended)."""
    try:
        return core.read_namespaced_pod_log(pod, namespace, container=CONTAINER, tail_lines=lines)
    except Exception as e:
        return f"(no log: {e})"
