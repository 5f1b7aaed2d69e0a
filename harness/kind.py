"""The kind path: the same suite on a kind cluster, for users on Docker hosts.

NOT exercised by this project's CI: its machines have no Docker engine. The
pieces that do not need Docker (rendering the config, the commands, the
preflight errors, the node-capacity patching) are tested; see README.

The cluster comes from ``kind-config.yaml`` (top level) through pytest-kind-ng
(the maintained fork of pytest-kind: same KindCluster API, still released).
For the scheduler-plugins build the user names a scheduler image: the
provider loads it into the nodes and points the control plane's static
kube-scheduler pod at it; the mounted KubeSchedulerConfiguration enables
PreemptionToleration and disables DefaultPreemption at postFilter.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

import yaml

from .errors import KitError
from .kube import Kube, NotYet, wait_for

REPO = Path(__file__).resolve().parent.parent
KIND_CONFIG = REPO / "kind-config.yaml"
DATA = Path(__file__).parent / "data"
SCHEDULER_CONFIG = {"plugins": DATA / "kind-scheduler-plugins.yaml", "upstream": DATA / "kind-scheduler-upstream.yaml"}
RBAC = DATA / "kind-scheduler-rbac.yaml"
MANIFEST = "/etc/kubernetes/manifests/kube-scheduler.yaml"
MOUNTED_CONFIG = "/etc/kubernetes/priority-conformance/scheduler-config.yaml"


def preflight(kind_path: str | None, docker: str = "docker") -> Path:
    """A clear error for the usual reasons kind cannot run; the kind binary's path otherwise."""
    if shutil.which(docker) is None:
        raise KitError("--cluster kind needs Docker: no `docker` command on PATH")
    info = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
    if info.returncode != 0 or not info.stdout.strip():
        raise KitError("--cluster kind needs a running Docker engine: `docker info` failed: "
                       + (info.stderr.strip().splitlines() or ["no answer"])[-1])
    found = kind_path or shutil.which("kind")
    if not found or not Path(found).is_file():
        raise KitError("--cluster kind needs the kind binary: give --kind-binary PATH or put kind on PATH "
                       "(the kit downloads nothing)")
    return Path(found)


def render_config(build: str, workdir: Path) -> Path:
    """kind-config.yaml with the scheduler configuration for ``build`` mounted by absolute path."""
    conf = yaml.safe_load(KIND_CONFIG.read_text())
    for node in conf["nodes"]:
        for mount in node.get("extraMounts", []):
            if mount["containerPath"] == MOUNTED_CONFIG:
                mount["hostPath"] = str(SCHEDULER_CONFIG[build].resolve())
    out = workdir / "kind-config.yaml"
    out.write_text(yaml.safe_dump(conf, sort_keys=False))
    return out


def image_swap_commands(cluster_name: str, image: str) -> list[list[str]]:
    """Point the static kube-scheduler pod at the user's image (the kubelet restarts it)."""
    node = f"{cluster_name}-control-plane"
    return [["docker", "exec", node, "sed", "-i", "-E", rf"s#^(\s*-?\s*image:\s*).*kube-scheduler.*$#\1{image}#", MANIFEST],
            ["docker", "exec", node, "sed", "-i", "-E", r"s#^(\s*imagePullPolicy:).*$#\1 IfNotPresent#", MANIFEST]]


def wait_scheduler(kube: Kube, cluster_name: str, image: str | None, timeout: float = 180) -> None:
    pod_name = f"kube-scheduler-{cluster_name}-control-plane"

    def healthy():
        pod = kube.core.read_namespaced_pod(pod_name, "kube-system")
        c = pod.status.container_statuses or []
        if not c or not c[0].ready:
            raise NotYet("kube-scheduler not ready")
        if image and c[0].image.split("/")[-1] != image.split("/")[-1]:
            raise NotYet(f"kube-scheduler still runs {c[0].image}")

    wait_for(healthy, timeout, f"the kube-scheduler of kind cluster {cluster_name} (image {image or 'the node image'})")


def apply_rbac(kube: Kube) -> None:
    from kubernetes import utils

    utils.create_from_yaml(kube.api, str(RBAC))


@contextmanager
def cluster_for(config, build: str):
    """A kind cluster for ``build``, yielding a Kube; deleted at the end unless --keep-cluster."""
    kind_path = preflight(config.getoption("--kind-binary"))
    image = config.getoption("--scheduler-image")
    if build == "plugins" and not image:
        raise KitError("--cluster kind with --scheduler plugins needs --scheduler-image: the scheduler-plugins "
                       "kube-scheduler image to test (built and tagged on this Docker host)")
    from pytest_kind import KindCluster

    workdir = Path(tempfile.mkdtemp(prefix="priority-conformance-kind-"))
    name = f"prio-{build}"
    cluster = KindCluster(name, kubeconfig=workdir / "kubeconfig", kind_path=kind_path)
    created = False
    try:
        cluster.create(render_config(build, workdir))
        created = True
        kube = Kube(workdir / "kubeconfig")
        apply_rbac(kube)
        if image:
            try:
                cluster.load_docker_image(image)
            except subprocess.CalledProcessError:
                raise KitError(f"kind could not load image {image}: is it built and tagged on this Docker host?") from None
            for cmd in image_swap_commands(name, image):
                subprocess.run(cmd, check=True)
        wait_scheduler(kube, name, image)
        yield kube
        kube.close()
    finally:
        keep = created and config.getoption("--keep-cluster")
        if created and not keep:
            cluster.delete()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
            # pytest-kind-ng keeps a scratch directory under the working directory.
            shutil.rmtree(cluster.path, ignore_errors=True)
            try:
                cluster.path.parent.rmdir()
            except OSError:
                pass
