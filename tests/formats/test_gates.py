"""Feature gates and runtime-config as configuration (harness.gates): parsing, per-component
flags, and the gates a release's binaries offer (read from a binary's --help)."""

from __future__ import annotations

import stat

import pytest

from harness import gates
from harness.errors import KitError

HELP = """      --feature-gates colonSeparatedMultimapStringString   Comma-separated list ...Options are:
                kube:AllAlpha=true|false (ALPHA - default=false)
                kube:GenericWorkload=true|false (ALPHA - default=false)
                kube:SchedulerAsyncPreemption=true|false (BETA - default=true)
"""


def test_gates_for_every_component_and_for_one_later_wins():
    s = gates.parse("GenericWorkload=true,kube-scheduler:SchedulerAsyncPreemption=false,GenericWorkload=false")
    assert s.for_component("kube-apiserver") == {"GenericWorkload": False}
    assert s.for_component("kube-scheduler") == {"GenericWorkload": False, "SchedulerAsyncPreemption": False}
    flags = s.flags()
    assert flags["kube-scheduler"]["feature-gates"] == "GenericWorkload=false,SchedulerAsyncPreemption=false"
    assert flags["kube-controller-manager"]["feature-gates"] == "GenericWorkload=false"
    assert "kubelet" not in flags  # kwokctl runs none; kind's is configured apart


def test_runtime_config_goes_to_the_api_server_only():
    s = gates.parse(runtime_config="scheduling.k8s.io/v1alpha1,api/alpha=false")
    assert s.flags() == {"kube-apiserver": {"runtime-config": "scheduling.k8s.io/v1alpha1,api/alpha=false"}}
    assert s.describe() == "runtime-config scheduling.k8s.io/v1alpha1,api/alpha=false"


@pytest.mark.parametrize("text,says", [
    ("GenericWorkload", "write Gate=true|false"),
    ("GenericWorkload=yes", "write Gate=true|false"),
    ("kube-proxy:X=true", "no component 'kube-proxy'"),
])
def test_bad_gates_name_the_entry(text, says):
    with pytest.raises(ValueError, match=says):
        gates.parse(text)


def test_bad_runtime_config_names_the_entry():
    with pytest.raises(ValueError, match="'scheduling.k8s.io': write group/version"):
        gates.parse(runtime_config="scheduling.k8s.io")


def fake_binary(tmp_path, text=HELP):
    b = tmp_path / "kube-scheduler"
    b.write_text("#!/bin/sh\ncat <<'EOF'\n" + text + "EOF\n")
    b.chmod(b.stat().st_mode | stat.S_IEXEC)
    return b


def test_a_binary_offers_the_gates_its_help_lists(tmp_path):
    offered = gates.offered(fake_binary(tmp_path))
    assert offered["SchedulerAsyncPreemption"] == gates.Gate("SchedulerAsyncPreemption", "BETA", True)
    assert offered["GenericWorkload"].default is False
    s = gates.parse("GangScheduling=true,kube-scheduler:GenericWorkload=true")
    assert gates.missing(s, {"kube-scheduler": fake_binary(tmp_path)}) == ["GangScheduling (kube-scheduler)"]


def test_a_binary_without_gates_is_a_clear_error(tmp_path):
    with pytest.raises(KitError, match="lists no feature gates"):
        gates.offered(fake_binary(tmp_path, "usage: nothing\n"))


def test_a_gate_brings_the_api_versions_its_release_needs():
    # The scheduler with GenericWorkload on waits forever for PodGroups the API server does not serve.
    on = gates.parse("GenericWorkload=true")
    assert on.at("1.36").runtime_config == ("scheduling.k8s.io/v1alpha2",)
    assert on.at("1.37").runtime_config == ("scheduling.k8s.io/v1beta1",)
    assert on.at("1.34").runtime_config == ()  # no such gate there: the run reports it unmet instead
    assert gates.parse("GenericWorkload=false").at("1.37").runtime_config == ()
    assert gates.parse("kube-scheduler:GenericWorkload=true").at("1.37").runtime_config == ()
    given = gates.parse("GenericWorkload=true", "scheduling.k8s.io/v1beta1").at("1.37")
    assert given.runtime_config == ("scheduling.k8s.io/v1beta1",)


def test_gates_a_release_folded_into_generic_workload_are_left_out_there():
    gang = gates.parse("GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true")
    assert gang.at("1.36").names() == {"GenericWorkload", "GangScheduling", "WorkloadAwarePreemption"}
    assert gang.at("1.37").names() == {"GenericWorkload"}
    # Asked for the folded behaviour without what took it over: kept, so the run says it is unmet.
    assert gates.parse("GangScheduling=true").at("1.37").names() == {"GangScheduling"}


def test_the_gates_folded_after_the_first_pod_group_release_are_the_ones_the_model_stops_needing():
    from reference import podgroup
    from reference.release import RELEASES, minor

    assert podgroup.SINCE in RELEASES
    dropped = set(podgroup.GATES[podgroup.SINCE]) - set(podgroup.LATER_GATES)
    for release in (r for r in RELEASES if minor(r) > minor(podgroup.SINCE)):
        folded = gates.FOLDED[release]
        assert set(folded) == dropped and set(folded.values()) <= set(podgroup.LATER_GATES), release
