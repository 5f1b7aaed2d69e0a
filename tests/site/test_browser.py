"""The spec site and a run's report in a real browser: headless chromium (Debian's chromium and
chromium-driver) opens the index, every area page, a scenario page of each area and the report,
and checks that each loads, that every link on it leads to a file, that every image renders
(naturalWidth > 0; the report shows a timeline picture drawn from a synthetic history), and that
every area is shown by its title, never by its bare id (the podgroup area once was).

Skipped, saying why, where no chromium is installed; CI installs it (.ci/run) and sets
PRIORITYKIT_BROWSER=required so that a missing browser fails there instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from harness.site import model
from harness.site.report import SITE
from tests.site.test_report import fake_run

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "/usr/lib/chromium/chromedriver")


def _found(names) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


BROWSER, DRIVER = _found(BROWSERS), _found(DRIVERS)
MISSING = "no chromium to run the browser test (apt-get install chromium chromium-driver)"
if os.environ.get("PRIORITYKIT_BROWSER") == "required" and not (BROWSER and DRIVER):
    raise RuntimeError(f"PRIORITYKIT_BROWSER=required, but {MISSING}")
pytestmark = pytest.mark.skipif(not (BROWSER and DRIVER), reason=MISSING)


@pytest.fixture(scope="module")
def browser():
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # Chromium keeps a profile and an org.chromium.Chromium.* folder in TMPDIR and leaves them
    # there when it quits: both go in a folder of the test's own, removed after it. Not pytest's
    # own: under pytest-xdist (`./kit test` runs its workers) that path is long enough to push the
    # profile's singleton socket past a Unix socket's 108 bytes, and chromium exits at once.
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="prioritykit-chromium-"))
    opts = webdriver.ChromeOptions()
    opts.binary_location = BROWSER
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files", f"--user-data-dir={scratch / 'profile'}"):
        opts.add_argument(arg)
    service = Service(executable_path=DRIVER, env={**os.environ, "TMPDIR": str(scratch)})
    try:
        driver = webdriver.Chrome(options=opts, service=service)
        driver.set_page_load_timeout(30)
        yield driver
        driver.quit()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A run's folder: report.html, its timeline picture, and the spec site beside it."""
    return fake_run(tmp_path_factory.mktemp("run")).parent


def visit(driver, page: Path) -> list[str]:
    """Open ``page``; what is wrong with it (empty: it loads, its links lead to files, its images render)."""
    driver.get(page.as_uri())
    wrong = []
    if driver.execute_script("return document.readyState") != "complete" or not driver.title:
        wrong.append(f"{page}: did not load")
    for href in driver.execute_script("return Array.from(document.links, a => a.href)"):
        url = urlparse(href)
        if url.scheme == "file" and not Path(unquote(url.path)).is_file():
            wrong.append(f"{page.name}: link {href} leads nowhere")
    for src, width in driver.execute_script(
            "return Array.from(document.images, i => [i.src, i.complete ? i.naturalWidth : 0])"):
        if width <= 0:
            wrong.append(f"{page.name}: image {src} does not render")
    return wrong


def test_the_site_and_report_load_link_and_render_in_chromium(browser, built):
    site = built / SITE
    pages = [built / "report.html", site / "index.html", *sorted((site / "areas").glob("*.html"))]
    # One scenario page per area (the first it lists), besides what the static test checks of them all.
    built_site = model.build(model.load())
    pages += [site / a.scenarios[0].page for a in built_site.areas]
    wrong = [w for p in pages for w in visit(browser, p)]
    assert wrong == []
    browser.get((built / "report.html").as_uri())
    widths = browser.execute_script("return Array.from(document.images, i => i.naturalWidth)")
    assert widths == [1100]  # the timeline picture, drawn at its full size
    # Two clicks from the index to a rule's page, as a reader would make them.
    browser.get((site / "index.html").as_uri())
    browser.find_element("css selector", "a.area[href='areas/preemption.html']").click()
    browser.find_element("css selector", "a.scenario[href='../scenarios/preempt-basic.html']").click()
    assert browser.find_element("css selector", "dd.id").text == "preempt-basic"
    assert "plugins: FAIL" in browser.find_element("css selector", "dd.verdicts").text


def untitled_areas(driver, site: Path) -> list[str]:
    """Where an area is shown under its bare id instead of a title: the index's "what it pins"
    column, and each area page's heading and window title (empty: every area has its title)."""
    driver.get((site / "index.html").as_uri())
    wrong = []
    for name, title in driver.execute_script(
            "return Array.from(document.querySelectorAll('table.areas tbody tr'),"
            " r => [r.cells[0].innerText.trim(), r.cells[1].innerText.trim()])"):
        if title in ("", name):
            wrong.append(f"index.html: area {name} shown as {title!r}")
    for page in sorted((site / "areas").glob("*.html")):
        driver.get(page.as_uri())
        heading = driver.find_element("css selector", "h1").text.strip()
        window = driver.title.split(" · ")[0].strip()
        for what, shown in (("heading", heading), ("window title", window)):
            if shown in ("", page.stem):
                wrong.append(f"areas/{page.name}: {what} {shown!r}")
    return wrong


def test_every_area_is_shown_by_its_title_not_its_id(browser, built):
    site = built / SITE
    assert {p.stem for p in (site / "areas").glob("*.html")} == {a.name for a in model.build(model.load()).areas}
    assert untitled_areas(browser, site) == []


def test_an_area_shown_by_its_id_is_caught(browser, tmp_path):
    (tmp_path / "areas").mkdir()
    (tmp_path / "index.html").write_text(
        '<!doctype html><title>x</title><table class="areas"><tbody>'
        '<tr><td><a href="areas/queue.html">queue</a></td><td>queue</td></tr></tbody></table>')
    (tmp_path / "areas" / "queue.html").write_text("<!doctype html><title>queue · x</title><h1>queue</h1>")
    assert untitled_areas(browser, tmp_path) == [
        "index.html: area queue shown as 'queue'", "areas/queue.html: heading 'queue'",
        "areas/queue.html: window title 'queue'"]


def test_a_broken_link_and_image_are_caught(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><title>broken</title><a href="nowhere.html">x</a><img src="missing.png">')
    assert [w.split(": ", 1)[1].split(" ")[0] for w in visit(browser, page)] == ["link", "image"]
