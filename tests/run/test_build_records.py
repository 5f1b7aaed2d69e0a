"""A cold run's split: each build the kit makes is recorded as data, and a run's summary keeps
those that ended during it (harness.build.toolchain.record_build, harness.run.summary.builds_since)."""

from __future__ import annotations

from harness.build import toolchain
from harness.run import summary


def test_a_run_keeps_the_builds_that_ended_during_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIORITYKIT_CACHE", str(tmp_path))
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / toolchain.BUILDS_RECORD).write_text(
        '{"module": "old", "binaries": [], "seconds": 1, "downloads": 0, "packages": 0, '
        '"finished": "2020-01-01T00:00:00+00:00"}\n{"half')
    started = summary.now()
    toolchain.record_build("k8s-1.35", ["kube-scheduler"], 95.04, 12, 800)
    builds = summary.builds_since(started)
    assert [b["module"] for b in builds] == ["k8s-1.35"]
    assert builds[0] == {**builds[0], "binaries": ["kube-scheduler"], "seconds": 95.0, "downloads": 12, "packages": 800}
