"""The kind path: the suite on a kind cluster, with real kubelets beside kwok nodes.

The cluster comes from ``kind-config.yaml`` through pytest-kind-ng (the maintained fork of
pytest-kind), with the kit's own kind binary (built from the pinned module) and, unless the
user names one, the kit's offline node image (``node_image``). On it:

- the kit's kwok controller, pointed at the kind API server, plays the kubelet of the nodes
  scenarios make (so the catalogue runs side by side, as on the local cluster);
- the three kind workers, with real kubelets and containerd, are lent to the real-kubelet
  scenarios one at a time (``RealNodes``);
- the control plane's static kube-scheduler is the node image's upstream build, or, for the
  plugins build, the scheduler-plugins image with its configuration, switched together.

Everything it makes (the cluster's containers, the ``kind`` network when it made it, the
images it made for the run, its directory and processes) goes at the end unless
--keep-cluster; a watchdog does the same when the kit is killed (``lifecycle``).
"""

from __future__ import annotations

from harness import DATA, FILES, targets

import json
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.host import console, lifecycle
from harness.build import toolchain
from harness.clusters import kubelet, pressure
from harness.clusters.config import STAGES, scheduler_config
from harness.errors import KitError
from harness.kube import KWOK_ANNOTATION, Kube
from harness.host.wait import NotYet, wait_for
from harness.targets import BUILDS

KIND_CONFIG = FILES / "kind-config.yaml"
RBAC = DATA / "kind-scheduler-rbac.yaml"
MANIFEST = "/etc/kubernetes/manifests/kube-scheduler.yaml"
CONFIG_DIR = "/etc/kubernetes/priority-conformance"  # on the control-plane node
NETWORK = "kind"
# The most nodes a real-kubelet scenario may have: kind-config.yaml's workers.
WORKERS = sum(1 for n in yaml.safe_load(KIND_CONFIG.read_text())["nodes"] if n["role"] == "worker")
USER_IMAGE_REPO = "prioritykit.local/kube-scheduler-user"
# Below this much free on its node filesystem, a worker's kubelet evicts (pressure.py).
NODEFS_THRESHOLD = pressure.threshold(yaml.safe_load(KIND_CONFIG.read_text()))


def config_path(build: str) -> str:
    return f"{CONFIG_DIR}/{build}.yaml"


def kind_scheduler_config(build: str) -> dict:
    """The build's profile (``config.scheduler_config``, one place for it) as a static pod runs it."""
    conf = scheduler_config(build)
    conf["clientConnection"] = {"kubeconfig": "/etc/kubernetes/scheduler.conf"}
    conf["leaderElection"] = {"leaderElect": True}
    return conf


def preflight(kind_path: str | None, docker: str = "docker") -> Path:
    """A clear error for the usual reasons kind cannot run; the kind binary's path otherwise."""
    if shutil.which(docker) is None:
        raise KitError("--cluster kind needs Docker: no `docker` command on PATH (on a machine like the "
                       "kit's own, .ci/docker-host sets one up)")
    info = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
    if info.returncode != 0 or not info.stdout.strip():
        raise KitError("--cluster kind needs a running Docker engine: `docker info` failed: "
                       + (info.stderr.strip().splitlines() or ["no answer"])[-1])
    if kind_path is None:
        return toolchain.ensure_module("kind")["kind"]
    if not Path(kind_path).is_file():
        raise KitError(f"--kind-binary: no such file: {kind_path}")
    return Path(kind_path)


def render_config(workdir: Path) -> Path:
    """kind-config.yaml with the directory of every build's scheduler configuration mounted."""
    configs = workdir / "scheduler-configs"
    configs.mkdir(exist_ok=True)
    for build in BUILDS:
        (configs / f"{build}.yaml").write_text(yaml.safe_dump(kind_scheduler_config(build), sort_keys=False))
    conf = yaml.safe_load(KIND_CONFIG.read_text())
    for node in conf["nodes"]:
        for mount in node.get("extraMounts", []):
            if mount["containerPath"] == CONFIG_DIR:
                mount["hostPath"] = str(configs)
    out = workdir / "kind-config.yaml"
    out.write_text(yaml.safe_dump(conf, sort_keys=False))
    return out


def scheduler_swap_commands(node: str, image: str, build: str) -> list[list[str]]:
    """Point the static kube-scheduler pod at ``image`` and ``build``'s configuration in one edit:
    the kubelet restarts it once, and never runs an image with a configuration it refuses."""
    return [["docker", "exec", node, "sed", "-i", "-E",
             "-e", rf"s#^(\s*-?\s*image:\s*).*kube-scheduler.*$#\1{image}#",
             "-e", r"s#^(\s*imagePullPolicy:).*$#\1 IfNotPresent#",
             "-e", rf"s#--config={CONFIG_DIR}/[a-z]+\.yaml#--config={config_path(build)}#",
             MANIFEST]]


def cni_conflist(pod_cidr: str) -> str:
    """A bridge network on one node, over the pod range the controller-manager gave it."""
    return json.dumps({
        "cniVersion": "0.4.0", "name": "prioritykit",
        "plugins": [{"type": "bridge", "bridge": "cni0", "isGateway": True,
                     "ipam": {"type": "host-local", "ranges": [[{"subnet": pod_cidr}]]}},
                    {"type": "portmap", "capabilities": {"portMappings": True}}],
    })


def install_cni(kube: Kube, nodes: list[str], timeout: float = 180) -> None:
    # 180 s: a worker's kubelet notices the CNI configuration within seconds on a quiet machine, and
    # took over 60 s here while another kind cluster was created beside it.
    def cidr(node: str) -> str:
        found = kube.core.read_node(node).spec.pod_cidr
        if not found:
            raise NotYet(f"node {node} has no podCIDR yet")
        return found

    for node in nodes:
        conf = cni_conflist(wait_for(lambda: cidr(node), timeout, f"the pod range of kind node {node}"))
        subprocess.run(["docker", "exec", "-i", node, "sh", "-c",
                        "mkdir -p /etc/cni/net.d && cat > /etc/cni/net.d/10-prioritykit.conflist"],
                       input=conf, text=True, check=True, capture_output=True)

    def ready():
        for n in kube.core.list_node().items:
            conds = {c.type: c.status for c in (n.status.conditions or [])}
            if conds.get("Ready") != "True":
                raise NotYet(f"node {n.metadata.name} not Ready")

    wait_for(ready, timeout, "the kind nodes to become Ready", interval=0.5)


def wait_scheduler(kube: Kube, node: str, image: str | None, timeout: float = 180) -> None:
    pod_name = f"kube-scheduler-{node}"

    def healthy():
        # The kubelet deletes and recreates the mirror pod when the static manifest changes.
        pod = kube.pod_or_none("kube-system", pod_name)
        if pod is None:
            raise NotYet("no kube-scheduler mirror pod yet")
        c = pod.status.container_statuses or []
        if not c or not c[0].ready:
            raise NotYet("kube-scheduler not ready")
        if image and c[0].image.split("/")[-1] != image.split("/")[-1]:
            raise NotYet(f"kube-scheduler still runs {c[0].image}")

    wait_for(healthy, timeout, f"the kube-scheduler on {node} (image {image or 'the node image'})")


def apply_rbac(kube: Kube) -> None:
    from kubernetes import utils

    utils.create_from_yaml(kube.api, str(RBAC))


def start_kwok(kubeconfig: Path, workdir: Path) -> subprocess.Popen:
    """The kit's kwok controller for the nodes scenarios make (annotated as kwok's), on kind's API."""
    kwok = toolchain.ensure_module("kwok")["kwok"]
    log = open(workdir / "kwok.log", "w")
    try:
        return subprocess.Popen(
            [str(kwok), f"--kubeconfig={kubeconfig}", "--manage-all-nodes=false",
             f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake", f"--config={STAGES}",
             "--node-lease-duration-seconds=40"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        log.close()


def make_scheduler_image(binary: Path) -> str:
    """An image of a user's kube-scheduler binary, to load into the nodes."""
    from harness.build.base_image import file_digest
    from harness.build.node_image import import_binary_image

    ref = f"{USER_IMAGE_REPO}:{file_digest(binary)[:12]}"
    import_binary_image(ref, binary)
    return ref


def _network_exists() -> bool:
    return subprocess.run(["docker", "network", "inspect", NETWORK], capture_output=True).returncode == 0


@dataclass
class KindCluster:
    """A kind cluster for ``build`` (the cluster adapter, ``harness.clusters.base``): its API, and
    the workers lent to real-kubelet scenarios.

    ``kind_path``: what ``preflight`` found. ``image``: the node image, on the Docker host
    (default: the kit's own build); ``scheduler_image`` or ``scheduler_binary``: the
    kube-scheduler under test instead of the build's. The suite passes its --kind-node-image,
    --scheduler-image and --scheduler-binary. ``kubelet_binary``: the workers' kubelet instead of
    the node image's (a kubelet mutant, harness/mutants), put in place before any scenario runs."""

    build: str
    kind_path: Path
    image: str | None = None
    scheduler_image: str | None = None
    scheduler_binary: Path | None = None
    kubelet_binary: Path | None = None
    kube: Kube | None = field(default=None, init=False)
    workers: list[str] = field(default_factory=list, init=False)
    timings: dict[str, float] = field(default_factory=dict, init=False)
    workdir: Path | None = field(default=None, init=False)
    # Kept (--keep-cluster): its later down() must leave the cluster to the user.
    handed_over: bool = field(default=False, init=False, repr=False)

    @property
    def name(self) -> str:
        return f"prioritykit-{self.build}-{os.getpid()}"

    @property
    def kubeconfig(self) -> Path | None:
        return self.workdir / "kubeconfig" if self.kube is not None and self.workdir is not None else None

    def log_path(self, component: str) -> Path | None:
        # The control plane's components log inside its node container; the kwok controller is ours.
        return self.workdir / "kwok.log" if component == "kwok" and self.workdir is not None else None

    def up(self) -> Path:
        from pytest_kind import KindCluster as PytestKindCluster

        from harness.build import node_image

        own_image = self.image is None  # a named one was checked before the session started (the plugin's options)
        if own_image:
            self.image = node_image.ensure()
        name, image, scheduler_image = self.name, self.image, self.scheduler_image
        node = f"{name}-control-plane"
        workdir = Path(tempfile.mkdtemp(prefix=lifecycle.WORKDIR_PREFIX + "kind-"))
        lifecycle.write_owner(workdir)
        made_images: list[str] = []
        network_before = _network_exists()
        # What the watchdog does if the kit dies before the end; the same as the normal teardown.
        lifecycle.add_teardown(workdir, [str(self.kind_path), "delete", "cluster", "--name", name,
                                         "--kubeconfig", str(workdir / "kubeconfig")])
        if not network_before:
            lifecycle.add_teardown(workdir, ["docker", "network", "rm", NETWORK])
        self._watchdog = lifecycle.start_watchdog(workdir)
        self._stack = ExitStack()
        self.workdir = workdir  # from here on, down() has something to end
        cluster = PytestKindCluster(name, kubeconfig=workdir / "kubeconfig", image=image, kind_path=self.kind_path)
        # pytest-kind-ng makes a scratch directory under the working directory: the reaper's too.
        scratch = cluster.path.resolve()
        lifecycle.add_teardown(workdir, ["rm", "-rf", str(scratch)])
        lifecycle.add_teardown(workdir, ["rmdir", str(scratch.parent)])
        try:
            started = time.monotonic()
            load = None  # an image the nodes lack
            if self.scheduler_binary is not None:
                scheduler_image = load = make_scheduler_image(Path(self.scheduler_binary))
                made_images.append(load)
            elif scheduler_image:
                load = scheduler_image
            elif self.build == "plugins":
                scheduler_image = node_image.plugins_image()
                if not own_image:  # a user's node image: the kit's plugins scheduler is not in it
                    bins = toolchain.ensure_all((targets.SCHEDULER_MODULES[self.build],))
                    node_image.import_binary_image(scheduler_image, targets.scheduler_binary(self.build, bins))
                    load = scheduler_image
                    made_images.append(load)
            for ref in made_images:
                lifecycle.add_teardown(workdir, ["docker", "rmi", ref])
            try:
                cluster.create(render_config(workdir))
            except subprocess.CalledProcessError:
                raise KitError(f"kind could not create cluster {name} from node image {image} "
                               "(kind's output is above)") from None
            kube = self.kube = Kube(workdir / "kubeconfig")
            self._stack.callback(kube.close)
            self.timings["create"] = time.monotonic() - started
            nodes = [n.metadata.name for n in kube.core.list_node().items]
            self.workers = sorted(n for n in nodes if n != node)
            for worker in self.workers:  # before any pod runs there
                pressure.give_own_filesystem(worker)
                if self.kubelet_binary is not None:
                    kubelet.replace(kube, worker, Path(self.kubelet_binary))
            install_cni(kube, nodes)
            apply_rbac(kube)
            if load:
                try:
                    cluster.load_docker_image(load)
                except subprocess.CalledProcessError:
                    raise KitError(f"kind could not load image {load}: is it built and tagged on this Docker host?") from None
            if scheduler_image:
                for cmd in scheduler_swap_commands(node, scheduler_image, self.build):
                    subprocess.run(cmd, check=True, capture_output=True)
            wait_scheduler(kube, node, scheduler_image)
            kwok = start_kwok(workdir / "kubeconfig", workdir)
            self._stack.callback(lifecycle.stop_processes, [kwok.pid])
            self.timings["ready"] = self.timings["up"] = time.monotonic() - started
            console.log(f"kind cluster {name} ready in {self.timings['ready']:.0f} s "
                        f"(created in {self.timings['create']:.0f} s) from {image}")
        except BaseException:
            # Nothing may stay behind: kind delete, the network if it was ours, the images made.
            self.down()
            raise
        return workdir / "kubeconfig"

    def keep(self) -> str:
        assert self.workdir is not None
        lifecycle.keep(self.workdir)
        self.handed_over = True
        return (f"kept kind cluster {self.name}: KUBECONFIG={self.workdir / 'kubeconfig'}; "
                f"remove it with: {self.kind_path} delete cluster --name {self.name}")

    def down(self) -> None:
        """Remove the cluster, the network if it was ours, the images made and pytest-kind-ng's
        scratch; after keep(), only the kwok controller and the client go. Safe to call twice."""
        if self.workdir is None:
            return
        self._stack.close()
        if not self.handed_over:
            lifecycle.reap(self.workdir)
        try:
            self._watchdog.wait(timeout=0 if self.handed_over else 10)  # it stands down once the directory is gone
        except subprocess.TimeoutExpired:
            pass
        self.workdir, self.kube = None, None
