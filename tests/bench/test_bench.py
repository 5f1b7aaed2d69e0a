"""The preemption benchmark's arithmetic, outcome check, metrics parsing and reports (harness.bench),
without a cluster. No test here asserts a speed: the benchmark reports figures, it does not judge them."""

from __future__ import annotations

import json
from argparse import Namespace
from datetime import datetime, timezone
from unittest import mock

import pytest
from kubernetes import client

from harness.bench import measure, metrics, report
from harness.bench.check import PodFact, problems
from harness.bench.preemption import main, sizes, targets
from harness.bench.workload import node_ready, pod_body, running
from harness.errors import KitError
from harness.kube import SLOT
from harness.run.pods.history import PodLog
from harness.run.pods.timings import PreemptionTiming
from harness.targets import DEFAULT_RELEASE

# -- percentiles and throughput -----------------------------------------------------------


def test_percentiles_interpolate_between_ranks():
    xs = list(range(1, 101))
    assert measure.percentiles(xs) == {"p50": 50.5, "p90": pytest.approx(90.1), "p99": pytest.approx(99.01)}
    assert measure.percentile([7.0], 99) == 7.0
    assert measure.percentile([], 50) is None
    assert measure.percentile([3.0, 1.0, 2.0], 50) == 2.0  # order does not matter


def test_throughput_is_bound_preemptors_over_the_wave():
    assert measure.throughput([10.0, 10.1, 10.2], [11.0, 12.0, None]) == pytest.approx(2 / 2.0)
    assert measure.throughput([10.0], [None]) is None
    assert measure.throughput([], []) is None


def timing(name: str, victims=("v",), nominated=0.01, deleting=0.02, gone=1.1, bound=1.2, lag=0.3):
    return PreemptionTiming(preemptor=name, node="n1", victims=tuple(victims), nominated=nominated,
                            victims_deleting=deleting, victims_gone=gone, bound=bound, server_lag=lag)


def test_phase_percentiles_skip_preemptions_that_did_not_reach_a_phase():
    ts = [timing("a", bound=1.0), timing("b", bound=3.0), timing("c", bound=None)]
    got = measure.phase_percentiles(ts)
    assert got["bound"]["p50"] == 2.0
    assert got["nominated"] == {"p50": 0.01, "p90": 0.01, "p99": 0.01}
    assert got["gone_to_bound"]["p50"] == pytest.approx(0.9)  # (1.0 - 1.1, 3.0 - 1.1): median 0.9
    assert set(got) == {"nominated", "victims_deleting", "victims_gone", "bound", "gone_to_bound"}


# -- reading the history ------------------------------------------------------------------

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pod(name, uid, priority, node="", nominated="", deleting=False, phase="Pending"):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, uid=uid, creation_timestamp=T,
                                     deletion_timestamp=T if deleting else None),
        spec=client.V1PodSpec(priority=priority, node_name=node or None, containers=[client.V1Container(
            name="c", resources=client.V1ResourceRequirements(requests={SLOT: "1"}))]),
        status=client.V1PodStatus(phase=phase, nominated_node_name=nominated or None))


def event(name, reason, about, message="", at=None):
    return client.CoreV1Event(metadata=client.V1ObjectMeta(name=name), reason=reason, message=message,
                              involved_object=client.V1ObjectReference(name=about), event_time=at)


def recorded_wave() -> PodLog:
    log = PodLog()
    clock = iter([100.0, 100.2, 100.3, 100.4, 101.5, 101.6, 101.7])
    with mock.patch("harness.run.pods.history.time.time", side_effect=lambda: next(clock)):
        log.add("ADDED", pod("low-1", "u-l", 100, node="n1", phase="Running"))                 # 100.0
        log.add("ADDED", pod("high-1", "u-h", 1000))                                          # 100.2
        log.add("MODIFIED", pod("high-1", "u-h", 1000, nominated="n1"))                       # 100.3
        log.add("MODIFIED", pod("low-1", "u-l", 100, node="n1", phase="Running", deleting=True))  # 100.4
        log.add("DELETED", pod("low-1", "u-l", 100, node="n1", phase="Running", deleting=True))   # 101.5
        log.add("MODIFIED", pod("high-1", "u-h", 1000, node="n1", nominated="n1"))              # 101.6
        log.add("MODIFIED", pod("high-1", "u-h", 1000, node="n1", phase="Running"))             # 101.7
    log.add_event("ADDED", event("low-1.1", "Preempted", "low-1", "Preempted by pod u-h on node n1"))
    scheduled_at = datetime.fromtimestamp(101.59, tz=timezone.utc)
    log.add_event("ADDED", event("high-1.1", "Scheduled", "high-1", "Successfully assigned", scheduled_at))
    return log


def test_a_recorded_wave_gives_its_figures_and_a_clean_outcome():
    log = recorded_wave()
    ts = measure.wave_timings(log, ["high-1"])
    figures = measure.wave_figures(log, ["high-1"], ts)
    assert figures["preempted"] == 1 and figures["bound"] == 1
    assert figures["wave_seconds"] == pytest.approx(1.4)
    assert figures["throughput"] == pytest.approx(1 / 1.4)
    assert figures["phases"]["nominated"]["p50"] == pytest.approx(0.1)
    assert figures["phases"]["victims_gone"]["p99"] == pytest.approx(1.3)
    assert figures["bind_lag_median"] == pytest.approx(0.01, abs=1e-3)
    facts = measure.facts(log)
    assert facts["high-1"].running and facts["low-1"].gone and facts["low-1"].priority == 100
    assert facts["high-1"].slots == 1
    assert problems(["high-1"], facts, ts) == []
    assert measure.wait_settled(log, ["high-1"], timeout=1, events_timeout=1) == []


# -- the outcome check ---------------------------------------------------------------------


def fact(name, priority, node="", running=False, deleting=False, gone=False):
    return PodFact(name=name, priority=priority, node=node, running=running, deleting=deleting, gone=gone, slots=1)


def good() -> tuple[dict, list]:
    facts = {"h1": fact("h1", 1000, "n1", running=True), "h2": fact("h2", 1000, "n2", running=True),
             "l1": fact("l1", 100, "n1", gone=True), "l2": fact("l2", 100, "n2", gone=True),
             "l3": fact("l3", 100, "n3", running=True)}
    return facts, [timing("h1", ("l1",)), timing("h2", ("l2",))]


def test_a_correct_wave_has_no_problem():
    facts, ts = good()
    assert problems(["h1", "h2"], facts, ts) == []


def test_a_preemptor_not_running_is_wrong():
    facts, ts = good()
    facts["h2"] = fact("h2", 1000, running=False)
    assert problems(["h1", "h2"], facts, ts) == ["1 of 2 preemptors not running at the end: h2"]


def test_a_victim_of_equal_or_higher_priority_is_wrong():
    facts, ts = good()
    facts["l1"] = fact("l1", 1000, "n1", gone=True)
    assert problems(["h1", "h2"], facts, ts) == ["h1 (priority 1000) preempted l1 of priority 1000"]


def test_binding_before_the_victim_is_gone_is_wrong():
    facts, ts = good()
    ts[0] = timing("h1", ("l1",), gone=1.5, bound=1.2)
    assert problems(["h1", "h2"], facts, ts) == ["h1 was bound 0.300 s before its victims were gone"]


def test_an_overcommitted_node_is_wrong():
    facts, ts = good()
    facts["l1"] = fact("l1", 100, "n1", deleting=True)  # still holds n1's slot while h1 runs there
    assert problems(["h1", "h2"], facts, ts) == ["1 nodes overcommitted at the end (more than 1 slot in use): n1"]


def test_extra_victims_and_deletions_nobody_names_are_wrong():
    facts, ts = good()
    facts["l3"] = fact("l3", 100, "n3", gone=True)
    ts[1] = timing("h2", ("l2", "l1"))
    got = problems(["h1", "h2"], facts, ts)
    assert "h2 preempted 2 pods (l2, l1); one frees the slot it needs" in got
    assert "1 pods preempted by more than one preemptor: l1 by h1, h2" in got
    assert "1 pods deleted that no preemption names: l3" in got


def test_running_without_preempting_on_a_full_cluster_is_wrong():
    facts, ts = good()
    assert problems(["h1", "h2"], facts, ts[:1]) == [
        "h2 runs without having preempted anyone, on a cluster with no free slot",
        "1 pods deleted that no preemption names: l2"]


# -- the scheduler's metrics ------------------------------------------------------------------

EXPOSITION = """\
# HELP scheduler_preemption_attempts_total [STABLE] Total preemption attempts in the cluster till now
# TYPE scheduler_preemption_attempts_total counter
scheduler_preemption_attempts_total {attempts}
# HELP scheduler_preemption_victims [STABLE] Number of selected preemption victims
# TYPE scheduler_preemption_victims histogram
scheduler_preemption_victims_bucket{{le="1"}} {attempts}
scheduler_preemption_victims_bucket{{le="2"}} {attempts}
scheduler_preemption_victims_bucket{{le="+Inf"}} {attempts}
scheduler_preemption_victims_sum {attempts}
scheduler_preemption_victims_count {attempts}
# HELP scheduler_framework_extension_point_duration_seconds [STABLE] Latency for running all plugins
# TYPE scheduler_framework_extension_point_duration_seconds histogram
scheduler_framework_extension_point_duration_seconds_bucket{{extension_point="PostFilter",profile="default-scheduler",status="Success",le="0.001"}} 0
scheduler_framework_extension_point_duration_seconds_bucket{{extension_point="PostFilter",profile="default-scheduler",status="Success",le="0.002"}} {half}
scheduler_framework_extension_point_duration_seconds_bucket{{extension_point="PostFilter",profile="default-scheduler",status="Success",le="0.004"}} {attempts}
scheduler_framework_extension_point_duration_seconds_bucket{{extension_point="PostFilter",profile="default-scheduler",status="Success",le="+Inf"}} {attempts}
scheduler_framework_extension_point_duration_seconds_sum{{extension_point="PostFilter",profile="default-scheduler",status="Success"}} {pf_sum}
scheduler_framework_extension_point_duration_seconds_count{{extension_point="PostFilter",profile="default-scheduler",status="Success"}} {attempts}
scheduler_framework_extension_point_duration_seconds_bucket{{extension_point="Filter",profile="default-scheduler",status="Success",le="+Inf"}} 999
scheduler_framework_extension_point_duration_seconds_sum{{extension_point="Filter",profile="default-scheduler",status="Success"}} 9
scheduler_framework_extension_point_duration_seconds_count{{extension_point="Filter",profile="default-scheduler",status="Success"}} 999
# HELP scheduler_pod_scheduling_sli_duration_seconds [BETA] E2e latency for a pod being scheduled
# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram
scheduler_pod_scheduling_sli_duration_seconds_bucket{{attempts="2",le="1.28"}} 0
scheduler_pod_scheduling_sli_duration_seconds_bucket{{attempts="2",le="2.56"}} {attempts}
scheduler_pod_scheduling_sli_duration_seconds_bucket{{attempts="2",le="+Inf"}} {attempts}
scheduler_pod_scheduling_sli_duration_seconds_sum{{attempts="2"}} {sli_sum}
scheduler_pod_scheduling_sli_duration_seconds_count{{attempts="2"}} {attempts}
# HELP scheduler_pending_pods [STABLE] Number of pending pods
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{{queue="active"}} 0
"""


def exposition(attempts: int, pf_sum: float = 0.0, sli_sum: float = 0.0) -> str:
    return EXPOSITION.format(attempts=attempts, half=attempts // 2, pf_sum=pf_sum, sli_sum=sli_sum)


def test_the_scheduler_metrics_over_a_wave_are_the_difference_of_two_scrapes():
    before = metrics.parse(exposition(10, pf_sum=0.02, sli_sum=20.0))
    after = metrics.parse(exposition(60, pf_sum=0.12, sli_sum=120.0))
    s = metrics.summary(metrics.delta(before, after))
    assert s["preemption_attempts"] == 50
    assert s["victims"] == {"count": 50, "mean": 1.0}
    pf = s["postfilter_seconds"]  # the Filter series is another extension point: not counted
    assert pf["count"] == 50 and pf["mean"] == pytest.approx(0.002)
    assert pf["p50"] == pytest.approx(0.002) and pf["p99"] == pytest.approx(0.00396)
    assert s["sli_metric"] == "scheduler_pod_scheduling_sli_duration_seconds"
    assert s["sli_seconds"]["mean"] == pytest.approx(2.0)
    assert s["attempt_seconds"] is None and s["preemption_goroutine_seconds"] is None  # not in the sample


def test_histogram_quantile_follows_prometheus():
    bs = [(0.1, 10.0), (0.2, 20.0), (float("inf"), 20.0)]
    assert metrics.histogram_quantile(0.5, bs) == pytest.approx(0.1)
    assert metrics.histogram_quantile(0.75, bs) == pytest.approx(0.15)
    # the rank in the +Inf bucket: the highest finite bound, "at least this"
    assert metrics.histogram_quantile(0.99, [(0.1, 1.0), (float("inf"), 100.0)]) == 0.1
    assert metrics.histogram_quantile(0.5, [(0.1, 0.0), (float("inf"), 0.0)]) is None


def test_an_older_release_s_scheduling_duration_stands_in_for_the_sli():
    text = exposition(5).replace("pod_scheduling_sli_duration", "pod_scheduling_duration")
    s = metrics.summary(metrics.parse(text))
    assert s["sli_metric"] == "scheduler_pod_scheduling_duration_seconds" and s["sli_seconds"]["count"] == 5


# -- reports ---------------------------------------------------------------------------------


def row(target="upstream@1.35", nodes=100, problems_=(), bound=(1.1, 1.2, 1.5)):
    return {"target": target, "nodes": nodes, "preemptors": 5, "problems": list(problems_), "throughput": 3.26,
            "phases": {"nominated": {"p50": 0.012, "p90": 0.02, "p99": 0.031},
                       "victims_deleting": {"p50": 0.015, "p90": 0.025, "p99": 0.035},
                       "victims_gone": {"p50": 1.0, "p90": 1.1, "p99": 1.2},
                       "bound": dict(zip(("p50", "p90", "p99"), bound)),
                       "gone_to_bound": {"p50": 0.002, "p90": 0.004, "p99": None}},
            "bind_lag_median": 0.004,
            "scheduler": metrics.summary(metrics.delta(metrics.parse(exposition(0)),
                                                       metrics.parse(exposition(5, 0.01, 6.0))))}


def test_the_table_gives_each_wave_its_outcome_and_phases_in_ms():
    lines = report.table([row(), row(nodes=1000, problems_=["h1 was bound before ..."])])
    assert lines[0].split()[:5] == ["target", "nodes", "M", "outcome", "preempt/s"]
    assert lines[2].split() == ["upstream@1.35", "100", "5", "ok", "3.3", "12/20/31", "15/25/35",
                                "1000/1100/1200", "1100/1200/1500", "2/4/-", "4"]
    assert lines[3].split()[3] == "WRONG"
    assert report.problem_lines([row(nodes=1000, problems_=["x"])]) == ["[upstream@1.35 at 1000 nodes] x"]


def test_the_scheduler_table_shows_its_metrics_or_why_there_are_none():
    bad = {**row(), "scheduler": {"error": "ConnectionRefusedError: refused"}}
    lines = report.scheduler_table([row(), bad])
    assert lines[2].split() == ["upstream@1.35", "100", "5", "1.00", "2/4", "-/-", "1920/2547", "1100/1500"]
    assert "not scraped: ConnectionRefusedError: refused" in lines[3]


def test_an_error_row_is_reported_as_error():
    r = {"target": "plugins@1.35", "nodes": 100, "preemptors": 5, "error": "timed out"}
    assert report.outcome(r) == "ERROR"
    assert report.table([r])[2].split()[:4] == ["plugins@1.35", "100", "5", "ERROR"]
    assert report.problem_lines([r]) == ["[plugins@1.35 at 100 nodes] timed out"]


def test_the_json_file_holds_every_row_and_the_run_s_details(tmp_path):
    rows = [row(), row(nodes=1000)]
    path = report.write_json(rows, tmp_path / "bench", {"command": "./kit bench preemption"})
    data = json.loads(path.read_text())
    assert path.name == "preemption.json" and data["command"] == "./kit bench preemption"
    assert data["rows"] == rows


def test_the_plot_is_a_png(tmp_path):
    rows = [row(), row(nodes=1000, bound=(1.3, 1.4, 2.0)), row(target="plugins@1.35"),
            row(target="plugins@1.35", nodes=1000, problems_=["wrong"]),
            {"target": "upstream@1.37", "nodes": 100, "preemptors": 5, "error": "no cluster"}]
    path = report.plot(rows, tmp_path)
    assert path.name == "preemption.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- workload bodies and readiness ---------------------------------------------------------------


def test_pods_need_one_slot_of_this_run_s_nodes():
    body = pod_body("low-00001", "low", "bench-low", 1, "run-1")
    c = body["spec"]["containers"][0]
    assert c["resources"] == {"requests": {SLOT: "1"}, "limits": {SLOT: "1"}}
    assert body["spec"]["terminationGracePeriodSeconds"] == 1 and body["spec"]["priorityClassName"] == "bench-low"
    assert list(body["spec"]["nodeSelector"].values()) == ["run-1"]


def test_readiness_is_read_from_the_api_s_json():
    assert running({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}, "metadata": {}})
    assert not running({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"},
                        "metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}, "spec": {}}
    assert node_ready(ready)
    assert not node_ready({**ready, "spec": {"taints": [{"key": "node.kubernetes.io/not-ready"}]}})


# -- options and targets -------------------------------------------------------------------------


def args(**kw) -> Namespace:
    return Namespace(**{"targets": None, "scheduler": None, "k8s_version": None, **kw})


def test_targets_default_to_both_builds_on_the_default_release_and_upstream_on_the_newest():
    from harness.build import pins

    newest = [r for r in pins.releases() if not pins.prerelease(r)][-1]  # 1.38 is a preview
    want = [f"plugins@{DEFAULT_RELEASE}", f"upstream@{DEFAULT_RELEASE}"]
    assert targets(args()) == want + ([f"upstream@{newest}"] if newest != DEFAULT_RELEASE else [])
    assert targets(args(scheduler="upstream")) == [f"upstream@{DEFAULT_RELEASE}"]
    assert targets(args(targets="upstream,upstream@1.34")) == [f"upstream@{DEFAULT_RELEASE}", "upstream@1.34"]


def test_bad_targets_are_one_message():
    with pytest.raises(KitError, match="leave out --scheduler"):
        targets(args(targets="upstream", scheduler="plugins"))
    with pytest.raises(KitError, match="no Kubernetes release 9.99"):
        targets(args(scheduler="upstream", k8s_version="9.99"))
    with pytest.raises(KitError, match="--scheduler"):
        targets(args(scheduler="nope"))
    with pytest.raises(KitError, match="node counts"):
        sizes("100,x")


def test_a_usage_error_is_one_line_and_starts_nothing(capsys):
    with mock.patch("harness.bench.preemption.run_target") as run:
        assert main(["--nodes", "10", "--preemptors", "50"]) == 2
    run.assert_not_called()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--preemptors: between 1 and the smallest cluster's 10 nodes" in err
