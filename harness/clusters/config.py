"""The configuration the kit's clusters start with, as plain data: the kube-scheduler's for each
build (the local cluster and kind share it) and kwokctl's for a local cluster. Nothing here
starts or writes anything.
"""

from __future__ import annotations

from harness import DATA

from pathlib import Path

from harness.build import pins

# The kwok stages every kit cluster plays its nodes and pods by (local and kind alike).
STAGES = DATA / "kwok-stages.yaml"

# The components around the scheduler under test each run one processor's worth of Go scheduler
# (GOMAXPROCS=1). A run keeps a dozen control planes up at once, and a Go runtime sized to every
# core spends on idle processors and parallel garbage collection what the cores could give the
# scenarios: on this 2-core machine the both-build catalogue took 546 CPU-seconds with every
# component at the default, 429 to 451 with these four at one (405 with the scheduler at one too);
# a cluster's start and idle cost fell by a fifth to a half. The scheduler under test keeps the
# default: its parallelism is part of what is judged.
ONE_PROCESSOR = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok-controller")
CONTROL_PLANE_ENV: dict[str, dict[str, str]] = {c: {"GOMAXPROCS": "1"} for c in ONE_PROCESSOR}


def scheduler_config(build: str) -> dict:
    """The KubeSchedulerConfiguration for a scheduler build.

    The scheduler-plugins build swaps the PostFilter plugin; everything else
    is the default profile, so the two builds differ only where the specs do.
    """
    profile: dict = {"schedulerName": "default-scheduler"}
    if build == "plugins":
        profile["plugins"] = {
            "postFilter": {
                "enabled": [{"name": "PreemptionToleration"}],
                "disabled": [{"name": "DefaultPreemption"}],
            }
        }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [profile],
    }


def kwokctl_config(bins: dict[str, Path], scheduler_config_path: Path, cache_dir: Path,
                   port_options: dict[str, int] | None = None, scheduler_verbosity: int | None = None,
                   release: str | None = None, disable: tuple[str, ...] = (),
                   extra_args: dict[str, dict[str, str]] | None = None,
                   envs: dict[str, dict[str, str]] | None = None) -> dict:
    """kwokctl's configuration: binary runtime, every component a local binary, nothing downloaded,
    listening on the ports the kit chose (see ``ports``); ``envs``: variables added to a component's
    environment (kwokctl keeps them for its restarts too). A component in ``disable`` runs nothing,
    so nothing is patched into it."""
    extra = {k: dict(v) for k, v in (extra_args or {}).items()}
    if scheduler_verbosity is not None:
        extra.setdefault("kube-scheduler", {})["v"] = str(scheduler_verbosity)
    envs = envs or {}
    patched = [name for name in dict.fromkeys([*extra, *envs]) if name not in disable]
    return {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            "runtime": "binary",
            "kubeVersion": pins.versions(release)["kubernetes"],
            "etcdBinary": str(bins["etcd"]),
            "kubeApiserverBinary": str(bins["kube-apiserver"]),
            "kubeControllerManagerBinary": str(bins["kube-controller-manager"]),
            "kubeSchedulerBinary": str(bins["kube-scheduler"]),
            "kubectlBinary": str(bins["kubectl"]),
            "kwokControllerBinary": str(bins["kwok"]),
            "kubeSchedulerConfig": str(scheduler_config_path),
            "kubeAuthorization": True,
            "securePort": True,
            "quietPull": True,
            "cacheDir": str(cache_dir),
            **(port_options or {}),
            **({"disable": list(disable)} if disable else {}),
        },
        **({"componentsPatches": [_patch(name, extra.get(name, {}), envs.get(name, {})) for name in patched]}
           if patched else {}),
    }


def _patch(name: str, args: dict[str, str], env: dict[str, str]) -> dict:
    out: dict = {"name": name}
    if args:
        out["extraArgs"] = [{"key": k, "value": v} for k, v in args.items()]
    if env:
        out["extraEnvs"] = [{"name": k, "value": v} for k, v in env.items()]
    return out


def with_pki(extra_args: dict[str, dict[str, str]], pki: Path) -> dict[str, dict[str, str]]:
    """Component flags that name the cluster's certificates (``{pki}``), once kwokctl's directory is known."""
    return {name: {k: v.format(pki=pki) for k, v in args.items()} for name, args in extra_args.items()}
