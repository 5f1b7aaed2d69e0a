"""Build the control-plane binaries from pinned Go modules, once.

Each component is built from a small wrapper module under ``harness/gomod``:
one directory per Kubernetes release (``1.35/kubernetes``, ``1.35/etcd``, and
``1.35/scheduler-plugins`` where a scheduler-plugins release builds on it),
plus kwok, which serves every release. Those wrapper go.mod files are the
single source of truth for versions and releases: this module reads them, so
adding a release is adding its directory, and a bump is a go.mod edit.

A "module" below is a wrapper's path under ``harness/gomod`` ("1.35/kubernetes",
"kwok").

Built binaries live in a cache outside the repository, under a key derived
from everything that decides their bytes (wrapper module files, Go version,
linker flags). A warm run finds them and builds nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.build import pins
from harness.errors import KitError
from harness.host.cache import cache_root
from harness.host.console import log

@dataclass(frozen=True)
class Module:
    """A component: the commands its wrapper modules build."""

    name: str
    packages: tuple[str, ...]  # Go import paths of main packages
    prefix: str = ""  # Karmada's commands are directories named "scheduler", "webhook", ...

    def binary_names(self) -> tuple[str, ...]:
        return tuple(_binary_name(p, self.prefix) for p in self.packages)


def component(module: str) -> Module:
    return MODULES[module.rsplit("/", 1)[-1]]


def _binary_name(package: str, prefix: str = "") -> str:
    last = package.rstrip("/").rsplit("/", 1)[-1]
    if prefix:
        return prefix + last
    # scheduler-plugins names its command directory "scheduler"; every tool
    # downstream (kwokctl, humans reading ps) expects "kube-scheduler".
    return {"scheduler": "kube-scheduler", ".": "etcd"}.get(last, last)


MODULES: dict[str, Module] = {
    m.name: m
    for m in (
        Module(
            "kubernetes",
            (
                "k8s.io/kubernetes/cmd/kube-apiserver",
                "k8s.io/kubernetes/cmd/kube-controller-manager",
                "k8s.io/kubernetes/cmd/kube-scheduler",
                "k8s.io/kubernetes/cmd/kubectl",
            ),
        ),
        Module("scheduler-plugins", ("sigs.k8s.io/scheduler-plugins/cmd/scheduler",)),
        Module("etcd", (".",)),
        Module("kwok", ("sigs.k8s.io/kwok/cmd/kwok", "sigs.k8s.io/kwok/cmd/kwokctl")),
        Module(
            "karmada",
            tuple(f"github.com/karmada-io/karmada/cmd/{c}"
                  for c in ("aggregated-apiserver", "webhook", "controller-manager", "scheduler")),
            prefix="karmada-",
        ),
        Module("kind", ("sigs.k8s.io/kind",)),
        # Only for a scenario that cuts the scheduler's connection (harness.clusters.link).
        Module("toxiproxy", ("github.com/Shopify/toxiproxy/v2/cmd/server",), prefix="toxiproxy-"),
    )
}

# What a kind node runs besides the control plane (kubeadm sets the node up, the kubelet
# runs its pods): built from the same wrapper as the control plane, only for the kind path.
NODE_PACKAGES = ("k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kubeadm")


def ldflags(module: str) -> str:
    """Linker flags that stamp real versions into the binaries.

    Without them Kubernetes components report v0.0.0, which kwokctl (it reads
    `--version` to choose flags) and any human reading a report would take as
    wrong.
    """
    name = component(module).name
    v = pins.versions(module.split("/", 1)[0] if "/" in module else None)
    if name in ("kubernetes", "scheduler-plugins"):
        k8s = v["kubernetes"] if name == "kubernetes" else v["scheduler-plugins-kubernetes"]
        git_version = k8s
        if name == "scheduler-plugins":
            # Semver build metadata: still parses as the Kubernetes release it
            # is built on, and says which scheduler-plugins release it is.
            git_version = f"{k8s}+scheduler-plugins.{v['scheduler-plugins']}"
        major, minor = k8s.lstrip("v").split(".")[:2]
        flags = []
        for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            flags += [
                f"-X {pkg}.gitVersion={git_version}",
                f"-X {pkg}.gitMajor={major}",
                f"-X {pkg}.gitMinor={minor}",
                f"-X {pkg}.gitTreeState=clean",
            ]
        return " ".join(["-s -w", *flags])
    if name == "karmada":
        return f"-s -w -X github.com/karmada-io/karmada/pkg/version.gitVersion={pins.karmada_version()}"
    if name == "kwok":
        k8s = v["kubernetes"].lstrip("v")
        kwok = v["kwok"].lstrip("v")
        return f"-s -w -X sigs.k8s.io/kwok/pkg/consts.Version={kwok} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion={k8s}"
    return "-s -w"


# --- building -----------------------------------------------------------------


# A runner image (harness/build/runner_image.py) carries binaries built elsewhere and no Go. It
# names the Go that built them (`go env GOVERSION GOOS GOARCH`), so their cache entries are found
# under the same keys without a toolchain to ask.
BUILT_BY_ENV = "PRIORITYKIT_GO_VERSION"


def go_binary() -> str:
    go = shutil.which("go")
    if not go:
        if os.environ.get(BUILT_BY_ENV):
            raise KitError(f"{BUILT_BY_ENV} is set: this is a runner image holding one release's prebuilt "
                           "binaries and no Go toolchain, and the binaries asked for are not in it "
                           "(another release, Karmada, a mutant?); build a runner image for them")
        raise KitError(
            "Go toolchain not found on PATH: the kit builds etcd, kube-apiserver, "
            "kube-controller-manager, kube-scheduler, kubectl and kwok from Go modules. "
            "Install Go >= 1.26 (needed by kwok v0.8.0), e.g. `apt-get install golang` "
            "or from the Go module proxy's toolchain, then run again."
        )
    return go


def go_mod_cache() -> Path:
    """Where go keeps downloaded module sources (read for files a build does not compile in)."""
    out = subprocess.run([go_binary(), "env", "GOMODCACHE"], capture_output=True, text=True)
    return Path(out.stdout.strip())


def _go_version(go: str) -> str:
    out = subprocess.run([go, "env", "GOVERSION", "GOOS", "GOARCH"], capture_output=True, text=True)
    if out.returncode != 0:
        raise KitError(f"`{go} env` failed: {out.stderr.strip()}")
    return " ".join(out.stdout.split())


def go_version() -> str:
    """What the cache keys name as the Go that builds: `go env GOVERSION GOOS GOARCH`."""
    return _go_version(go_binary())


def _toolchain(go: str | None = None, version: str | None = None) -> tuple[str | None, str]:
    """The go binary and its version; no binary (None) where BUILT_BY_ENV names the version and
    nothing is to be built, so a runner image finds its binaries without Go."""
    if go is None and version is None:
        version = os.environ.get(BUILT_BY_ENV) or None
    if version is not None:
        return go, version  # go may stay None: it is looked for only when something must be built
    go = go or go_binary()
    return go, _go_version(go)


def cache_key(module: str, go_version: str) -> str:
    h = hashlib.sha256()
    src = pins.GOMOD_DIR / module
    for f in sorted(src.iterdir()):
        if f.is_file() and (f.suffix in (".mod", ".sum", ".go")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    h.update(go_version.encode())
    h.update(ldflags(module).encode())
    return h.hexdigest()[:16]


def binary_dir(module: str, go_version: str) -> Path:
    return cache_root() / "bin" / f"{module.replace('/', '-')}-{cache_key(module, go_version)}"


def _complete(paths: dict[str, Path]) -> bool:
    return all(p.is_file() and os.access(p, os.X_OK) for p in paths.values())


@contextmanager
def build_lock(module: str, key: str):
    """One builder per cache entry across processes: a second one waits, then finds the binaries."""
    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{module}-{key}.lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            log(f"waiting for {holder}, which is building {module} into the same cache")
            fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}")
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_module(module: str, go: str | None = None, go_version: str | None = None) -> dict[str, Path]:
    """Return {binary name: path} for a wrapper module, building it if absent."""
    go, go_version = _toolchain(go, go_version)
    if not (pins.GOMOD_DIR / module / "go.mod").is_file():
        raise KitError(f"no wrapper module {module} in {pins.GOMOD_DIR}: releases the kit can build: "
                       f"{', '.join(pins.releases())}")
    mod = component(module)
    target = binary_dir(module, go_version)
    paths = {name: target / name for name in mod.binary_names()}
    if _complete(paths):
        return paths
    with build_lock(module.replace("/", "-"), target.name):
        if _complete(paths):  # built by the process we waited for
            return paths
        _build(module, target, go or go_binary())
    return paths


def variant_binary(module: str, package: str, content_key: str, label: str) -> Path:
    """Where ``ensure_variant`` keeps that binary (built or not)."""
    target = cache_root() / "bin" / "variants" / f"{label}-{cache_key(module, _go_version(go_binary()))}-{content_key[:12]}"
    return target / _binary_name(package, component(module).prefix)


def ensure_variant(module: str, package: str, wrapper_dir: Path, content_key: str, label: str) -> Path:
    """One binary of a wrapper module built from a private copy of that module's directory
    (its go.mod may replace a dependency with a patched local copy: a seeded bug, say).
    Cached by the module's key and ``content_key``, which must name everything changed."""
    go = go_binary()
    path = variant_binary(module, package, content_key, label)
    target = path.parent
    if path.is_file():
        return path
    with build_lock(f"variant-{label}", target.name):
        if not path.is_file():
            _build(module, target, go, packages=(package,), label=label, cwd=wrapper_dir)
    return path


def ensure_node_binaries(release: str | None = None) -> dict[str, Path]:
    """kubelet and kubeadm of ``release``, for a kind node image; cached beside the control plane's."""
    go = go_binary()
    go_version = _go_version(go)
    module = pins.wrapper("kubernetes", release)
    target = cache_root() / "bin" / f"{module.replace('/', '-')}-node-{cache_key(module, go_version)}"
    paths = {_binary_name(p): target / _binary_name(p) for p in NODE_PACKAGES}
    if _complete(paths):
        return paths
    label = f"{module.replace('/', '-')}-node"
    with build_lock(label, target.name):
        if not _complete(paths):
            _build(module, target, go, packages=NODE_PACKAGES, label=label)
    return paths


def _build(wrapper_module: str, target: Path, go: str, packages: tuple[str, ...] | None = None,
           extra: tuple[str, ...] = (), label: str | None = None, cwd: Path | None = None) -> None:
    mod = component(wrapper_module)
    module = label or wrapper_module.replace("/", "-")
    packages = packages or mod.packages
    target.parent.mkdir(parents=True, exist_ok=True)
    log_dir = cache_root() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"build-{module}.log"
    staging = Path(tempfile.mkdtemp(prefix=f".{module}-", dir=target.parent))
    staging.chmod(0o755)
    # go's own work directory, where the kit removes it: go leaves it behind when a signal
    # other than SIGINT (CI's SIGTERM, the kit's kill) ends it.
    gotmp = Path(tempfile.mkdtemp(prefix=f".{module}-gotmp-", dir=target.parent))
    env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=readonly -buildvcs=false", "CGO_ENABLED": "0",
           "GOTMPDIR": str(gotmp)}
    # -v names each package as it is compiled: the count is the progress shown.
    cmd = [go, "build", "-v", "-trimpath", *extra, "-ldflags", ldflags(wrapper_module), "-o", str(staging) + "/", *packages]
    names = [_binary_name(p, mod.prefix) for p in packages]
    log(f"building {module} ({', '.join(names)}); cold builds take minutes; log: {log_path}")
    started = time.monotonic()
    proc: subprocess.Popen | None = None
    try:
        with open(log_path, "w") as logf:
            logf.write("$ " + " ".join(cmd) + "\n")
            logf.flush()
            proc = subprocess.Popen(cmd, cwd=cwd or pins.GOMOD_DIR / wrapper_module, env=env, stdout=logf,
                                    stderr=subprocess.STDOUT)
            last = started
            while proc.poll() is None:
                time.sleep(0.5)
                if time.monotonic() - last >= 15:
                    last = time.monotonic()
                    log(f"  {module}: {_progress(log_path)}, {int(last - started)} s")
        if proc.returncode != 0:
            tail = "".join(open(log_path).readlines()[-15:])
            raise KitError(
                f"building {module} failed (exit {proc.returncode}); full log: {log_path}\n{tail}"
            )
        # go names binaries after their package directory; rename where we differ.
        for pkg, name in zip(packages, names):
            built = staging / (mod.name if pkg == "." else pkg.rstrip("/").rsplit("/", 1)[-1])
            if built.name != name:
                built.rename(staging / name)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)  # atomic: a half-built cache entry never looks complete
    except BaseException:
        # Ctrl-C or a failure: no stray compiler, no half-filled cache entry.
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(gotmp, ignore_errors=True)
    log(f"built {module} in {time.monotonic() - started:.0f} s -> {target}")
    downloads, packages = _counts(log_path)
    record_build(module, names, time.monotonic() - started, downloads, packages)


# Every build the kit makes, one JSON record a line, for the run summary's split of a cold run's
# time (harness.run.summary.builds_since): data, never the log's words read back.
BUILDS_RECORD = "builds.jsonl"


def record_build(module: str, binaries: list[str], seconds: float, downloads: int, packages: int) -> None:
    import json
    from datetime import datetime, timezone

    entry = {"module": module, "binaries": binaries, "seconds": round(seconds, 1), "downloads": downloads,
             "packages": packages, "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    path = cache_root() / "logs" / BUILDS_RECORD
    # A line a killed process left unfinished must not swallow this one.
    torn = path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n")
    with open(path, "a") as f:
        f.write(("\n" if torn else "") + json.dumps(entry) + "\n")


def _counts(log_path: Path) -> tuple[int, int]:
    """Modules downloaded and packages compiled, as go build -v's log shows them."""
    downloads = packages = 0
    with open(log_path, errors="replace") as f:
        for line in f:
            if line.startswith("go: downloading "):
                downloads += 1
            elif line and not line.startswith(("$ ", "go: ", "#")) and " " not in line.strip():
                packages += 1
    return downloads, packages


def _progress(log_path: Path) -> str:
    """What a build log says so far: modules downloaded, packages compiled."""
    downloads, packages = _counts(log_path)
    return f"{downloads} modules downloaded, {packages} packages compiled"


def scheduler_key(component: str) -> str:
    """Where ``ensure_all`` files the kube-scheduler a component builds: two components build one."""
    return f"{component}/kube-scheduler"


def ensure_all(components: tuple[str, ...] | None = None, release: str | None = None) -> dict[str, Path]:
    """Every binary a local cluster of ``release`` may need (or just ``components``'), built once and cached."""
    release = release or pins.default_release()
    if release not in pins.releases():
        raise KitError(f"Kubernetes release {release} is not one the kit can build: choose from "
                       f"{', '.join(pins.releases())} (each a directory of wrapper modules in {pins.GOMOD_DIR})")
    if components is None:
        # A pod cluster's components; Karmada is built only for a Karmada run.
        components = tuple(c for c in MODULES if c not in ("karmada", "kind", "toxiproxy")
                           and (c != "scheduler-plugins" or pins.has_plugins(release)))
    go, go_version = _toolchain()
    out: dict[str, Path] = {}
    for name_ in components:
        for name, path in ensure_module(pins.wrapper(name_, release), go, go_version).items():
            out[scheduler_key(name_) if name == "kube-scheduler" else name] = path
    return out
