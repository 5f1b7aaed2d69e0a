"""`build`, `kind-image`, `runner-image`, `add-release`: the binaries, the kind node image, the campaign
runner image and the wrapper modules."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from harness.targets import DEFAULT_RELEASE


def register(sub) -> None:
    b = sub.add_parser("build", help="build or find the cached control-plane binaries")
    b.add_argument("--k8s-version", metavar="RELEASE", help="this release's binaries, or all (default: the "
                   f"kit's default release, {DEFAULT_RELEASE})")
    b.set_defaults(func=build)
    ki = sub.add_parser("kind-image", help="build (or find) the kind node image of the kit's release, offline: "
                                           "Debian packages, the kit's builds, no registry")
    ki.add_argument("--save", type=Path, default=None, metavar="FILE",
                    help="also write it to FILE with `docker save` (to carry to an air-gapped host)")
    ki.set_defaults(func=kind_image)
    ri = sub.add_parser("runner-image", help="build (or find) the image a campaign's pods run (./kit campaign), "
                                             "offline: Debian's python3, the kit, its wheels, one release's binaries")
    ri.add_argument("--k8s-version", metavar="RELEASE", help="the release whose binaries it holds (default: the "
                    f"kit's default release, {DEFAULT_RELEASE})")
    ri.add_argument("--save", type=Path, default=None, metavar="FILE",
                    help="also write it to FILE with `docker save` (to load into a cluster's nodes by hand)")
    ri.set_defaults(func=runner_image)
    ar = sub.add_parser("add-release", help="write the wrapper Go modules of a Kubernetes release (for maintainers)")
    ar.add_argument("--kubernetes", required=True, metavar="vX.Y.Z", help="k8s.io/kubernetes version")
    ar.add_argument("--etcd", required=True, metavar="vX.Y.Z", help="etcd server version (kubeadm's for the release)")
    ar.add_argument("--scheduler-plugins", metavar="VERSION", help="a scheduler-plugins release that builds on it")
    ar.add_argument("--staging-fallback", metavar="v0.X.Y",
                    help="for a pre-release: pin a staging module the proxy does not serve at the release's "
                         "version to this one (the previous release's), noted in go.mod")
    ar.set_defaults(func=add_release)


def build(args) -> int:
    from harness.build import pins, toolchain

    chosen = pins.releases() if args.k8s_version == "all" else [args.k8s_version or pins.default_release()]
    for release in chosen:
        started = time.monotonic()
        for name, path in toolchain.ensure_all(release=release).items():
            print(f"{name:<34} {path}")
        print(f"Kubernetes {release}: " + ", ".join(f"{k} {v}" for k, v in pins.versions(release).items())
              + f" ({time.monotonic() - started:.0f} s)")
    return 0


def kind_image(args) -> int:
    from harness.build import node_image

    started = time.monotonic()
    tag = node_image.ensure()
    print(f"{tag} ({time.monotonic() - started:.0f} s)")
    if args.save:
        subprocess.run(["docker", "save", "-o", str(args.save), tag], check=True)
        print(f"saved to {args.save}: on another Docker host, `docker load -i {args.save.name}` and "
              f"`./kit conformance --cluster kind --kind-node-image {tag}`")
    return 0


def runner_image(args) -> int:
    from harness.build import runner_image as image

    started = time.monotonic()
    tag = image.ensure(args.k8s_version)
    print(f"{tag} ({time.monotonic() - started:.0f} s)")
    if args.save:
        subprocess.run(["docker", "save", "-o", str(args.save), tag], check=True)
        print(f"saved to {args.save}")
    return 0


def add_release(args) -> int:
    from harness.build import wrappers

    root = wrappers.write_release(args.kubernetes, args.etcd, args.scheduler_plugins, args.staging_fallback)
    print(f"wrote {root}; build it with: ./kit build --k8s-version {root.name}")
    return 0
