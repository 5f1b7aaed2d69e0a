"""The benchmark's results as people and programs read them: two text tables, a JSON file, a plot.

A row is one wave: one target (build@release) at one cluster size, as a dict (the JSON's record).
Times in the tables are milliseconds; in the JSON, seconds as measured.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

JSON_FILE = "preemption.json"
PLOT_FILE = "preemption.png"
PHASE_HEADS = (("nominated", "nominated"), ("victims_deleting", "deleting"), ("victims_gone", "gone"),
               ("bound", "bound"), ("gone_to_bound", "gone→bound"))


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def triple(p: dict | None) -> str:
    p = p or {}
    return "/".join(ms(p.get(k)) for k in ("p50", "p90", "p99"))


def estimate(h: dict | None, key: str) -> str:
    """A histogram figure in ms; "≥" when the estimate is the highest finite bucket (it may be more)."""
    if not h or h.get(key) is None:
        return "-"
    v = h[key]
    capped = key != "mean" and h.get("top") is not None and math.isclose(v, h["top"])
    return ("≥" if capped else "") + ms(v)


def outcome(row: dict) -> str:
    if row.get("error"):
        return "ERROR"
    return "WRONG" if row.get("problems") else "ok"


def _render(heads: list[str], lines: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(ln[i]) for ln in lines)) if lines else len(h) for i, h in enumerate(heads)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [fmt(heads), fmt(["-" * w for w in widths])] + [fmt(ln) for ln in lines]


def table(rows: list[dict]) -> list[str]:
    """The kit's clock: throughput and each phase's p50/p90/p99 from the preemptor's creation."""
    heads = ["target", "nodes", "M", "outcome", "preempt/s"] + [f"{h} p50/90/99 ms" for _, h in PHASE_HEADS] \
        + ["watch lag ms"]
    lines = []
    for r in rows:
        phases = r.get("phases") or {}
        tp = r.get("throughput")
        lines.append([r["target"], str(r["nodes"]), str(r["preemptors"]), outcome(r),
                      "-" if tp is None else f"{tp:.1f}"]
                     + [triple(phases.get(key)) for key, _ in PHASE_HEADS] + [ms(r.get("bind_lag_median"))])
    return _render(heads, lines)


def scheduler_table(rows: list[dict]) -> list[str]:
    """The scheduler's own metrics over each wave, beside the kit's figures."""
    heads = ["target", "nodes", "attempts", "victims/attempt", "PostFilter ms mean/p99",
             "attempt ms p50/p99", "SLI ms p50/p99", "kit bound p50/p99"]
    lines = []
    for r in rows:
        s = r.get("scheduler") or {}
        bound = (r.get("phases") or {}).get("bound") or {}
        if s.get("error"):
            lines.append([r["target"], str(r["nodes"]), f"not scraped: {s['error']}", "", "", "", "",
                          f"{ms(bound.get('p50'))}/{ms(bound.get('p99'))}"])
            continue
        victims = s.get("victims") or {}
        pf, at, sli = s.get("postfilter_seconds"), s.get("attempt_seconds"), s.get("sli_seconds")
        lines.append([r["target"], str(r["nodes"]),
                      "-" if s.get("preemption_attempts") is None else str(s["preemption_attempts"]),
                      "-" if victims.get("mean") is None else f"{victims['mean']:.2f}",
                      f"{estimate(pf, 'mean')}/{estimate(pf, 'p99')}",
                      f"{estimate(at, 'p50')}/{estimate(at, 'p99')}",
                      f"{estimate(sli, 'p50')}/{estimate(sli, 'p99')}",
                      f"{ms(bound.get('p50'))}/{ms(bound.get('p99'))}"])
    return _render(heads, lines)


def brief(row: dict) -> str:
    """One wave in a progress line."""
    bound = (row.get("phases") or {}).get("bound") or {}
    tp = row.get("throughput")
    return (f"{row['nodes']} nodes, {row['preemptors']} preemptors: {outcome(row)}, "
            f"{'-' if tp is None else f'{tp:.1f}'} preemptions/s, created to bound p50 {ms(bound.get('p50'))} ms, "
            f"p99 {ms(bound.get('p99'))} ms")


def problem_lines(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        for p in ([r["error"]] if r.get("error") else []) + list(r.get("problems") or []):
            out.append(f"[{r['target']} at {r['nodes']} nodes] {p}")
    return out


def write_json(rows: list[dict], out: Path, meta: dict) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / JSON_FILE
    path.write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    return path


def plot(rows: list[dict], out: Path) -> Path:
    """Created-to-bound latency (p50 and p99) and throughput against node count, one line per target.
    A WRONG or failed wave is drawn as a red cross: its figure is not a result."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(14, 4.4), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3)
    panels = (("created → bound, p50", lambda r: _phase(r, "p50"), "ms"),
              ("created → bound, p99", lambda r: _phase(r, "p99"), "ms"),
              ("throughput", lambda r: r.get("throughput"), "preemptions / s"))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    sizes = sorted({r["nodes"] for r in rows})
    for ax, (title, value, unit) in zip(axes, panels):
        for target in targets:
            mine = sorted((r for r in rows if r["target"] == target), key=lambda r: r["nodes"])
            pts = [(r["nodes"], value(r)) for r in mine if value(r) is not None]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=target)
            bad = [(r["nodes"], value(r)) for r in mine if outcome(r) != "ok" and value(r) is not None]
            if bad:
                ax.plot([x for x, _ in bad], [y for _, y in bad], linestyle="none", marker="x", color="red",
                        markersize=10, markeredgewidth=2)
        if len(sizes) > 1 and sizes[-1] / max(sizes[0], 1) >= 10:
            ax.set_xscale("log")
        ax.set_xticks(sizes, [str(s) for s in sizes])
        ax.set_title(title)
        ax.set_xlabel("nodes (one low-priority pod each)")
        ax.set_ylabel(unit)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    preemptors = sorted({r["preemptors"] for r in rows})
    axes[0].legend(fontsize=8)
    fig.suptitle(f"preemption benchmark: a wave of {'/'.join(map(str, preemptors))} preemptors "
                 "(red ×: outcome WRONG or failed)")
    fig.tight_layout()
    path = out / PLOT_FILE
    fig.savefig(path, format="png")
    return path


def _phase(row: dict, p: str) -> float | None:
    v = ((row.get("phases") or {}).get("bound") or {}).get(p)
    return None if v is None else v * 1000
