"""What a run can target: the scheduler builds, the releases, and the default of each.

One source for the kit: the builds are the model's preemption plugins
(reference.preemption.PLUGINS), each built from one wrapper module
(``SCHEDULER_MODULES``); the releases are the model's,
reference.release.RELEASES, which are the releases the wrapper modules under
harness/gomod build (pins.releases(); tests/formats/test_targets.py checks the two
agree, since the model may not read the harness); the default release is
reference.release's, which the build toolchain checks its wrapper modules
have. A target on the command line is a build, optionally at a release:
``upstream@1.37``.
"""

from __future__ import annotations

from pathlib import Path

from reference.preemption import PLUGINS
from reference.release import DEFAULT_RELEASE, RELEASES

from harness.build import pins, toolchain
from harness.errors import KitError

DEFAULT_BUILD = "plugins"
# The default build first: the order reports list builds in.
BUILDS: tuple[str, ...] = tuple(sorted(PLUGINS, key=lambda b: b != DEFAULT_BUILD))
# The wrapper module (harness/gomod/<release>/<module>) whose kube-scheduler each build runs.
SCHEDULER_MODULES: dict[str, str] = {"plugins": "scheduler-plugins", "upstream": "kubernetes"}
# What every local pod cluster starts binaries from besides the scheduler under test.
CONTROL_PLANE: tuple[str, ...] = ("etcd", "kwok", "kubernetes")

__all__ = ["BUILDS", "CONTROL_PLANE", "DEFAULT_BUILD", "DEFAULT_RELEASE", "RELEASES", "SCHEDULER_MODULES",
           "UnknownBuild", "builds_on", "modules", "not_built", "parse_builds", "releases_of", "scheduler_binary",
           "scheduler_package", "slug", "split_target"]


def split_target(target: str) -> tuple[str, str | None]:
    """"upstream@1.37" -> ("upstream", "1.37"); a bare build runs the default release (None)."""
    build, _, release = target.partition("@")
    return build, release or None


def slug(target: str) -> str:
    """A target as a piece of a namespace or node name: "upstream@1.37" -> "upstream-137"."""
    return target.replace("@", "-").replace(".", "")


class UnknownBuild(KitError):
    """An option named no build, or one the kit does not know."""

    def __init__(self, option: str, given: str, unknown: list[str]) -> None:
        super().__init__(f"{option}: choose from {', '.join(BUILDS)} (got {given!r})")
        self.option, self.given, self.unknown = option, given, unknown


def parse_builds(text: str, option: str = "--scheduler") -> list[str]:
    """A comma-separated list of builds ("plugins,upstream"), each one the kit knows."""
    builds = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in builds if b not in BUILDS]
    if unknown or not builds:
        raise UnknownBuild(option, text, unknown)
    return builds


def builds_on(build: str, release: str) -> bool:
    """Whether the kit builds ``build``'s scheduler on Kubernetes ``release``."""
    return pins.has_module(release, SCHEDULER_MODULES[build])


def releases_of(build: str) -> list[str]:
    """The releases the kit builds ``build`` on, oldest first."""
    return [r for r in pins.releases() if builds_on(build, r)]


def not_built(build: str, release: str) -> str:
    """Why ``build`` does not run on ``release`` (where ``builds_on`` says no)."""
    return f"no {SCHEDULER_MODULES[build]} release builds on Kubernetes {release}"


def modules(build: str, own_binary: bool = False) -> tuple[str, ...]:
    """The wrapper modules a local cluster of ``build`` starts binaries from; with the user's own
    scheduler binary, none for the scheduler."""
    wanted = CONTROL_PLANE + (() if own_binary else (SCHEDULER_MODULES[build],))
    return tuple(dict.fromkeys(wanted))


def scheduler_binary(build: str, bins: dict[str, Path]) -> Path:
    """``build``'s kube-scheduler among the binaries toolchain.ensure_all built."""
    return bins[toolchain.scheduler_key(SCHEDULER_MODULES[build])]


def scheduler_package(build: str) -> str:
    """The Go main package of ``build``'s kube-scheduler in its wrapper module."""
    module = toolchain.MODULES[SCHEDULER_MODULES[build]]
    return next(p for p, name in zip(module.packages, module.binary_names()) if name == "kube-scheduler")
