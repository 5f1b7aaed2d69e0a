"""The campaign runner image: the kit, its Python dependencies and one release's binaries, offline.

Each pod of a campaign's Indexed Job (harness/campaign) runs ``./kit conformance`` on its own
local cluster, so it needs the kit, its Python dependencies and the control plane's binaries,
and no registry is reachable to pull any of them from. Like the kind node image (``node_image``, on ``base_image``),
this image is assembled from what the build host has:

- a Debian rootfs by debootstrap with Debian's python3 (``data/runner-image.yaml``), checked to
  be the Python and glibc the wheels were chosen for;
- the kit's Python dependencies (pyproject's ``dependencies`` and its build requirement) as
  wheels pip downloads on the host from PyPI, installed with no index into ``/opt/kit/.venv``
  inside the rootfs; the kit itself is installed editable there, as ``./kit`` installs it;
- the kit's source: the files git tracks, as the working tree has them;
- every binary a local cluster of the release runs (``toolchain.ensure_all``: both scheduler
  builds, etcd, kwok), at the same place under the image's PRIORITYKIT_CACHE as under the
  host's, with PRIORITYKIT_GO_VERSION naming the Go that built them: the kit inside finds them
  under the same cache keys and builds nothing (there is no Go in the image).

It runs as an unprivileged user (uid 1000), which owns only the cache folder (logs, ports,
locks) and its home. The image is tagged by the hash of everything above, so a second build
finds it. Before it gets that tag it is checked in a container with no network: ``./kit build``
must find every binary and the suite must collect. The rootfs, the wheels and the check's
container go whether the build succeeds or not.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import yaml

from harness import DATA, REPO
from harness.build import pins, toolchain
from harness.build.base_image import debootstrap, file_digest, image_exists, require_debootstrap, run, scratch
from harness.errors import KitError
from harness.host import console
from harness.host.cache import cache_root

RECIPE = DATA / "runner-image.yaml"
REPOSITORY = "prioritykit/runner"
KIT_DIR = "/opt/kit"
VENV = f"{KIT_DIR}/.venv"  # where ./kit looks for its venv
CACHE_DIR = "/var/cache/priority-conformance"
UID = 1000  # the user the pods run as (harness/campaign/job.py): a fixed number a pod spec can name
USER = "kit"
KEY_LABEL = "io.prioritykit.key"
WHEELS_IN_ROOT = "tmp/wheels"


def recipe() -> dict:
    return yaml.safe_load(RECIPE.read_text())


def sources(repo: Path = REPO) -> list[str]:
    """The kit's files as git tracks them, relative to the checkout: no venv, cache or artifacts."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True)
    except FileNotFoundError:
        raise KitError("the runner image takes the kit's files from `git ls-files`: git is not installed") from None
    if out.returncode != 0:
        raise KitError(f"the runner image takes the kit's files from `git ls-files`, and {repo} is not a git "
                       f"checkout: {out.stderr.decode(errors='replace').strip()}")
    # A tracked file deleted in the working tree is not the kit's any more.
    return [f for f in out.stdout.decode().split("\0") if f and (repo / f).is_file()]


def requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """What the image's venv installs: the kit's dependencies, and what installing the kit itself
    needs (its build backend), since the image installs it with no index. No test extras."""
    data = tomllib.loads(pyproject.read_text())
    return [*data["project"]["dependencies"], *data["build-system"]["requires"]]


def platforms(glibc: str, machine: str | None = None) -> list[str]:
    """pip's --platform values for wheels that run on ``glibc``: every manylinux tag up to it.

    pip takes a manylinux_2_X tag literally (only the legacy manylinux2014/2010 names are
    expanded), so each is named."""
    machine = machine or platform.machine()
    major, minor = (int(x) for x in glibc.split("."))
    if major != 2:
        raise KitError(f"{RECIPE.name}: glibc {glibc}: expected 2.X")
    return ([f"manylinux_2_{m}_{machine}" for m in range(minor, 4, -1)]
            + [f"manylinux{legacy}_{machine}" for legacy in ("2014", "2010", "1")])


def download_wheels(dest: Path, python: str, glibc: str, reqs: list[str]) -> list[Path]:
    """Wheels only (an sdist would need building inside the image), for the image's Python and glibc."""
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
           "--only-binary=:all:", "--implementation", "cp", "--python-version", python,
           "--abi", f"cp{python.replace('.', '')}", "--abi", "abi3", "--abi", "none", "--dest", str(dest)]
    for p in platforms(glibc):
        cmd += ["--platform", p]
    run(cmd + reqs, "pip download of the kit's dependencies (PyPI)", text=True)
    return sorted(dest.glob("*.whl"))


def binaries(release: str) -> dict[str, Path]:
    """Each binary of the release's local cluster, by its path under the cache (as in the image)."""
    root = cache_root().resolve()
    out = {}
    for path in toolchain.ensure_all(release=release).values():
        path = path.resolve()
        if root not in path.parents:
            raise KitError(f"{path} is not under the kit's cache {root}: the image keeps the cache's layout")
        out[str(path.relative_to(root))] = path
    return out


def tag_for(release: str, recipe_text: str, go: str, files: list[str], bins: dict[str, Path],
            wheels: list[Path], repo: Path = REPO) -> str:
    """``prioritykit/runner:<kubernetes version>-<hash>`` of everything that decides the image's bytes
    (but Debian's package versions, which the mirror decides, as for the kind node base)."""
    h = hashlib.sha256()

    def part(*items: str | bytes) -> None:
        for item in items:
            h.update(item.encode() if isinstance(item, str) else item)
            h.update(b"\0")

    part(Path(__file__).read_bytes(), recipe_text, go)
    for f in sorted(files):
        part(f, (repo / f).read_bytes(), str(os.access(repo / f, os.X_OK)))
    for rel, path in sorted(bins.items()):
        part(rel, file_digest(path))
    for w in wheels:
        part(w.name, file_digest(w))
    return f"{REPOSITORY}:{pins.versions(release)['kubernetes']}-{h.hexdigest()[:12]}"


def preflight() -> None:
    if shutil.which("docker") is None:
        raise KitError("the runner image is built with Docker: no `docker` command on PATH")
    info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
    if info.returncode != 0 or not info.stdout.strip():
        raise KitError("the runner image needs a running Docker engine: `docker info` failed: "
                       + (info.stderr.strip().splitlines() or ["no answer"])[-1])


def ensure(release: str | None = None) -> str:
    """The runner image of ``release`` (default: the kit's), built if absent; its tag."""
    preflight()
    release = release or pins.default_release()
    bins = binaries(release)
    go = toolchain.go_version()
    recipe_text = RECIPE.read_text()
    conf = yaml.safe_load(recipe_text)
    files = sources()
    work = Path(tempfile.mkdtemp(prefix="priority-conformance-runner-", dir=scratch()))
    try:
        wheels = download_wheels(work / "wheels", conf["python"], conf["glibc"], requirements())
        tag = tag_for(release, recipe_text, go, files, bins, wheels)
        if image_exists(tag):
            return tag
        require_debootstrap("the runner image", "runner-image")
        started = time.monotonic()
        console.log(f"building the runner image {tag} (debootstrap, then the kit's venv: a few minutes)")
        root = work / "rootfs"
        _debootstrap(root, conf)
        _assemble(root, conf, files, bins, wheels)
        _import_and_check(root, tag, release, go)
        size = int(run(["docker", "image", "inspect", "-f", "{{.Size}}", tag], "docker image inspect", text=True).stdout)
        console.log(f"built {tag} in {time.monotonic() - started:.0f} s ({size / 2**20:.0f} MiB)")
        return tag
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _debootstrap(root: Path, conf: dict) -> None:
    debootstrap(root, conf, "the runner image")
    # The wheels were chosen for this Python and glibc: if the suite gives others, say so now
    # rather than fail on an import in a pod.
    got = _chroot(root, ["python3", "-c", "import platform, sys; "
                                          "print('%d.%d' % sys.version_info[:2], platform.libc_ver()[1])"]).split()
    if got != [conf["python"], conf["glibc"]]:
        raise KitError(f"{RECIPE.name} says Python {conf['python']} and glibc {conf['glibc']}, but Debian "
                       f"{conf['suite']} has Python {got[0]} and glibc {got[1]}: correct the recipe")


def _chroot(root: Path, cmd: list[str], what: str | None = None) -> str:
    return run(["chroot", str(root), *cmd], what or f"`{' '.join(cmd)[:60]}` in the runner image's rootfs",
               text=True).stdout


def _assemble(root: Path, conf: dict, files: list[str], bins: dict[str, Path], wheels: list[Path]) -> None:
    kit = root / KIT_DIR.lstrip("/")
    for f in files:
        dest = kit / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest)
    _chroot(root, ["useradd", "--uid", str(UID), "--user-group", "--create-home", "--shell", "/bin/bash", USER])
    # The kit's venv, from the downloaded wheels only: what `./kit` does on a fresh machine, offline.
    wheel_dir = root / WHEELS_IN_ROOT
    wheel_dir.mkdir(parents=True)
    for w in wheels:
        shutil.copy2(w, wheel_dir / w.name)
    _chroot(root, ["python3", "-m", "venv", VENV])
    _chroot(root, [f"{VENV}/bin/pip", "install", "--quiet", "--disable-pip-version-check", "--no-cache-dir",
                   "--no-index", "--find-links", f"/{WHEELS_IN_ROOT}", "--editable", KIT_DIR],
            "installing the kit into the runner image's venv (no index: the downloaded wheels only)")
    shutil.rmtree(wheel_dir)
    # The pods' user cannot write beside the source: compile it now, not on every start.
    _chroot(root, [f"{VENV}/bin/python", "-m", "compileall", "-q", f"{KIT_DIR}/harness", f"{KIT_DIR}/reference",
                   f"{KIT_DIR}/conformance"])
    cache = root / CACHE_DIR.lstrip("/")
    for rel, src in bins.items():
        dest = cache / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        dest.chmod(0o755)
    # The kit writes its logs and locks beside the binaries: the cache folder is
    # the pods' user's, the binaries stay root's.
    os.chown(cache, UID, UID)
    # The one folder beside the source the kit writes by default (a run given no --artifacts,
    # such as the one the fault tests start): the user's, so such a run does not fail on it.
    (kit / "artifacts").mkdir()
    os.chown(kit / "artifacts", UID, UID)
    for leftover in conf["strip"]:
        for p in (root / leftover).glob("*"):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    # Last: `./kit` reinstalls when pyproject.toml is newer than this stamp.
    (root / VENV.lstrip("/") / ".installed").touch()


def _changes(tag: str, go: str) -> list[str]:
    env = {"PATH": f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "PRIORITYKIT_CACHE": CACHE_DIR, toolchain.BUILT_BY_ENV: go, "HOME": f"/home/{USER}", "LANG": "C.UTF-8"}
    out = [f'ENV {k}="{v}"' for k, v in env.items()]
    out += [f"WORKDIR {KIT_DIR}", f"USER {UID}:{UID}",
            # tini as PID 1: kwokctl's components are re-parented to it when kwokctl exits, and
            # with -g a SIGTERM (the pod deleted) reaches the kit, which then stops its clusters.
            'ENTRYPOINT ["/usr/bin/tini", "-g", "--"]', 'CMD ["./kit", "--help"]',
            f"LABEL {KEY_LABEL}={tag.split(':')[1]}"]
    return [arg for change in out for arg in ("--change", change)]


def _import_and_check(root: Path, tag: str, release: str, go: str) -> None:
    """Import under a temporary name, check in a container with no network, then tag."""
    unchecked = f"{REPOSITORY}:unchecked-{os.getpid()}"
    container = f"prioritykit-runner-check-{os.getpid()}"
    try:
        tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        run(["docker", "import", *_changes(tag, go), "-", unchecked], "docker import of the runner image",
            stdin=tar.stdout)
        if tar.wait() != 0:
            raise KitError(f"tar of the runner image's rootfs {root} failed (exit {tar.returncode})")
        # The kit inside must find every binary without Go, and the suite must import and collect;
        # their output goes to stderr, which a failure shows.
        check = (f"./kit build --k8s-version {release} 1>&2 && "
                 "./kit conformance --collect-only -q -p no:cacheprovider --splits 3 --group 1 1>&2")
        run(["docker", "run", "--rm", "--name", container, "--network", "none", unchecked, "bash", "-c", check],
            "the runner image's check (./kit build and a collection, offline, as uid 1000)", text=True)
        run(["docker", "tag", unchecked, tag], "docker tag of the runner image")
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True)
        subprocess.run(["docker", "rmi", unchecked], capture_output=True)  # the name only, once tagged
