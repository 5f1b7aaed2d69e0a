"""What the wrapper modules under ``harness/gomod`` pin: the Kubernetes releases the kit can
build, the default one, and each component's version.

The wrapper go.mod files are the single source of these facts: a release is a directory of
wrappers (``1.35/kubernetes``, ``1.35/etcd``, ``1.35/scheduler-plugins`` where a scheduler-plugins
release builds on it), kwok, Karmada and kind have one wrapper for every release, and a bump is a
go.mod edit. How those modules are built and cached is ``harness.build.toolchain``.
"""

from __future__ import annotations

import re

from reference.release import DEFAULT_RELEASE

from harness import GOMOD
from harness.errors import KitError

GOMOD_DIR = GOMOD

RELEASE_DIR = re.compile(r"^\d+\.\d+$")
SHARED = ("kwok", "karmada", "kind", "toxiproxy")  # one wrapper for every release


def releases() -> list[str]:
    """The Kubernetes releases the kit can build, oldest first: each a directory of wrappers."""
    found = [d.name for d in GOMOD_DIR.iterdir() if d.is_dir() and RELEASE_DIR.match(d.name)]
    return sorted(found, key=lambda r: tuple(int(x) for x in r.split(".")))


def has_module(release: str, component: str) -> bool:
    """Whether this Kubernetes release has a wrapper module for ``component``."""
    return (GOMOD_DIR / release / component / "go.mod").is_file()


def has_plugins(release: str) -> bool:
    """Whether a scheduler-plugins release builds on this Kubernetes release."""
    return has_module(release, "scheduler-plugins")


def default_release() -> str:
    """The release the kit runs unless told otherwise: reference.release.DEFAULT_RELEASE, the one the
    model predicts too. Its wrappers must be here and build both schedulers, or nothing agrees."""
    if DEFAULT_RELEASE not in releases() or not has_plugins(DEFAULT_RELEASE):
        raise KitError(f"the kit's default release {DEFAULT_RELEASE} (reference/release.py) has no wrapper modules "
                       f"for both scheduler builds in {GOMOD_DIR}; it must be one of "
                       f"{', '.join(r for r in releases() if has_plugins(r)) or 'none'}")
    return DEFAULT_RELEASE


def wrapper(component: str, release: str | None = None) -> str:
    if component in SHARED:
        return component
    return f"{release or default_release()}/{component}"


_REQ = re.compile(r"^\s*(?:require\s+)?(\S+)\s+(v\S+)(?:\s*//.*)?$")
_REPL = re.compile(r"^\s*(?:replace\s+)?(\S+)\s*=>\s*(\S+)\s+(v\S+)\s*(?://.*)?$")


def module_versions(module: str) -> dict[str, str]:
    """Effective version of every module named in a wrapper go.mod (replace wins)."""
    text = (GOMOD_DIR / module / "go.mod").read_text()
    required: dict[str, str] = {}
    replaced: dict[str, str] = {}
    for line in text.splitlines():
        if m := _REPL.match(line):
            replaced[m.group(1)] = m.group(3)
        elif m := _REQ.match(line):
            required[m.group(1)] = m.group(2)
    return {**required, **replaced}


def versions(release: str | None = None) -> dict[str, str]:
    """The pinned versions of one release's components, as a user sees them in reports."""
    release = release or default_release()
    out = {
        "kubernetes": module_versions(wrapper("kubernetes", release))["k8s.io/kubernetes"],
        "etcd": module_versions(wrapper("etcd", release))["go.etcd.io/etcd/server/v3"],
        "kwok": module_versions("kwok")["sigs.k8s.io/kwok"],
    }
    if has_plugins(release):
        plugins = module_versions(wrapper("scheduler-plugins", release))
        out["scheduler-plugins"] = plugins["sigs.k8s.io/scheduler-plugins"]
        out["scheduler-plugins-kubernetes"] = plugins["k8s.io/kubernetes"]
    return out


def prerelease(release: str) -> str:
    """The Kubernetes version of a release the kit builds from a pre-release tag
    ("v1.38.0-alpha.0"), or "" for a released one: a preview, never the default."""
    version = module_versions(wrapper("kubernetes", release))["k8s.io/kubernetes"]
    return version if "-" in version else ""


def karmada_version() -> str:
    return module_versions("karmada")["github.com/karmada-io/karmada"]



__all__ = ["GOMOD_DIR", "default_release", "has_module", "has_plugins", "karmada_version", "module_versions",
           "prerelease", "releases", "versions", "wrapper"]
