"""Collecting a campaign: each pod's state, its results copied out as it finishes, and the merge."""

from __future__ import annotations

import base64
import io
import json
import tarfile

import pytest

from tests.campaign.fakes import FakeCluster, PLAN, _archive, _pod, _shard_folder
from harness.campaign import collect, run
from harness.errors import KitError


def test_a_pod_s_state_says_what_the_collector_does_next():
    assert collect.state(_pod(0, ready=True)) == collect.PodState("campaign-0-x", 1, "w1", "ready")
    assert collect.state(_pod(1)).kind == "running"
    pending = collect.state(_pod(2, phase="Pending", node=""))
    assert (pending.kind, pending.detail, pending.shard) == ("pending", "not scheduled: 0/4 nodes are available", 3)
    stuck = collect.state(_pod(0, phase="Pending", waiting="ErrImageNeverPull"))
    assert (stuck.kind, stuck.detail) == ("stuck", "ErrImageNeverPull: not present")
    ended = collect.state(_pod(0, phase="Failed", terminated=(137, "OOMKilled")))
    assert (ended.kind, ended.detail) == ("ended", "container exited 137 (OOMKilled)")
    evicted = collect.state(_pod(0, phase="Failed", reason="Evicted"))
    assert evicted.detail == "Evicted"


def test_unpack_takes_plain_files_and_refuses_what_would_land_elsewhere(tmp_path):
    (tmp_path / "pod" / "artifacts").mkdir(parents=True)
    (tmp_path / "pod" / "artifacts" / "junit.xml").write_text("<testsuites/>")
    (tmp_path / "pod" / "exit-code").write_text("0\n")
    assert collect.unpack(_archive(tmp_path / "pod"), tmp_path / "shard-1") == ["artifacts/junit.xml", "exit-code"]
    assert (tmp_path / "shard-1" / "exit-code").read_text() == "0\n"
    for name, kind in (("../evil", tarfile.REGTYPE), ("link", tarfile.SYMTYPE)):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, "/etc/passwd"
            tar.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
        with pytest.raises(KitError, match="not a plain file or folder inside the results: refused"):
            collect.unpack(base64.b64encode(buf.getvalue()).decode(), tmp_path / "shard-2")
    assert not (tmp_path / "evil").exists()
    with pytest.raises(KitError, match="not base64"):
        collect.unpack("not base64!", tmp_path / "shard-3")


def test_ready_shards_are_collected_as_they_finish_and_merged_into_one_report(tmp_path, fast, monkeypatch, capsys):
    folders = {f"campaign-{i - 1}-x": _shard_folder(tmp_path, i, 3, {f"test_scenario[upstream-s{i}]": ""}, 0)
               for i in (1, 2, 3)}
    folders["campaign-2-x"] = _shard_folder(tmp_path / "b", 3, 3, {
        "test_scenario[upstream-s3]": '<failure message="s3: differs from the model">table</failure>'}, 1)
    cluster = FakeCluster([[_pod(0, ready=True), _pod(1), _pod(2, phase="Pending", node="")],
                           [_pod(0, ready=True), _pod(1, ready=True), _pod(2)],
                           [_pod(1, ready=True), _pod(2, ready=True)]], folders)
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    outcome = run.wait_and_collect(cluster, PLAN, tmp_path / "out", timeout=60)
    assert sorted(outcome.shards) == [1, 2, 3] and cluster.collected == ["campaign-0-x", "campaign-1-x", "campaign-2-x"]
    assert outcome.shards[3].exit_code == 1 and outcome.shards[1].folder == tmp_path / "out" / "shard-1"
    code = run.report(outcome, tmp_path / "out", 3)
    printed = capsys.readouterr().out
    assert code == 1  # a failed test, as `./kit merge` exits
    assert "shard 3/3: pod campaign-2-x on w1: the suite exited 1; results in " in printed
    assert "FAILED conformance.test_scenarios::test_scenario[upstream-s3] - s3: differs from the model" in printed
    assert "1 failed, 2 passed (over 3 JUnit file(s); merged in " in printed
    assert (tmp_path / "out" / "merged" / "junit.xml").is_file()
    assert json.loads((tmp_path / "out" / "campaign.json").read_text())["3"]["exit_code"] == 1


def test_a_shard_lost_before_collection_is_named_and_the_merge_says_it_is_missing(tmp_path, fast, monkeypatch, capsys):
    folders = {f"campaign-{i - 1}-x": _shard_folder(tmp_path, i, 3, {f"test_scenario[upstream-s{i}]": ""}, 0)
               for i in (1, 2)}
    cluster = FakeCluster([[_pod(0, ready=True), _pod(1, ready=True), _pod(2, phase="Failed", terminated=(137, "OOMKilled"))]],
                          folders)
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    outcome = run.wait_and_collect(cluster, PLAN, tmp_path / "out", timeout=60)
    assert outcome.shards[3].lost == "container exited 137 (OOMKilled)"
    assert run.report(outcome, tmp_path / "out", 3) == 1
    printed = capsys.readouterr()
    assert "shard 3/3: pod campaign-2-x on w1: LOST, container exited 137 (OOMKilled)" in printed.out
    assert "conformance: shard(s) 3/3 missing" in printed.out
    # Its last lines, which the kubelet keeps after the container ended, say what happened.
    assert ("pod campaign-2-x (shard 3, node w1) ended before its results were collected: container exited 137 "
            "(OOMKilled); its last lines:\nKilled") in printed.err


def test_all_shards_green_merge_to_exit_zero(tmp_path, fast, monkeypatch, capsys):
    folders = {f"campaign-{i - 1}-x": _shard_folder(tmp_path, i, 3, {f"test_scenario[upstream-s{i}]": ""}, 0)
               for i in (1, 2, 3)}
    cluster = FakeCluster([[_pod(i, ready=True) for i in range(3)]], folders)
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    assert run.report(run.wait_and_collect(cluster, PLAN, tmp_path / "out", 60), tmp_path / "out", 3) == 0
    assert "3 passed (over 3 JUnit file(s)" in capsys.readouterr().out


def test_a_pod_that_cannot_start_stops_the_campaign_naming_it(tmp_path, fast):
    cluster = FakeCluster([[_pod(0, phase="Pending", waiting="ErrImageNeverPull")]], {})
    with pytest.raises(KitError, match=r"pod campaign-0-x \(shard 1, node w1\) cannot start: ErrImageNeverPull.*"
                                       r"was the runner image loaded into that node\?"):
        run.wait_and_collect(cluster, PLAN, tmp_path / "out", 60)


def test_a_campaign_past_its_timeout_names_the_pods_still_at_work(tmp_path, fast, monkeypatch):
    clock = iter(range(0, 10_000, 50))
    monkeypatch.setattr(run.time, "monotonic", lambda: next(clock))
    cluster = FakeCluster([[_pod(0), _pod(1)]], {})
    with pytest.raises(KitError, match=r"did not finish within 2 min: pod campaign-0-x \(shard 1, node w1\) running; "
                                       r"pod campaign-1-x \(shard 2, node w1\) running; 1 pod\(s\) not created"):
        run.wait_and_collect(cluster, PLAN, tmp_path / "out", timeout=120)


def test_an_index_the_job_failed_with_no_pod_left_is_lost(tmp_path, fast, monkeypatch):
    folders = {"campaign-0-x": _shard_folder(tmp_path, 1, 3, {"test_scenario[upstream-s1]": ""}, 0)}
    cluster = FakeCluster([[_pod(0, ready=True)]], folders, failed_indexes="1-2")
    monkeypatch.setattr(collect, "exec_in", cluster.exec_in)
    outcome = run.wait_and_collect(cluster, PLAN, tmp_path / "out", 60)
    assert outcome.shards[2].lost == outcome.shards[3].lost == "the Job marked this shard failed and its pod is gone"


def test_no_results_at_all_is_one_error(tmp_path):
    outcome = run.Outcome({1: run.Shard(1, "p", "w1", lost="Evicted")})
    with pytest.raises(KitError, match="no shard's results came back"):
        run.report(outcome, tmp_path, 1)


# --- nodes --------------------------------------------------------------------------
