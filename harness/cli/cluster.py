"""`cluster up|down|status`: the embedded local cluster, kept running between commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.errors import KitError
from harness.targets import BUILDS, DEFAULT_BUILD, DEFAULT_RELEASE


def register(sub) -> None:
    cl = sub.add_parser("cluster", help="the embedded local cluster").add_subparsers(dest="action", required=True)
    up = cl.add_parser("up", help="start a local cluster and leave it running")
    up.add_argument("--scheduler", choices=list(BUILDS), default=DEFAULT_BUILD)
    up.add_argument("--scheduler-binary", type=Path)
    up.add_argument("--scheduler-config", type=Path)
    up.add_argument("--name", default="explore")
    up.add_argument("--k8s-version", metavar="RELEASE", help="Kubernetes release of the control plane "
                    f"(default: the kit's default release, {DEFAULT_RELEASE})")
    up.add_argument("--feature-gates", default="", metavar="GATE=BOOL,...",
                    help="feature gates: Gate=true for every component, kube-scheduler:Gate=false for one")
    up.add_argument("--runtime-config", default="", metavar="GROUP/VERSION,...",
                    help="API versions the kube-apiserver serves besides its defaults")
    up.set_defaults(func=up_)
    down = cl.add_parser("down", help="stop a local cluster and remove its files")
    down.add_argument("--name", default="explore")
    down.set_defaults(func=down_)
    st = cl.add_parser("status", help="show recorded local clusters and their processes")
    st.set_defaults(func=status)


def _state_dir() -> Path:
    from harness.host.cache import cache_root

    return cache_root() / "clusters"


def up_(args) -> int:
    from harness import gates
    from harness.clusters.local import ClusterOptions, LocalCluster

    record = _state_dir() / f"{args.name}.json"
    if record.exists():
        raise KitError(f"a cluster named {args.name} is already recorded ({record}); run `cluster down --name {args.name}` first")
    workdir = _state_dir() / args.name
    try:
        settings = gates.parse(args.feature_gates, args.runtime_config)
    except ValueError as e:
        raise KitError(f"--feature-gates/--runtime-config: {e}") from None
    options = ClusterOptions(build=args.scheduler, release=args.k8s_version or "", scheduler_binary=args.scheduler_binary,
                             scheduler_config=args.scheduler_config, name=args.name, workdir=workdir, gates=settings)
    c = LocalCluster(options)
    c.up()  # on failure or Ctrl-C, up() has already removed what it started
    c.keep()  # meant to outlive this command: no watchdog, no reaping
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"name": args.name, "build": args.scheduler, "release": options.release,
                                  "workdir": str(c.workdir),
                                  "kwokctl": str(c.kwokctl_path), "kubeconfig": str(c.kubeconfig)}))
    print(f"cluster {args.name} is up ({args.scheduler} scheduler, Kubernetes {options.release}"
          + (f"; {settings.describe()}" if settings else "") + f") in {c.timings['up']:.1f} s")
    print(f"export KUBECONFIG={c.kubeconfig}")
    print(f"stop it with: ./kit cluster down --name {args.name}")
    return 0


def _recorded(name: str) -> dict:
    record = _state_dir() / f"{name}.json"
    if not record.exists():
        known = sorted(p.stem for p in _state_dir().glob("*.json")) if _state_dir().exists() else []
        raise KitError(f"no cluster named {name} is recorded" + (f" (known: {', '.join(known)})" if known else ""))
    return json.loads(record.read_text())


def down_(args) -> int:
    from harness.clusters.local import LocalCluster

    rec = _recorded(args.name)
    c = LocalCluster.kept(rec["name"], Path(rec["workdir"]), Path(rec["kwokctl"]))
    c.down()
    shutil.rmtree(rec["workdir"], ignore_errors=True)
    (_state_dir() / f"{args.name}.json").unlink()
    print(f"cluster {args.name} stopped and removed in {c.timings['down']:.1f} s")
    return 0


def status(args) -> int:
    from harness.clusters.local import LocalCluster

    records = sorted(_state_dir().glob("*.json")) if _state_dir().exists() else []
    if not records:
        print("no local cluster is recorded")
        return 0
    for record in records:
        rec = json.loads(record.read_text())
        c = LocalCluster.kept(rec["name"], Path(rec["workdir"]))
        alive = {name: c.process_alive(name) for name in c.pids()}
        state = "running" if alive and all(alive.values()) else ("partly running" if any(alive.values()) else "stopped")
        print(f"{rec['name']}: {state} ({rec['build']} scheduler); KUBECONFIG={rec['kubeconfig']}")
        for name, ok in sorted(alive.items()):
            print(f"  {name:<24} {'up' if ok else 'DOWN'}  log: {c.log_path(name)}")
    return 0
