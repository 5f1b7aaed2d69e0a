"""The kind node image, built offline from the kit's own pinned builds.

``kind build node-image`` always fetches etcd, CoreDNS, pause and kindnetd from a registry,
so it cannot run where no registry is reachable (these machines, an air-gapped CI). This
module assembles the same layout instead (docs/research/kind-node-image.md): the base
(``base_image``: a Debian rootfs with kind's base files) plus kubelet, kubeadm and kubectl of
the release, ``/kind/version``, and containerd's ``k8s.io`` namespace preloaded with every image
a pod of the cluster uses: the control plane and etcd as kubeadm names them (asked of kubeadm
itself), pause for the sandboxes and the scenarios' pods, and the scheduler-plugins
kube-scheduler.

It is tagged by the hash of everything that decides its bytes, so a second run finds it and
builds nothing. What a build makes only to assemble the node (its container, the component
images on the host) is removed whether it succeeds or not.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.build import pins, toolchain
from harness.build.base_image import (ENTRYPOINT, KEY_LABEL, digest, ensure_base, file_digest, image_exists,
                                      kind_module_dir, run, scratch)
from harness.errors import KitError
from harness.host import console
from harness.host.wait import NotYet, wait_for

# On a real kubelet a scenario pod's container ignores SIGTERM, so a deleted pod stays
# Terminating for its whole grace period, as the kwok stages play it (data/kwok-stages.yaml).
HOLDOUT_IMAGE = "prioritykit.local/holdout:1"
HOLDOUT_COMMAND = ["/busybox", "sh", "-c", "trap '' TERM; while :; do /busybox sleep 1; done"]
NODE_REPO = "prioritykit/kind-node"
PLUGINS_IMAGE_REPO = "prioritykit.local/kube-scheduler-plugins"
# Control-plane images kubeadm lists that a kind cluster of the kit never runs: kube-proxy
# (kubeProxyMode none) and CoreDNS (its addon phase is skipped: no scenario resolves names).
NOT_RUN = ("kube-proxy", "coredns")


@dataclass(frozen=True)
class Component:
    """An image in the node's containerd: a reference, and the one file it holds."""

    ref: str
    binary: Path
    entrypoint: str | None = None  # None: kubeadm's manifests name the command


def kubeadm_images(kubeadm: Path, version: str) -> list[str]:
    out = run([str(kubeadm), "config", "images", "list", f"--kubernetes-version={version}"],
              "kubeadm config images list", text=True)
    return out.stdout.split()


def _sandbox_image(kind_dir: Path) -> str:
    text = (kind_dir / "images/base/files/etc/containerd/config.toml").read_text()
    return re.search(r'sandbox_image\s*=\s*"([^"]+)"', text).group(1)


def build_pause(out_dir: Path, release: str | None) -> Path:
    """pause from the Kubernetes module's own source, static, as its Makefile builds it."""
    version = pins.versions(release)["kubernetes"]
    src = toolchain.go_mod_cache() / f"k8s.io/kubernetes@{version}/build/pause/linux/pause.c"
    if not src.is_file():
        raise KitError(f"pause's source is missing from the Go module cache: {src}")
    if shutil.which("gcc") is None:
        raise KitError("building the kind node image needs gcc (pause is a static C program): `apt-get install gcc libc6-dev`")
    binary = out_dir / "pause"
    run(["gcc", "-Os", "-Wall", "-Werror", "-static", "-DVERSION=prioritykit", "-o", str(binary), str(src)],
        "building pause with gcc -static")
    return binary


def components(release: str | None, kubeadm: Path, bins: dict[str, Path], pause: Path, kind_dir: Path) -> list[Component]:
    version = pins.versions(release)["kubernetes"]
    out: list[Component] = []
    for ref in kubeadm_images(kubeadm, version):
        name = ref.rsplit("/", 1)[-1].split(":")[0]
        if name in NOT_RUN:
            continue
        if name == "pause":
            out.append(Component(ref, pause, '["/pause"]'))
        elif name == "etcd":
            out.append(Component(ref, bins["etcd"]))
        else:
            out.append(Component(ref, bins.get(f"kubernetes/{name}") or bins[name]))
    sandbox = _sandbox_image(kind_dir)
    if sandbox not in {c.ref for c in out}:
        out.append(Component(sandbox, pause, '["/pause"]'))
    plugins = bins.get(toolchain.scheduler_key("scheduler-plugins"))
    if plugins is not None:
        out.append(Component(plugins_image(release), plugins))
    return out


def plugins_image(release: str | None = None) -> str:
    return f"{PLUGINS_IMAGE_REPO}:{pins.versions(release)['scheduler-plugins']}"


def import_binary_image(ref: str, binary: Path, entrypoint: str | None = None) -> None:
    """An image holding one static binary on PATH: what a distroless component image amounts to."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("usr", "usr/local", "usr/local/bin", "tmp"):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if d == "tmp" else 0o755
            tar.addfile(info)
        path = f"/{binary.name}" if entrypoint else f"usr/local/bin/{binary.name}"
        tar.add(str(binary), arcname=path.lstrip("/"), filter=lambda i: _root_owned(i, 0o755))
    changes = ["--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin"]
    if entrypoint:
        changes += ["--change", f"ENTRYPOINT {entrypoint}"]
    run(["docker", "import", *changes, "-", ref], f"docker import of {ref}", input=buf.getvalue())


def _root_owned(info: tarfile.TarInfo, mode: int) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode = mode
    return info


def node_tag(release: str | None, base: str, files: dict[str, Path], comps: list[Component]) -> str:
    version = pins.versions(release)["kubernetes"]
    parts: list[str] = [base, Path(__file__).read_bytes().hex()]
    for name, path in sorted(files.items()):
        parts += [name, file_digest(path)]
    for c in comps:
        parts += [c.ref, c.entrypoint or "", file_digest(c.binary)]
    return f"{NODE_REPO}:{version}-{digest(*parts)}"


@functools.cache
def ensure(release: str | None = None) -> str:
    """The node image of ``release`` (default: the kit's), built if absent; its tag. Once per
    process: finding it hashes every binary in it, and the session asks before each build's cluster."""
    if shutil.which("docker") is None:
        raise KitError("the kind node image is built with Docker: no `docker` command on PATH")
    bins = toolchain.ensure_all(release=release)
    node_bins = toolchain.ensure_node_binaries(release)
    kind_dir = kind_module_dir()
    base = ensure_base(kind_dir)
    files = {"/usr/bin/kubelet": node_bins["kubelet"], "/usr/bin/kubeadm": node_bins["kubeadm"],
             "/usr/bin/kubectl": bins["kubectl"]}
    with tempfile.TemporaryDirectory(prefix="priority-conformance-kind-node-", dir=scratch()) as tmp:
        pause = build_pause(Path(tmp), release)
        comps = components(release, node_bins["kubeadm"], bins, pause, kind_dir)
        tag = node_tag(release, base, files, comps)
        if image_exists(tag):
            return tag
        started = time.monotonic()
        console.log(f"building the kind node image {tag}")
        _build_node(tag, base, files, comps, pins.versions(release)["kubernetes"], Path(tmp))
    console.log(f"built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def _build_node(tag: str, base: str, files: dict[str, Path], comps: list[Component], version: str, tmp: Path) -> None:
    container = f"prioritykit-node-build-{os.getpid()}"
    refs = sorted({c.ref for c in comps})
    made: list[str] = []
    try:
        for c in comps:
            if c.ref not in made:
                import_binary_image(c.ref, c.binary, c.entrypoint)
                made.append(c.ref)
        # Not privileged: importing without unpacking needs no mounts (kind's builder does the same).
        run(["docker", "run", "-d", "--name", container, "--entrypoint=sleep", "--security-opt", "seccomp=unconfined",
             base, "infinity"], "starting the node image's build container")
        run(["docker", "cp", f"{container}:/bin/busybox", str(tmp / "busybox")], "copying busybox out of the node base")
        import_binary_image(HOLDOUT_IMAGE, tmp / "busybox", json.dumps(HOLDOUT_COMMAND))
        made.append(HOLDOUT_IMAGE)
        refs.append(HOLDOUT_IMAGE)
        archive = tmp / "images.tar"
        run(["docker", "save", "-o", str(archive), *refs], "docker save of the node's images")
        for dest, src in files.items():
            run(["docker", "cp", str(src), f"{container}:{dest}"], f"copying {dest} into the node image")
        _exec(container, ["sh", "-c", f"chmod 0755 {' '.join(files)} && chown root:root {' '.join(files)} "
                                      f"&& printf %s {version} > /kind/version"])
        _exec(container, ["sh", "-c", "nohup containerd >/tmp/containerd.log 2>&1 &"])
        _wait_containerd(container)
        with open(archive, "rb") as f:
            run(["docker", "exec", "-i", container, "ctr", "--namespace=k8s.io", "images", "import",
                 "--no-unpack", "--all-platforms", "--digests", "-"],
                "preloading the node's images into containerd", stdin=f)
        listed = _exec(container, ["ctr", "--namespace=k8s.io", "images", "list", "-q"]).stdout.split()
        missing = [r for r in refs if r not in listed and f"docker.io/library/{r}" not in listed]
        if missing:
            raise KitError(f"the node image's containerd lacks {missing} after the import")
        # Pinned: the kubelet's image GC never removes them (Debian's ctr cannot label on import).
        for ref in refs:
            _exec(container, ["ctr", "--namespace=k8s.io", "images", "label", ref, "io.cri-containerd.pinned=pinned"])
        # The container's init is `sleep`, which reaps nothing: a stopped containerd stays a zombie.
        _exec(container, ["sh", "-c", "pkill containerd; while ps -o stat= -C containerd | grep -qv Z; "
                                      "do sleep 0.2; done; rm -f /tmp/containerd.log"])
        run(["docker", "commit", "--change", f"ENTRYPOINT {ENTRYPOINT}", "--change", "CMD []",
             "--change", f"LABEL {KEY_LABEL}={tag.split(':')[1]}", container, tag], "docker commit of the node image")
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True)
        if made:
            subprocess.run(["docker", "rmi", *made], capture_output=True)


def _exec(container: str, cmd: list[str]) -> subprocess.CompletedProcess:
    return run(["docker", "exec", container, *cmd], f"`{' '.join(cmd)[:60]}` in the node image's build container",
               text=True)


def _wait_containerd(container: str, timeout: float = 30) -> None:
    def answers():
        if subprocess.run(["docker", "exec", container, "ctr", "version"], capture_output=True).returncode != 0:
            raise NotYet("no answer from ctr version")

    try:
        wait_for(answers, timeout, "containerd in the node image's build container", interval=0.3)
    except KitError as e:
        log = subprocess.run(["docker", "exec", container, "cat", "/tmp/containerd.log"], capture_output=True, text=True)
        raise KitError(f"{e}; its log:\n{log.stdout[-2000:]}") from None
