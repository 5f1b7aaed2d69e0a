"""The build without a cluster: pinned versions, the binaries' cache, clear errors."""

import shutil
import stat

import pytest

from harness.build import pins, toolchain
from harness.clusters.local import ClusterOptions
from harness.errors import KitError


def test_versions_come_from_the_wrapper_go_mod_files():
    v = pins.versions("1.34")
    assert v["kubernetes"] == "v1.34.4"
    assert v["scheduler-plugins"] == "v0.34.7"
    assert v["scheduler-plugins-kubernetes"] == v["kubernetes"]
    assert v["etcd"] == "v3.6.4" and v["kwok"] == "v0.8.0"


def test_releases_are_the_directories_of_wrappers_and_the_default_runs_both_builds():
    releases = pins.releases()
    assert releases[0] == "1.34" and releases == sorted(releases, key=lambda r: int(r.split(".")[1]))
    assert pins.has_plugins(pins.default_release())
    assert all(not pins.has_plugins(r) for r in releases if r > pins.default_release())
    for r in releases:
        v = pins.versions(r)
        assert v["kubernetes"].startswith(f"v{r}.")
        assert v.get("scheduler-plugins-kubernetes", v["kubernetes"]) == v["kubernetes"], \
            "both scheduler builds of a release share one Kubernetes"


def test_an_unknown_release_is_one_clear_error():
    with pytest.raises(KitError, match="release 1.99 is not one the kit can build"):
        toolchain.ensure_all(release="1.99")
    with pytest.raises(KitError, match="release 1.99"):
        ClusterOptions(build="upstream", release="1.99")


def test_ldflags_stamp_real_versions():
    assert "gitVersion=v1.34.4 " in toolchain.ldflags("1.34/kubernetes") + " "
    assert "gitVersion=v1.34.4+scheduler-plugins.v0.34.7" in toolchain.ldflags("1.34/scheduler-plugins")
    assert "gitMinor=34 " in toolchain.ldflags("1.34/kubernetes") + " "
    assert f"consts.KubeVersion={pins.versions()['kubernetes'].lstrip('v')}" in toolchain.ldflags("kwok")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A private cache and a private copy of the wrapper modules."""
    monkeypatch.setenv("PRIORITYKIT_CACHE", str(tmp_path / "cache"))
    gomod = tmp_path / "gomod"
    shutil.copytree(pins.GOMOD_DIR, gomod)
    monkeypatch.setattr(pins, "GOMOD_DIR", gomod)
    return tmp_path


def test_cache_key_follows_the_module_files(sandbox):
    before = toolchain.cache_key("1.34/etcd", "go1.26")
    other_release = {r: toolchain.cache_key(f"{r}/etcd", "go1.26") for r in pins.releases()[1:]}
    assert toolchain.cache_key("1.34/etcd", "go1.26") == before
    assert toolchain.cache_key("1.34/etcd", "go1.27") != before
    gomod = pins.GOMOD_DIR / "1.34" / "etcd" / "go.mod"
    gomod.write_text(gomod.read_text() + "// changed\n")
    assert toolchain.cache_key("1.34/etcd", "go1.26") != before
    # Building a second release must not rebuild the first, nor the other way round.
    assert {r: toolchain.cache_key(f"{r}/etcd", "go1.26") for r in other_release} == other_release
    assert before not in other_release.values()


def test_a_warm_cache_builds_nothing(sandbox, monkeypatch):
    target = toolchain.binary_dir("1.34/etcd", "go1.26 linux amd64")
    target.mkdir(parents=True)
    (target / "etcd").write_text("#!/bin/sh\n")
    (target / "etcd").chmod(0o755)

    def no_build(*a, **k):
        raise AssertionError("a warm cache must not build")

    monkeypatch.setattr(toolchain.subprocess, "Popen", no_build)
    assert toolchain.ensure_module("1.34/etcd", go="go", go_version="go1.26 linux amd64") == {"etcd": target / "etcd"}


def test_a_runner_image_finds_its_binaries_with_no_go(sandbox, monkeypatch):
    # The runner image has the binaries under the host's cache keys and no Go: the version it
    # names stands in for `go env`, and nothing asks for a go binary.
    target = toolchain.binary_dir("1.34/etcd", "go1.26 linux amd64")
    target.mkdir(parents=True)
    (target / "etcd").write_text("#!/bin/sh\n")
    (target / "etcd").chmod(0o755)
    monkeypatch.setenv(toolchain.BUILT_BY_ENV, "go1.26 linux amd64")
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    assert toolchain.ensure_module("1.34/etcd") == {"etcd": target / "etcd"}
    # A binary it does not hold is one clear error, not a build attempt.
    with pytest.raises(KitError, match="runner image holding one release's prebuilt binaries"):
        toolchain.ensure_module("1.35/etcd")


def test_missing_go_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    with pytest.raises(KitError, match="Go toolchain not found"):
        toolchain.go_binary()


def test_a_failed_build_names_the_module_and_log_and_leaves_nothing(sandbox):
    fake_go = sandbox / "go"
    fake_go.write_text("#!/bin/sh\necho 'go: module lookup disabled by GOPROXY=off' >&2\nexit 1\n")
    fake_go.chmod(fake_go.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(KitError) as e:
        toolchain.ensure_module("1.34/etcd", go=str(fake_go), go_version="fake")
    assert "building 1.34-etcd failed" in str(e.value) and "build-1.34-etcd.log" in str(e.value)
    assert "GOPROXY=off" in str(e.value)
    leftovers = [p for p in (toolchain.cache_root() / "bin").iterdir()]
    assert leftovers == [], "no half-built cache entry may remain"
