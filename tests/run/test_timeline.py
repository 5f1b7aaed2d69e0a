"""A scenario run's timeline picture (harness.run.pods.timeline), from a synthetic history: the states
read off each pod version, the spans they make, a PNG with the model's prediction beside them,
and a drawing error that becomes a text file rather than a changed verdict."""

from __future__ import annotations

import struct
from datetime import datetime, timezone

import pytest
from kubernetes import client

from harness.run.pods import timeline
from harness.run.pods.expectation import Mismatch
from harness.run.pods.history import PodLog, Version
from harness.run.pods.result import StepRecord
from reference.scheduler import PodView

T0 = 1_800_000_000.0


def v1pod(name: str, node: str = "", nominated: str = "", deleting: bool = False, phase: str = "Pending"):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, namespace="ns",
                                     deletion_timestamp=datetime(2027, 1, 1, tzinfo=timezone.utc) if deleting else None),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="pause")], node_name=node or None),
        status=client.V1PodStatus(phase=phase, nominated_node_name=nominated or None))


def history() -> PodLog:
    """A preemption as the watch records it: the victim runs, the preemptor is nominated, the
    victim terminates for 5 s and goes, the preemptor is bound; a second pod is evicted."""
    log = PodLog()
    at = [(0.0, "ADDED", v1pod("victim", "n1", phase="Running")),
          (0.5, "ADDED", v1pod("other", "n2", phase="Running")),
          (1.0, "ADDED", v1pod("preemptor")),
          (1.4, "MODIFIED", v1pod("preemptor", nominated="n1")),
          (1.5, "MODIFIED", v1pod("victim", "n1", deleting=True, phase="Running")),
          (6.5, "DELETED", v1pod("victim", "n1", deleting=True, phase="Running")),
          (7.0, "MODIFIED", v1pod("preemptor", "n1", nominated="n1")),
          (7.5, "MODIFIED", v1pod("preemptor", "n1", phase="Running")),
          (9.0, "MODIFIED", v1pod("other", "n2", phase="Failed"))]
    for i, (t, kind, pod) in enumerate(at):
        log.versions.append(Version(i, kind, pod, T0 + t))
    return log


def steps() -> list[StepRecord]:
    predicted = {"victim": PodView("gone", preempted=True), "preemptor": PodView("running", "n1"),
                 "other": PodView("running", "n2")}
    observed = dict(predicted, other=PodView("evicted", "n2"))
    return [StepRecord(0, "createPod", predicted, observed, [Mismatch("other", "phase", "running", "evicted")], [],
                       [], started_at=T0 + 0.9, ended_at=T0 + 10.0)]


def test_each_version_reads_as_one_state_on_its_node():
    pods = {v.seq: timeline.state_of(v.kind, v.pod) for v in history().versions}
    assert [pods[i] for i in range(9)] == [
        ("running", "n1"), ("running", "n2"), ("pending", ""), ("nominated", "n1"), ("terminating", "n1"),
        ("gone", "n1"), ("running", "n1"), ("running", "n1"), ("evicted", "n2")]


def test_versions_make_spans_and_equal_neighbours_merge():
    segs = timeline.segments(history().versions, T0, T0 + 12.0)
    victim = [(s.state, round(s.start, 3), round(s.end, 3)) for s in segs if s.pod == "victim"]
    assert victim == [("running", 0.0, 1.5), ("terminating", 1.5, 6.5), ("gone", 6.5, 12.0)]
    preemptor = [(s.state, s.node, round(s.start, 3), round(s.end, 3)) for s in segs if s.pod == "preemptor"]
    # Bound, then Running: one span on n1, not two.
    assert preemptor == [("pending", "", 1.0, 1.4), ("nominated", "n1", 1.4, 7.0), ("running", "n1", 7.0, 12.0)]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_the_picture_is_a_png_with_a_row_per_pod(tmp_path):
    data = timeline.draw(history().versions, steps(), "preempt-basic [plugins, Kubernetes 1.35]")
    width, height = png_size(data)
    assert width == 1100 and height > 200
    (tmp_path / timeline.FILE).write_bytes(data)
    assert timeline.pods_in_order(history().versions, steps()) == ["victim", "other", "preemptor"]


def test_a_drawing_error_is_a_text_file_not_an_exception():
    out = timeline.files([], [], "nothing")
    assert list(out) == [timeline.ERROR_FILE] and "nothing recorded" in out[timeline.ERROR_FILE]


def test_a_failing_run_s_artifacts_include_its_timeline(tmp_path, monkeypatch):
    """archive.keep_failure, without a cluster: the picture beside the report."""
    from harness.formats.pods import load
    from harness.formats.catalogue import CATALOGUES
    from harness.run.pods import archive
    from harness.run.pods.result import Result

    s = load(CATALOGUES["pods"] / "preempt-basic.yaml")
    where = archive.Archive(tmp_path, "plugins", s.id, "1.35")
    recorded = history()
    recorded.events = lambda: []
    kube = type("K", (), {"api": client.ApiClient()})()
    names = type("N", (), {"mentions": staticmethod(lambda line: True)})()
    result = Result(s, "plugins", steps())
    archive.keep_failure(where, result, recorded, kube, names)
    d = tmp_path / "plugins" / "preempt-basic"
    assert result.artifacts == d
    assert png_size((d / timeline.FILE).read_bytes())[0] == 1100 and (d / "report.txt").exists()

    monkeypatch.setattr(timeline, "draw", lambda *a, **k: 1 / 0)
    archive.keep_failure(where, result, recorded, kube, names)  # the picture fails: the rest is written all the same
    assert "ZeroDivisionError" in (d / timeline.ERROR_FILE).read_text()


@pytest.mark.parametrize("phase, nominated, state", [("pending", "n2", "nominated"), ("gone", "", "gone"),
                                                      ("rejected", "", "rejected"), ("running", "", "running")])
def test_the_model_s_views_read_as_timeline_states(phase, nominated, state):
    assert timeline.predicted_state(PodView(phase, nominated=nominated))[0] == state


def test_the_model_s_bars_change_at_the_moments_the_model_predicts():
    """A victim the model knows gone only 40 s after the action was drawn gone from the step's
    start: its thin bar now shows it terminating until then."""
    step = StepRecord(0, "createPod", {"victim": PodView("gone", preempted=True)}, {}, [], [], [],
                      started_at=T0, ended_at=T0 + 50.0, acted_at=T0 + 1.0,
                      course=[(0.0, {"victim": PodView("terminating", "n1")}), (40.0, {"victim": PodView("gone")})])
    spans = [(state, round(a, 1), round(b, 1)) for _, state, _, a, b in timeline.predicted_spans(step, 0.0, 50.0, T0)]
    assert spans == [("terminating", 0.0, 41.0), ("gone", 41.0, 50.0)]
    # Without a course (an older record), the settled prediction over the whole step, as before.
    plain = StepRecord(0, "createPod", {"victim": PodView("gone")}, {}, [], [], [], started_at=T0, ended_at=T0 + 5)
    assert [(s, a, b) for _, s, _, a, b in timeline.predicted_spans(plain, 0.0, 5.0, T0)] == [("gone", 0.0, 5.0)]


def test_step_labels_seconds_apart_do_not_overprint():
    assert timeline.label_levels([0.0, 1.0, 2.0, 30.0, 31.0], span=100.0) == [0, 1, 2, 0, 1]
    assert timeline.label_levels([0.0, 50.0], span=100.0) == [0, 0]
