"""One source for the builds, the releases and the default release: the model, the toolchain and
the CLI agree."""

import shutil

import pytest

from harness import targets
from harness.build import pins
from harness.errors import KitError
from reference.preemption import PLUGINS
from reference.release import DEFAULT_RELEASE, RELEASES


def test_the_builds_are_the_models_preemption_plugins_plugins_first():
    assert set(targets.BUILDS) == set(PLUGINS)
    assert targets.BUILDS[0] == targets.DEFAULT_BUILD == "plugins"


def test_targets_split_and_slug():
    assert targets.split_target("upstream@1.37") == ("upstream", "1.37")
    assert targets.split_target("plugins") == ("plugins", None)
    assert targets.slug("upstream@1.37") == "upstream-137"


def test_target_helpers_are_still_importable_where_conformance_finds_them():
    from harness.clusters import local

    assert local.split_target is targets.split_target and local.slug is targets.slug
    assert local.BUILDS == targets.BUILDS


def test_builds_parse_from_a_comma_list_and_refuse_unknown_ones():
    assert targets.parse_builds("plugins, upstream") == ["plugins", "upstream"]
    with pytest.raises(KitError, match="--scheduler: choose from plugins, upstream"):
        targets.parse_builds("plugins,mine")
    with pytest.raises(KitError):
        targets.parse_builds(" , ")
    with pytest.raises(targets.UnknownBuild) as e:
        targets.parse_builds("plugins,mine,yours", "--targets")
    assert (e.value.option, e.value.unknown) == ("--targets", ["mine", "yours"])


def test_the_models_releases_are_the_releases_the_kit_builds():
    """The model (reference/, which reads nothing of the harness) lists the releases it predicts; the
    wrapper modules under harness/gomod/<release>/ are the releases the kit can run. A release added
    to one and not the other would be predicted and never run, or run with no prediction."""
    assert list(RELEASES) == pins.releases()
    assert targets.RELEASES == RELEASES
    for release in RELEASES:
        assert all(pins.has_module(release, m) for m in targets.CONTROL_PLANE if m not in pins.SHARED), release


def test_each_build_runs_the_kube_scheduler_of_one_wrapper_module():
    from harness.build import toolchain

    assert set(targets.SCHEDULER_MODULES) == set(targets.BUILDS)
    assert {b: targets.scheduler_package(b) for b in targets.BUILDS} == {
        "plugins": "sigs.k8s.io/scheduler-plugins/cmd/scheduler", "upstream": "k8s.io/kubernetes/cmd/kube-scheduler"}
    assert targets.modules("plugins") == ("etcd", "kwok", "kubernetes", "scheduler-plugins")
    assert targets.modules("upstream") == targets.modules("plugins", own_binary=True) == targets.CONTROL_PLANE
    bins = {toolchain.scheduler_key(m): m for m in ("kubernetes", "scheduler-plugins")}
    assert targets.scheduler_binary("plugins", bins) == "scheduler-plugins"
    assert targets.scheduler_binary("upstream", bins) == "kubernetes"
    # Upstream builds wherever the kit builds Kubernetes; the plugins build where a scheduler-plugins release does.
    assert targets.releases_of("upstream") == pins.releases()
    assert targets.releases_of("plugins") == [r for r in pins.releases() if pins.has_plugins(r)]
    assert targets.not_built("plugins", "1.38") == "no scheduler-plugins release builds on Kubernetes 1.38"


def test_the_toolchain_runs_the_release_the_model_predicts():
    assert DEFAULT_RELEASE in RELEASES
    assert pins.default_release() == DEFAULT_RELEASE == targets.DEFAULT_RELEASE


def test_a_default_release_without_both_builds_is_a_loud_error(tmp_path, monkeypatch):
    gomod = tmp_path / "gomod"
    shutil.copytree(pins.GOMOD_DIR, gomod)
    shutil.rmtree(gomod / DEFAULT_RELEASE / "scheduler-plugins")
    monkeypatch.setattr(pins, "GOMOD_DIR", gomod)
    with pytest.raises(KitError, match=f"default release {DEFAULT_RELEASE} .* both scheduler builds"):
        pins.default_release()


def test_the_mutants_keep_their_own_release():
    from harness.formats.mutants import MUTANTS_RELEASE
    from harness.mutants.matrix import scheduler

    # The release whose sources the mutants' texts quote; it moves with them, not with the default.
    assert MUTANTS_RELEASE in pins.releases()
    assert all(targets.builds_on(b, MUTANTS_RELEASE) for b in targets.BUILDS)
    assert all(scheduler(b)[0].startswith(MUTANTS_RELEASE + "/") for b in targets.BUILDS)
