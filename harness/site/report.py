"""A run's report as a page (``artifacts/report.html``): each scenario test's verdict, linked to
its scenario's page on the spec site (built beside it, with this run's verdicts) and showing its
timeline picture where the run kept one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from harness.site.model import Site
from harness.site.render import environment, write_site
from harness.site.runs import Verdict

REPORT = "report.html"
SITE = "site"  # the spec site's folder, beside the report


@dataclass(frozen=True)
class Row:
    """One scenario test of a run."""

    test: str  # pytest's name for it
    scenario: str
    target: str
    outcome: str  # as harness.site.runs.outcome_of says
    message: str = ""
    seconds: float = 0.0
    timeline: Path | None = None  # the picture, where the run kept one

    def verdict(self, source: str) -> Verdict:
        return Verdict(self.scenario, self.target, self.outcome, self.message, source)


def verdicts(rows: list[Row], source: str) -> dict[str, list[Verdict]]:
    """The rows as the spec site's recorded verdicts, by scenario."""
    out: dict[str, list[Verdict]] = {}
    for r in rows:
        out.setdefault(r.scenario, []).append(r.verdict(source))
    return out


def render(rows: list[Row], out: Path, pages: set[str], title: str) -> str:
    """The report's HTML for a report at ``out``; ``pages`` are the scenario pages the site has."""
    def rel(p: Path | None) -> str | None:
        return None if p is None or not p.exists() else os.path.relpath(p, out.parent)

    shown = [dict(r=r, page=f"{SITE}/scenarios/{r.scenario}.html" if f"scenarios/{r.scenario}.html" in pages else None,
                  timeline=rel(r.timeline)) for r in rows]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    return environment().get_template("report.html").render(rows=shown, counts=counts, title=title, root=f"{SITE}/",
                                                              site=bool(pages))


def write(rows: list[Row], out: Path, site: Site | None, title: str = "conformance run") -> Path:
    """``out`` (the report) and, given a site, the spec site beside it; the report's path."""
    pages: set[str] = set()
    if site is not None:
        write_site(site, out.parent / SITE)
        pages = {s.page for s in site.scenarios}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(rows, out, pages, title))
    return out


__all__ = ["REPORT", "Row", "SITE", "render", "verdicts", "write"]
