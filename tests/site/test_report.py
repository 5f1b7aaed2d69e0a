"""A run's report.html (harness.site.report) from a fake run: each row's verdict, its scenario's
page on the spec site beside it, and its timeline picture where one was kept."""

from __future__ import annotations

from pathlib import Path

from harness.run.pods import timeline
from harness.site import model
from harness.site.report import REPORT, SITE, Row, verdicts, write
from tests.site.test_site import Page
from tests.run.test_timeline import history, steps


def fake_run(root: Path) -> Path:
    """A report at ``root/report.html`` of three tests, one failing with its timeline kept."""
    kept = root / "plugins" / "preempt-basic"
    kept.mkdir(parents=True)
    (kept / timeline.FILE).write_bytes(timeline.draw(history().versions, steps(), "preempt-basic [plugins]"))
    rows = [Row("test_scenario[plugins-preempt-basic]", "preempt-basic", "plugins", "FAIL",
                "scenario preempt-basic [plugins]: differs", 12.5, kept / timeline.FILE),
            Row("test_scenario[upstream-preempt-basic]", "preempt-basic", "upstream", "pass", "", 11.0,
                root / "upstream" / "preempt-basic" / timeline.FILE),  # not kept: no picture shown
            Row("test_scenario[upstream-toleration-seconds-zero]", "toleration-seconds-zero", "upstream", "differs",
                "expected difference", 3.0)]
    site = model.build(model.load(), verdicts(rows, "this run"), runs="this run")
    return write(rows, root / REPORT, site, "run abc123: plugins, upstream")


def test_the_report_links_each_scenario_page_and_shows_kept_timelines(tmp_path):
    out = fake_run(tmp_path)
    page = Page(out.read_text())
    assert "site/scenarios/preempt-basic.html" in page.links
    assert "site/scenarios/toleration-seconds-zero.html" in page.links
    assert page.images == ["plugins/preempt-basic/timeline.png"]  # the pass kept none
    for href in page.links + page.images:
        assert (tmp_path / href).is_file(), href
    html = out.read_text()
    assert "1 FAIL" in html and "1 pass" in html and "1 differs" in html
    scenario = (tmp_path / SITE / "scenarios" / "preempt-basic.html").read_text()
    assert "plugins: FAIL" in scenario and "upstream: pass" in scenario


def test_a_report_without_a_site_links_no_page(tmp_path):
    rows = [Row("test_scenario[plugins-preempt-basic]", "preempt-basic", "plugins", "pass")]
    out = write(rows, tmp_path / REPORT, None)
    assert Page(out.read_text()).links == []
