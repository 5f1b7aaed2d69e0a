"""What a run can target: the scheduler builds, the releases, and the default of each.

One source for the kit: the builds are the model's preemption plugins
(reference.preemption.PLUGINS), the releases the model knows are
reference.release.RELEASES, and the default release is reference.release's,
which the build toolchain checks its wrapper modules have. A target on the
command line is a build, optionally at a release: ``upstream@1.37``.
"""

from __future__ import annotations

from reference.preemption import PLUGINS
from reference.release import DEFAULT_RELEASE, RELEASES

from harness.errors import KitError

# The plugins build first: it is the default, and the order reports list builds in.
BUILDS: tuple[str, ...] = tuple(sorted(PLUGINS, key=lambda b: b != "plugins"))
DEFAULT_BUILD = "plugins"

__all__ = ["BUILDS", "DEFAULT_BUILD", "DEFAULT_RELEASE", "RELEASES", "parse_builds", "slug", "split_target"]


def split_target(target: str) -> tuple[str, str | None]:
    """"upstream@1.37" -> ("upstream", "1.37"); a bare build runs the default release (None)."""
    build, _, release = target.partition("@")
    return build, release or None


def slug(target: str) -> str:
    """A target as a piece of a namespace or node name: "upstream@1.37" -> "upstream-137"."""
    return target.replace("@", "-").replace(".", "")


def parse_builds(text: str, option: str = "--scheduler") -> list[str]:
    """A comma-separated list of builds ("plugins,upstream"), each one the kit knows."""
    builds = [b.strip() for b in text.split(",") if b.strip()]
    if not builds or any(b not in BUILDS for b in builds):
        raise KitError(f"{option}: choose from {', '.join(BUILDS)} (got {text!r})")
    return builds
