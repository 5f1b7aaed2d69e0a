"""Write the wrapper modules of a Kubernetes release (``./kit add-release``).

A release is a directory ``harness/gomod/<minor>/`` of wrapper modules that
the toolchain builds: ``kubernetes`` (apiserver, controller-manager,
scheduler, kubectl), ``etcd`` and, where a scheduler-plugins release builds on
it, ``scheduler-plugins``. This writes them the way the first release's were
written by hand, so every release is made the same way:

- k8s.io/kubernetes points its staging modules at ./staging, which a
  dependent module cannot follow: each is pinned to the matching v0.<minor>.<patch>.
- scheduler-plugins pins its own Kubernetes patch; the wrapper repeats the
  same pins, so both scheduler builds of a release share one Kubernetes.
- etcd's main package cannot be built from a dependent module; the wrapper
  calls the server module's entry point.

``go mod tidy`` then resolves and records every checksum (go.sum). The
result is committed: a build reads only what is committed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.errors import KitError
from harness.build.pins import GOMOD_DIR
from harness.build.toolchain import go_binary

_STAGING = re.compile(r"^\s*(k8s\.io/\S+)\s*=>\s*\./staging/\S+\s*$")
_GO = re.compile(r"^go (\S+)$", re.M)

ETCD_MAIN = """// Command etcd is the etcd server the wrapper's go.mod pins.
//
// etcd's own main package lives in its root module, whose go.mod points the
// server, api and client modules at sibling directories; a dependent module
// cannot build it. The server module exports the same entry point.
package main

import (
\t"os"

\t"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
"""


def _go(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    out = subprocess.run([go_binary(), *args], cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise KitError(f"`go {' '.join(args)}` in {cwd} failed:\n{out.stderr.strip()[-2000:]}")
    return out.stdout


def _module_file(module: str, version: str, cwd: Path) -> str:
    """A module's go.mod as published, fetched (and checked against the checksum database) by go."""
    info = _go(["mod", "download", "-json", f"{module}@{version}"], cwd)
    path = re.search(r'"GoMod":\s*"([^"]+)"', info)
    if not path:
        raise KitError(f"{module}@{version}: the Go module proxy gave no go.mod")
    return Path(path.group(1)).read_text()


def _served(module: str, version: str, cwd: Path) -> bool:
    try:
        _go(["mod", "download", "-json", f"{module}@{version}"], cwd)
    except KitError:
        return False
    return True


def staging_pins(k8s_version: str, cwd: Path, fallback: str | None = None) -> list[tuple[str, str]]:
    """(module, version) for each staging module k8s.io/kubernetes at ``k8s_version`` replaces.

    A pre-release's staging modules are not all published (v1.38.0-alpha.0: cli-runtime,
    kube-proxy, cri-streaming and the samples are refused by the proxy here). With ``fallback``
    (the previous release's staging version) such a module is pinned to that one instead, and the
    go.mod says which: the build is then the pre-release's Kubernetes with a few of the previous
    release's libraries, which is what the kit can make, not what upstream tagged."""
    text = _module_file("k8s.io/kubernetes", k8s_version, cwd)
    staging_version = "v0." + k8s_version.lstrip("v").split(".", 1)[1]
    modules = sorted(m.group(1) for line in text.splitlines() if (m := _STAGING.match(line)))
    if not fallback:
        return [(m, staging_version) for m in modules]
    return [(m, staging_version if _served(m, staging_version, cwd) else fallback) for m in modules]


def _replace_block(pins: list[tuple[str, str]], k8s_version: str) -> str:
    staging_version = "v0." + k8s_version.lstrip("v").split(".", 1)[1]
    lines = [f"\t{m} => {m} {v}" + ("" if v == staging_version else f" // {staging_version} is not served")
             for m, v in pins] + [f"\tk8s.io/kubernetes => k8s.io/kubernetes {k8s_version}"]
    return "replace (\n" + "\n".join(sorted(lines)) + "\n)\n"


def write_release(k8s_version: str, etcd_version: str, plugins_version: str | None = None,
                  staging_fallback: str | None = None) -> Path:
    minor = ".".join(k8s_version.lstrip("v").split(".")[:2])
    root = GOMOD_DIR / minor
    if root.exists():
        raise KitError(f"{root} exists: remove it first to write release {minor} anew")
    root.mkdir(parents=True)
    try:
        scratch = root / "kubernetes"
        scratch.mkdir()
        outside = Path(tempfile.mkdtemp(prefix="add-release-"))  # no go.mod here for go to edit
        try:
            pins = staging_pins(k8s_version, outside, staging_fallback)
            go_directive = _GO.search(_module_file("k8s.io/kubernetes", k8s_version, outside)).group(1)
        finally:
            shutil.rmtree(outside, ignore_errors=True)
        header = ("// Staging modules pinned to the release: k8s.io/kubernetes points them at ./staging,\n"
                  "// which a dependent module cannot follow. Written by ./kit add-release.\n")
        (scratch / "go.mod").write_text(
            f"module prioritykit.local/gomod/kubernetes\n\ngo {go_directive}\n\n"
            f"require k8s.io/kubernetes {k8s_version}\n\n"
            "tool (\n\tk8s.io/kubernetes/cmd/kube-apiserver\n\tk8s.io/kubernetes/cmd/kube-controller-manager\n"
            "\tk8s.io/kubernetes/cmd/kube-scheduler\n\tk8s.io/kubernetes/cmd/kubectl\n)\n\n"
            + header + _replace_block(pins, k8s_version))
        _go(["mod", "tidy"], scratch)

        etcd = root / "etcd"
        etcd.mkdir()
        (etcd / "main.go").write_text(ETCD_MAIN)
        (etcd / "go.mod").write_text(f"module prioritykit.local/gomod/etcd\n\ngo {go_directive}\n\n"
                                     f"require go.etcd.io/etcd/server/v3 {etcd_version}\n")
        _go(["mod", "tidy"], etcd)

        if plugins_version:
            plugins = root / "scheduler-plugins"
            plugins.mkdir()
            (plugins / "go.mod").write_text(
                f"module prioritykit.local/gomod/scheduler-plugins\n\ngo {go_directive}\n\n"
                f"require sigs.k8s.io/scheduler-plugins {plugins_version}\n\n"
                "tool sigs.k8s.io/scheduler-plugins/cmd/scheduler\n\n"
                f"// scheduler-plugins {plugins_version} on Kubernetes {k8s_version}, the release's own patch, so\n"
                "// both scheduler builds of a release share one Kubernetes. Written by ./kit add-release.\n"
                + _replace_block(pins, k8s_version))
            _go(["mod", "tidy"], plugins)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return root


__all__ = ["staging_pins", "write_release"]
