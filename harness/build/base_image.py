"""The base of the kind node image: a Debian rootfs with kind's base files, built offline.

``kind build node-image`` starts from kind's base image, which comes from a registry; the kit
assembles the same layout instead (docs/research/kind-node-image.md): a Debian rootfs by
debootstrap with kind's base packages, kind's own base files (entrypoint, units, containerd
config) from the kind module the kit builds, and the settings of ``data/kind-node-base.yaml``,
imported into Docker as ``prioritykit/kind-base``. The node image (``node_image``) is built on
it, and the campaign's runner image (``runner_image``) makes its rootfs the same way, so the
steps every offline image build shares live here too: running a step, debootstrap, finding
an image, hashing what decides an image's bytes, and where a build does its work.

The base is tagged by the hash of its recipe, kind's base files and the code below that
assembles it, so a second run finds it and builds nothing.
"""

from __future__ import annotations

import glob
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

from harness import DATA
from harness.build import pins, toolchain
from harness.errors import KitError
from harness.host import console

BASE_RECIPE = DATA / "kind-node-base.yaml"
BASE_REPO = "prioritykit/kind-base"
KEY_LABEL = "io.prioritykit.key"
ENTRYPOINT = '["/usr/local/bin/entrypoint", "/sbin/init"]'


def run(cmd: list[str], what: str, **kw) -> subprocess.CompletedProcess:
    """A step of an image build: one KitError naming ``what`` and stderr's tail if it fails."""
    try:
        out = subprocess.run(cmd, capture_output=True, **kw)
    except FileNotFoundError:
        raise KitError(f"{what}: `{cmd[0]}` is not installed") from None
    if out.returncode != 0:
        err = out.stderr.decode(errors="replace") if isinstance(out.stderr, bytes) else (out.stderr or "")
        raise KitError(f"{what} failed (exit {out.returncode}): `{' '.join(cmd[:4])} ...`\n"
                       + "\n".join(err.strip().splitlines()[-8:]))
    return out


def require_debootstrap(image: str, command: str) -> None:
    """Building ``image`` from a Debian rootfs needs root and debootstrap: say so before anything."""
    if os.geteuid() != 0:
        raise KitError(f"building {image} needs root (debootstrap, chroot): run `sudo ./kit {command}` once")
    if shutil.which("debootstrap") is None:
        raise KitError(f"building {image} needs debootstrap: `apt-get install debootstrap` "
                       "(.ci/docker-host installs it)")


def debootstrap(root: Path, recipe: dict, what: str) -> str:
    """A Debian rootfs at ``root`` as ``recipe`` says (suite, variant, packages); the mirror used."""
    mirror = debian_mirror()
    console.log(f"{what}: debootstrap {recipe['suite']} from {mirror}")
    run(["debootstrap", f"--variant={recipe['variant']}", "--include=" + ",".join(recipe["packages"]),
         recipe["suite"], str(root), mirror], f"debootstrap of {what}")
    return mirror


def image_exists(ref: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", ref], capture_output=True).returncode == 0


def digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:12]


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def kind_module_dir() -> Path:
    """The kind module's source, as the build of the kind binary downloaded it."""
    toolchain.ensure_module("kind")
    version = pins.module_versions("kind")["sigs.k8s.io/kind"]
    path = toolchain.go_mod_cache() / f"sigs.k8s.io/kind@{version}"
    if not (path / "images/base/files").is_dir():
        raise KitError(f"kind's base files are missing from the Go module cache: {path}/images/base/files")
    return path


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def scratch() -> Path:
    # Beside the kit's other build work, not in /tmp: a rootfs is a few hundred MB.
    d = toolchain.cache_root() / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return d


# --- the base ---------------------------------------------------------------------


def debian_mirror() -> str:
    """The Debian mirror this machine's apt uses (the only package source it reaches)."""
    if m := os.environ.get("PRIORITYKIT_DEBIAN_MIRROR"):
        return m
    for f in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")) + ["/etc/apt/sources.list"]:
        try:
            text = Path(f).read_text()
        except OSError:
            continue
        if m := re.search(r"^URIs:\s*(\S+/debian)/?\s*$", text, re.M):
            return m.group(1)
        if m := re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)/?\s", text, re.M):
            return m.group(1)
    raise KitError("no Debian mirror found in /etc/apt/sources.list*: set PRIORITYKIT_DEBIAN_MIRROR to one")


def base_tag(recipe_text: str, kind_dir: Path) -> str:
    # The code that assembles the base is part of its content; the rest of this module is not.
    code = inspect.getsource(ensure_base) + inspect.getsource(_assemble_base)
    return f"{BASE_REPO}:{digest(recipe_text, _tree_digest(kind_dir / 'images/base/files'), code)}"


def ensure_base(kind_dir: Path) -> str:
    recipe_text = BASE_RECIPE.read_text()
    tag = base_tag(recipe_text, kind_dir)
    if image_exists(tag):
        return tag
    require_debootstrap("the kind node image's base", "kind-image")
    recipe = yaml.safe_load(recipe_text)
    work = Path(tempfile.mkdtemp(prefix="priority-conformance-kind-base-", dir=scratch()))
    started = time.monotonic()
    try:
        root = work / "rootfs"
        debootstrap(root, recipe, "the kind node base (about a minute)")
        _assemble_base(root, kind_dir / "images/base/files", recipe)
        tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        # kind's image also sets STOPSIGNAL, which `docker import` cannot; kind removes its
        # nodes with `docker rm -f`, so no signal is ever asked of systemd.
        run(["docker", "import", "--change", "ENV container=docker",
             "--change", f"ENTRYPOINT {ENTRYPOINT}", "--change", f"LABEL {KEY_LABEL}={tag.split(':')[1]}",
             "-", tag], "docker import of the kind node base", stdin=tar.stdout)
        tar.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    console.log(f"built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def _assemble_base(root: Path, kind_files: Path, recipe: dict) -> None:
    """What kind's base Dockerfile does after installing packages, on a rootfs."""
    for src in sorted(kind_files.rglob("*")):
        dst = root / src.relative_to(kind_files)
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.is_symlink() or dst.exists():
            dst.unlink()  # Debian's conffile (containerd's config.toml) gives way to kind's
        shutil.copyfile(src, dst)
        executable = src.parts[-2] == "bin" or "/bin/" in str(src.relative_to(kind_files))
        dst.chmod(0o755 if executable else 0o644)
    config = root / "etc/containerd/config.toml"
    text = config.read_text()
    for old, new in recipe.get("containerd_settings", {}).items():
        if old not in text:
            raise KitError(f"kind's containerd config no longer says {old!r}: update {BASE_RECIPE.name}")
        text = text.replace(old, new)
    config.write_text(text)
    for link, target in recipe["links"].items():
        p = root / link
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.exists():
            p.unlink()
        p.symlink_to(target)
    plugins_to = root / recipe["cni_plugins_to"]
    plugins_to.mkdir(parents=True, exist_ok=True)
    for plugin in sorted((root / recipe["cni_plugins_from"]).iterdir()):
        (plugins_to / plugin.name).symlink_to("/" + str(plugin.relative_to(root)))
    for pattern in recipe["remove_units"]:
        for p in glob.glob(str(root / pattern)):
            Path(p).unlink()
    with open(root / "etc/systemd/journald.conf", "a") as f:
        f.write("ReadKMsg=no\n")
    run(["chroot", str(root), "systemctl", "enable", *recipe["enable_units"]], "systemctl enable in the node base")
    run(["chroot", str(root), "systemctl", "mask", *recipe["mask_units"]], "systemctl mask in the node base")
    (root / "etc/kubernetes/manifests").mkdir(parents=True, exist_ok=True)
    # containerd's base OCI spec, with kind's hook and without rlimits (raising a hard limit
    # needs CAP_SYS_RESOURCE, and kind's containers inherit them anyway).
    spec = json.loads(run(["chroot", str(root), "ctr", "oci", "spec"], "ctr oci spec in the node base").stdout)
    spec.setdefault("hooks", {}).setdefault("createContainer", []).append({"path": "/kind/bin/mount-product-files.sh"})
    spec["process"].pop("rlimits", None)
    (root / "etc/containerd/cri-base.json").write_text(json.dumps(spec, indent=2) + "\n")
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (root / leftover).glob("*"):
            if p.is_file():
                p.unlink()
