"""The kind path without Docker: config, commands, the node image's recipe, and the errors a user sees."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.clusters import kind
from harness.host import lifecycle
from harness.build import base_image, node_image
from harness.clusters.config import scheduler_config
from harness.errors import KitError
from harness.targets import BUILDS
from harness.run.pods.placement import on_real_kubelets
from harness.formats.pods import load_sources


def test_rendered_config_mounts_every_build_configuration_and_starts_the_node_scheduler_with_upstream(tmp_path):
    conf = yaml.safe_load(kind.render_config(tmp_path).read_text())
    cp = conf["nodes"][0]
    mount = next(m for m in cp["extraMounts"] if m["containerPath"] == kind.CONFIG_DIR)
    assert Path(mount["hostPath"]) == tmp_path / "scheduler-configs"
    for build in BUILDS:
        written = yaml.safe_load((tmp_path / "scheduler-configs" / f"{build}.yaml").read_text())
        assert written["profiles"] == scheduler_config(build)["profiles"]
        assert written["clientConnection"]["kubeconfig"] == "/etc/kubernetes/scheduler.conf"
    cluster_patch = yaml.safe_load(cp["kubeadmConfigPatches"][0])
    # The node image's own (upstream) scheduler must accept the configuration kubeadm starts it with.
    assert cluster_patch["scheduler"]["extraArgs"]["config"] == kind.config_path("upstream")
    assert [n["role"] for n in conf["nodes"]].count("worker") == kind.WORKERS >= 3


def test_the_cluster_runs_without_registry_images():
    conf = yaml.safe_load(kind.KIND_CONFIG.read_text())
    assert conf["networking"] == {"disableDefaultCNI": True, "kubeProxyMode": "none"}
    init = yaml.safe_load(conf["nodes"][0]["kubeadmConfigPatches"][1])
    assert set(init["skipPhases"]) == {"preflight", "addon/kube-proxy", "addon/coredns"}


def test_rbac_lets_the_scheduler_watch_priority_classes():
    role, binding = yaml.safe_load_all(kind.RBAC.read_text())
    assert set(role["rules"][0]["verbs"]) >= {"list", "watch"} and role["rules"][0]["resources"] == ["priorityclasses"]
    assert binding["subjects"][0]["name"] == "system:kube-scheduler"


def test_the_scheduler_swap_switches_image_and_configuration_together(tmp_path):
    manifest = tmp_path / "kube-scheduler.yaml"
    manifest.write_text("spec:\n  containers:\n  - command:\n    - kube-scheduler\n"
                        f"    - --config={kind.config_path('upstream')}\n    - --leader-elect=true\n"
                        "    image: registry.k8s.io/kube-scheduler:v1.35.8\n"
                        "    imagePullPolicy: Always\n    name: kube-scheduler\n")
    [cmd] = kind.scheduler_swap_commands("c-control-plane", "example.org/sched:v1", "plugins")
    assert cmd[:3] == ["docker", "exec", "c-control-plane"] and cmd[-1] == kind.MANIFEST
    subprocess.run(["sed", *cmd[4:-1], str(manifest)], check=True)
    text = manifest.read_text()
    assert "image: example.org/sched:v1" in text and "imagePullPolicy: IfNotPresent" in text
    assert f"--config={kind.config_path('plugins')}" in text and "upstream.yaml" not in text
    assert "--leader-elect=true" in text


def test_each_node_gets_a_bridge_over_its_own_pod_range():
    conf = json.loads(kind.cni_conflist("10.244.2.0/24"))
    bridge = conf["plugins"][0]
    assert bridge["type"] == "bridge" and bridge["ipam"]["ranges"] == [[{"subnet": "10.244.2.0/24"}]]


def test_no_docker_command_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(kind.shutil, "which", lambda name: None)
    with pytest.raises(KitError, match="needs Docker: no `docker` command"):
        kind.preflight(None)


def test_no_docker_engine_is_a_clear_error(tmp_path):
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(KitError, match="needs a running Docker engine.*Cannot connect"):
        kind.preflight(None, docker=str(fake))


def test_a_missing_kind_binary_given_is_a_clear_error(tmp_path):
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 28.2.2\n")
    fake.chmod(0o755)
    with pytest.raises(KitError, match="--kind-binary: no such file"):
        kind.preflight(str(tmp_path / "no-kind"), docker=str(fake))


def test_pytest_kind_ng_is_given_our_kind_binary_and_downloads_nothing(tmp_path, monkeypatch):
    from pytest_kind import KindCluster

    monkeypatch.chdir(tmp_path)
    fake_kind = tmp_path / "kind"
    fake_kind.write_text("#!/bin/sh\nexit 0\n")
    fake_kind.chmod(0o755)
    cluster = KindCluster("x", kubeconfig=tmp_path / "kc", kind_path=fake_kind)

    def no_download(*a, **k):
        raise AssertionError("must not download kind")

    monkeypatch.setattr("requests.get", no_download)
    cluster.ensure_kind()
    assert cluster.kind_path == fake_kind


# --- what is left to the reaper ------------------------------------------------------


def test_teardown_commands_run_when_the_directory_is_reaped(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    marker = tmp_path / "ran"
    lifecycle.add_teardown(work, ["touch", str(marker)])
    lifecycle.add_teardown(work, ["no-such-command-anywhere"])  # a failing one stops nothing
    lifecycle.reap(work)
    assert marker.exists() and not work.exists()


# --- the node image's recipe ---------------------------------------------------------


def test_the_debian_mirror_comes_from_apt_sources_or_the_environment(monkeypatch):
    monkeypatch.setenv("PRIORITYKIT_DEBIAN_MIRROR", "http://mirror.example/debian")
    assert base_image.debian_mirror() == "http://mirror.example/debian"


def test_the_base_recipe_names_what_kind_units_and_the_holdout_image_need():
    recipe = yaml.safe_load(base_image.BASE_RECIPE.read_text())
    assert {"systemd", "containerd", "runc", "containernetworking-plugins", "busybox-static"} <= set(recipe["packages"])
    assert recipe["links"]["usr/local/bin/containerd"] == "/usr/bin/containerd"  # kind's unit runs that path
    assert set(recipe["enable_units"]) == {"kubelet.service", "containerd.service", "undo-mount-hacks.service"}


def test_the_node_preloads_what_kubeadm_names_less_what_the_cluster_never_runs(tmp_path, monkeypatch):
    listed = ["registry.k8s.io/kube-apiserver:v1.35.8", "registry.k8s.io/kube-controller-manager:v1.35.8",
              "registry.k8s.io/kube-scheduler:v1.35.8", "registry.k8s.io/kube-proxy:v1.35.8",
              "registry.k8s.io/coredns/coredns:v1.13.1", "registry.k8s.io/pause:3.10.1",
              "registry.k8s.io/etcd:3.6.6-0"]
    monkeypatch.setattr(node_image, "kubeadm_images", lambda kubeadm, version: listed)
    kind_dir = tmp_path / "kind"
    conf = kind_dir / "images/base/files/etc/containerd/config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[plugins]\n  sandbox_image = "registry.k8s.io/pause:3.10"\n')
    bins = {"kube-apiserver": Path("a"), "kube-controller-manager": Path("c"), "kubernetes/kube-scheduler": Path("s"),
            "etcd": Path("e"), "scheduler-plugins/kube-scheduler": Path("p")}
    comps = {c.ref: c for c in node_image.components(None, Path("kubeadm"), bins, Path("pause"), kind_dir)}
    assert "registry.k8s.io/kube-proxy:v1.35.8" not in comps and not any("coredns" in r for r in comps)
    assert comps["registry.k8s.io/kube-scheduler:v1.35.8"].binary == Path("s")
    assert comps["registry.k8s.io/etcd:3.6.6-0"].binary == Path("e")
    # kubeadm's pause tag and containerd's sandbox tag both hold pause, run as the entrypoint.
    for ref in ("registry.k8s.io/pause:3.10.1", "registry.k8s.io/pause:3.10"):
        assert comps[ref].binary == Path("pause") and comps[ref].entrypoint == '["/pause"]'
    assert comps[node_image.plugins_image()].binary == Path("p")


def test_a_missing_debootstrap_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(base_image, "base_tag", lambda text, d: "prioritykit/kind-base:x")
    monkeypatch.setattr(base_image, "image_exists", lambda ref: False)
    monkeypatch.setattr(base_image.os, "geteuid", lambda: 0)
    monkeypatch.setattr(base_image.shutil, "which", lambda name: None)
    with pytest.raises(KitError, match="needs debootstrap"):
        base_image.ensure_base(Path("/nonexistent"))


# --- which scenarios run on real kubelets -----------------------------------------------


def test_real_kubelets_run_the_preemptions_that_fit_on_the_workers():
    scenarios = {s.id: s for s in load_sources(None)}
    chosen = {i for i, s in scenarios.items() if on_real_kubelets(s, kind.WORKERS)}
    assert "preempt-basic" in chosen and "pdb-spares-guarded-pod" in chosen
    for i in chosen:
        s = scenarios[i]
        assert len(s.nodes) <= kind.WORKERS
        assert s.needs_kubelet or any(st.expect and st.expect.preempted for st in s.steps)
    # Every node-pressure scenario, which nothing else can run.
    assert {i for i, s in scenarios.items() if s.needs_kubelet} <= chosen
    assert "eviction-critical-pod-never-chosen" in chosen
    assert not any(on_real_kubelets(s, 0) for s in scenarios.values())
