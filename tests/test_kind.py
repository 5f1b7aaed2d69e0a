"""The kind path without Docker: config, commands and the errors a user sees."""

import shutil
import subprocess
from types import SimpleNamespace

import pytest
import yaml

from harness import kind
from harness.errors import KitError


def test_rendered_config_mounts_the_build_scheduler_config_by_absolute_path(tmp_path):
    for build in ("plugins", "upstream"):
        conf = yaml.safe_load(kind.render_config(build, tmp_path).read_text())
        cp = conf["nodes"][0]
        mount = next(m for m in cp["extraMounts"] if m["containerPath"] == kind.MOUNTED_CONFIG)
        assert mount["hostPath"] == str(kind.SCHEDULER_CONFIG[build].resolve())
        assert kind.MOUNTED_CONFIG in cp["kubeadmConfigPatches"][0]
        assert [n["role"] for n in conf["nodes"]].count("worker") >= 3


def test_the_plugins_profile_on_kind_swaps_the_post_filter_plugin():
    conf = yaml.safe_load(kind.SCHEDULER_CONFIG["plugins"].read_text())
    post = conf["profiles"][0]["plugins"]["postFilter"]
    assert post == {"enabled": [{"name": "PreemptionToleration"}], "disabled": [{"name": "DefaultPreemption"}]}
    assert conf["clientConnection"]["kubeconfig"] == "/etc/kubernetes/scheduler.conf"
    assert "plugins" not in yaml.safe_load(kind.SCHEDULER_CONFIG["upstream"].read_text())["profiles"][0]


def test_rbac_lets_the_scheduler_watch_priority_classes():
    role, binding = yaml.safe_load_all(kind.RBAC.read_text())
    assert set(role["rules"][0]["verbs"]) >= {"list", "watch"} and role["rules"][0]["resources"] == ["priorityclasses"]
    assert binding["subjects"][0]["name"] == "system:kube-scheduler"


def test_image_swap_rewrites_the_static_pod_manifest():
    cmds = kind.image_swap_commands("prio-plugins", "example.org/sched:v1")
    assert all(c[:3] == ["docker", "exec", "prio-plugins-control-plane"] for c in cmds)
    assert any("example.org/sched:v1" in part for part in cmds[0]) and cmds[0][-1] == kind.MANIFEST


def test_the_image_swap_expression_does_what_it_says(tmp_path):
    manifest = tmp_path / "kube-scheduler.yaml"
    manifest.write_text("spec:\n  containers:\n  - image: registry.k8s.io/kube-scheduler:v1.34.0\n"
                        "    imagePullPolicy: Always\n    name: kube-scheduler\n")
    for cmd in kind.image_swap_commands("c", "example.org/sched:v1"):
        subprocess.run(["sed", *cmd[4:-1], str(manifest)], check=True)
    text = manifest.read_text()
    assert "image: example.org/sched:v1" in text and "imagePullPolicy: IfNotPresent" in text


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


def test_missing_kind_binary_is_a_clear_error(tmp_path, monkeypatch):
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 28.2.2\n")
    fake.chmod(0o755)
    real_which = shutil.which
    monkeypatch.setattr(kind.shutil, "which", lambda name: None if name == "kind" else real_which(name))
    with pytest.raises(KitError, match="needs the kind binary"):
        kind.preflight(None, docker=str(fake))
    with pytest.raises(KitError, match="needs the kind binary"):
        kind.preflight(str(tmp_path / "no-kind"), docker=str(fake))


def test_plugins_build_on_kind_needs_an_image(monkeypatch, tmp_path):
    monkeypatch.setattr(kind, "preflight", lambda path: tmp_path / "kind")
    options = {"--kind-binary": None, "--scheduler-image": None, "--keep-cluster": False}
    config = SimpleNamespace(getoption=options.get)
    with pytest.raises(KitError, match="needs --scheduler-image"):
        with kind.cluster_for(config, "plugins"):
            pass


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
