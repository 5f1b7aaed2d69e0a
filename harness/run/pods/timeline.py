"""A pod scenario run as a picture: one row per pod, what the cluster showed over wall time
(pending, nominated, running, terminating, gone, evicted; the node as a label), and beneath each
row a thin bar of what the model predicted for that pod at each step.

Read from the recorded history (``run.pods.history``: every version the watch delivered, with
when it arrived), so who was nominated when, how long a victim terminated and when the preemptor
was bound show without reconstructing them from timestamps. Drawn with matplotlib's Agg canvas
and no pyplot: scenario runs draw from threads of their own, and pyplot's global state is not
safe there. matplotlib is imported only when a picture is drawn.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Iterable, Sequence

STATES = ("pending", "nominated", "running", "terminating", "gone", "evicted", "rejected")
COLOURS = {"pending": "#c9c9c9", "nominated": "#f2a93b", "running": "#3c9a5f", "terminating": "#d9534f",
           "gone": "#efefef", "evicted": "#7b4fa0", "rejected": "#555555"}
FILE = "timeline.png"
ERROR_FILE = "timeline-error.txt"


@dataclass(frozen=True)
class Segment:
    pod: str
    state: str
    node: str
    start: float  # seconds since the timeline's start
    end: float


def state_of(kind: str, pod) -> tuple[str, str]:
    """(state, node) of one recorded version of a pod (a kubernetes V1Pod)."""
    spec, status = pod.spec, pod.status
    node = (spec.node_name if spec else None) or ""
    nominated = (status.nominated_node_name if status else None) or ""
    if kind == "DELETED":
        return "gone", node
    if status is not None and status.phase == "Failed":
        return "evicted", node
    if pod.metadata.deletion_timestamp is not None:
        return "terminating", node
    if node:
        return "running", node
    if nominated:
        return "nominated", nominated
    return "pending", ""


def segments(versions: Sequence, start: float, end: float) -> list[Segment]:
    """Each pod's states as spans of time: a version holds from its arrival to the pod's next
    version's (or ``end``); equal neighbours are one span. ``versions`` are history Versions."""
    by_pod: dict[str, list] = {}
    for v in versions:
        by_pod.setdefault(v.pod.metadata.name, []).append(v)
    out: list[Segment] = []
    for name, vs in by_pod.items():
        for i, v in enumerate(vs):
            state, node = state_of(v.kind, v.pod)
            until = vs[i + 1].seen_at if i + 1 < len(vs) else end
            s = Segment(name, state, node, v.seen_at - start, until - start)
            if out and out[-1].pod == name and (out[-1].state, out[-1].node) == (state, node):
                out[-1] = Segment(name, state, node, out[-1].start, s.end)
            else:
                out.append(s)
    return out


def predicted_state(view) -> tuple[str, str]:
    """(state, node) of the model's PodView, in the timeline's states."""
    if view.phase == "pending" and view.nominated:
        return "nominated", view.nominated
    return (view.phase if view.phase in COLOURS else "pending"), view.node


def pods_in_order(versions: Sequence, steps: Iterable) -> list[str]:
    """The rows: pods in the order the cluster first showed them, then pods only the model has."""
    names = list(dict.fromkeys(v.pod.metadata.name for v in versions))
    for s in steps:
        names += [n for n in sorted(set(s.predicted) | set(s.observed)) if n not in names]
    return names


LABEL_STEP = 0.35  # rows a step label moves up when it would overprint the one before


def label_levels(xs: Sequence[float], span: float, width: float = 0.14, levels: int = 3) -> list[int]:
    """The height of each step's label: a label that starts within ``width`` of the span of the
    previous one goes one level up (cycling over ``levels``), so steps seconds apart stay legible."""
    out: list[int] = []
    for i, x in enumerate(xs):
        out.append((out[-1] + 1) % levels if i and x - xs[i - 1] < span * width else 0)
    return out


def predicted_spans(step, s_start: float, s_end: float, origin: float) -> list[tuple[str, str, str, float, float]]:
    """(pod, state, node, from, to) of the model's prediction over one step, in seconds since
    ``origin``: at the moments the model puts each change (``step.course``, from the action on),
    else the settled prediction over the whole step."""
    course = list(getattr(step, "course", None) or [])
    acted = getattr(step, "acted_at", None)
    if not course or acted is None:
        course, acted = [(0.0, step.predicted)], step.started_at
    out = []
    for k, (offset, views) in enumerate(course):
        left = s_start if k == 0 else min(max(acted + offset - origin, s_start), s_end)
        right = s_end if k + 1 == len(course) else min(max(acted + course[k + 1][0] - origin, s_start), s_end)
        if right <= left:
            continue
        for name, view in views.items():
            state, node = predicted_state(view)
            out.append((name, state, node, left, right))
    return out


def draw(versions: Sequence, steps: Sequence = (), title: str = "", end: float | None = None) -> bytes:
    """The timeline as PNG bytes. ``steps`` are the run's StepRecords; those with a start time get
    the model's prediction drawn under each pod, and a mark where it differs from the cluster."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    times = [v.seen_at for v in versions] + [t for s in steps for t in (s.started_at, s.ended_at) if t is not None]
    if not times:
        raise ValueError("nothing recorded: no pod version and no timed step")
    start = min(times)
    end = max(times + ([end] if end is not None else [])) + 1.0  # the last state stays visible
    names = pods_in_order(versions, steps)
    row = {n: i for i, n in enumerate(names)}
    span = end - start

    fig = Figure(figsize=(11, 1.6 + 0.55 * max(len(names), 1)), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for seg in segments(versions, start, end):
        y = row[seg.pod]
        ax.barh(y, seg.end - seg.start, left=seg.start, height=0.5, color=COLOURS[seg.state],
                edgecolor="#777" if seg.state == "gone" else "none", linewidth=0.5)
        if seg.node and seg.state != "gone" and seg.end - seg.start > span * 0.06:
            ax.text(seg.start + (seg.end - seg.start) / 2, y, seg.node, ha="center", va="center", fontsize=8,
                    color="white" if seg.state in ("running", "evicted", "terminating", "rejected") else "black")
    timed = [s for s in steps if s.started_at is not None]
    levels = label_levels([s.started_at - start for s in timed], span)
    for i, s in enumerate(timed):
        s_start = s.started_at - start
        s_end = (timed[i + 1].started_at if i + 1 < len(timed) else (s.ended_at or end)) - start
        ax.axvline(s_start, color="#1f3b57", linestyle="--", linewidth=0.8)
        ax.text(s_start, -0.9 - LABEL_STEP * levels[i], f" step {s.index}: {s.action}", fontsize=8,
                color="#1f3b57", va="bottom")
        wrong = {m.pod for m in s.mismatches}
        for name, state, node, left, right in predicted_spans(s, s_start, s_end, start):
            y = row[name] + 0.38
            ax.barh(y, right - left, left=left, height=0.16, color=COLOURS[state], edgecolor="#444", linewidth=0.3)
        for name in wrong & set(s.predicted):
            ax.plot([s_end], [row[name] + 0.38], marker="X", color="#b42318", markersize=9)
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.3, -1.0 - LABEL_STEP * max(levels + [0]))
    ax.set_xlim(0, span)
    ax.set_xlabel("seconds since the first recorded pod version")
    ax.grid(axis="x", color="#eee")
    ax.set_axisbelow(True)
    handles = [Patch(color=COLOURS[s], label=s) for s in STATES]
    handles.append(Patch(facecolor="white", edgecolor="#444", label="thin bar: the model's prediction"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14 - 0.4 / max(len(names), 1)),
              ncol=5, fontsize=8, frameon=False)
    if title:
        ax.set_title(title + ("  (X: the model predicted otherwise)" if any(s.mismatches for s in steps) else ""),
                     fontsize=10)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def files(versions: Sequence, steps: Sequence = (), title: str = "") -> dict[str, str | bytes]:
    """The artifact to write: the picture, or why it could not be drawn. A picture is never worth
    a verdict, so any error in drawing becomes the text file instead."""
    import traceback

    try:
        return {FILE: draw(versions, steps, title)}
    except Exception:
        return {ERROR_FILE: "the timeline could not be drawn:\n" + traceback.format_exc()}


__all__ = ["COLOURS", "ERROR_FILE", "FILE", "STATES", "Segment", "draw", "files", "label_levels", "predicted_spans",
           "segments", "state_of"]
