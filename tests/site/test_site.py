"""The spec site (`./kit site`): every page says what its scenario file says, every link resolves,
and a rule is two clicks from the index. The file is read here with plain YAML, not the kit's
loader, so a page that drops or changes what the author wrote fails, whichever layer lost it.
"""

from __future__ import annotations

import json
import textwrap
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from harness.cli import main
from harness.errors import KitError
from harness.formats import catalogue
from harness.site import model
from harness.site.render import write_site
from harness.site.runs import match, read_runs

FILES = catalogue.files()


class Page(HTMLParser):
    """What a test reads of a page: its links, images, steps and their expectations, and the
    text of the elements that carry the scenario's facts."""

    FACTS = {"title", "id", "spec", "areas"}

    def __init__(self, html: str):
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.steps: list[dict] = []
        self.facts: dict[str, str] = {}
        self._fact: str | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "li" and "step" in classes:
            self.steps.append({"index": int(a["data-index"]), "action": a["data-action"],
                               "value": a["data-value"], "expects": set()})
        if tag == "li" and "expect" in classes:
            self.steps[-1]["expects"].add((a["data-field"], a["data-name"], a["data-value"]))
        found = classes & self.FACTS
        if found and tag in ("h1", "dd"):
            self._fact = found.pop()
            self.facts[self._fact] = ""

    def handle_endtag(self, tag):
        if tag in ("h1", "dd"):
            self._fact = None

    def handle_data(self, data):
        if self._fact:
            self.facts[self._fact] += data


def canon(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def disagreements(page: Page, raw: dict, actions: tuple[str, ...], areas: list[str]) -> list[str]:
    """Where a scenario page says something other than its file (empty: they agree)."""
    out = []
    for key, wanted in (("id", raw["id"]), ("title", raw["title"]), ("spec", raw["spec"]),
                        ("areas", ", ".join(areas))):
        if page.facts.get(key, "").strip() != wanted:
            out.append(f"{key}: page {page.facts.get(key)!r}, file {wanted!r}")
    if len(page.steps) != len(raw["steps"]):
        out.append(f"steps: page has {len(page.steps)}, file {len(raw['steps'])}")
    for i, (shown, step) in enumerate(zip(page.steps, raw["steps"])):
        action = next((a for a in actions if a in step), "expect")
        value = canon(step[action]) if action != "expect" else ""
        if (shown["index"], shown["action"], shown["value"]) != (i, action, value):
            out.append(f"steps[{i}]: page {shown['action']} {shown['value']}, file {action} {value}")
        wanted = set()
        for field, entries in (step.get("expect") or {}).items():
            if field == "order":
                wanted.add((field, "", canon(entries)))
            elif isinstance(entries, dict):
                wanted |= {(field, str(k), canon(v)) for k, v in entries.items()}
            else:
                wanted |= {(field, str(k), "") for k in entries}
        if shown["expects"] != wanted:
            out.append(f"steps[{i}].expect: page only {sorted(shown['expects'] - wanted)}, "
                       f"file only {sorted(wanted - shown['expects'])}")
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    write_site(model.build(model.load()), out)
    return out


def _raw(path: Path) -> tuple[dict, tuple[str, ...], list[str]]:
    raw = yaml.safe_load(path.read_text())
    if "members" in raw:
        from harness.formats.bindings import ACTIONS

        return raw, ACTIONS, ["karmada"]
    from harness.formats.pods import ACTIONS

    return raw, ACTIONS, raw["areas"]


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_scenario_page_says_what_its_file_says(site, path):
    raw, actions, areas = _raw(path)
    page = Page((site / "scenarios" / f"{raw['id']}.html").read_text())
    assert disagreements(page, raw, actions, areas) == []


def test_a_page_that_differs_from_its_file_is_caught(site):
    path = catalogue.CATALOGUES["pods"] / "preempt-basic.yaml"
    raw, actions, areas = _raw(path)
    html = (site / "scenarios" / "preempt-basic.html").read_text()
    assert disagreements(Page(html), raw, actions, areas) == []
    dropped = html.replace('data-field="preempted"', 'data-field="notPreempted"')
    assert any("steps[0].expect" in d for d in disagreements(Page(dropped), raw, actions, areas))
    respec = html.replace("seed 004", "seed 005")
    assert any(d.startswith("spec:") for d in disagreements(Page(respec), raw, actions, areas))
    changed = dict(raw, steps=[dict(raw["steps"][0], createPod={"name": "preemptor", "class": "low"})])
    assert any(d.startswith("steps[0]:") for d in disagreements(Page(html), changed, actions, areas))


def test_every_link_of_every_page_resolves_to_a_file(site):
    broken = []
    for page in site.rglob("*.html"):
        for href in Page(page.read_text()).links:
            if urlparse(href).scheme or href.startswith("#"):
                continue
            if not (page.parent / href.split("#")[0]).resolve().is_file():
                broken.append(f"{page.relative_to(site)}: {href}")
    assert broken == []


def test_each_rule_is_two_clicks_from_the_index(site):
    """index -> area page -> scenario page, for every scenario and each of its areas."""
    index = Page((site / "index.html").read_text())
    reached = set()
    for area in index.links:
        if area.startswith("areas/"):
            for href in Page((site / area).read_text()).links:
                if href.startswith("../scenarios/"):
                    reached.add(Path(href).stem)
    assert reached == {_raw(f)[0]["id"] for f in FILES}


def test_a_scenario_page_shows_each_build_s_model_and_says_which_are_specified(site):
    html = (site / "scenarios" / "toleration-kep-30min-and-plain-low.html").read_text()
    assert "plugins build, Kubernetes" in html and "upstream build, Kubernetes" in html
    assert "not specified: a difference is expected" in html  # upstream: a plugins-only scenario
    assert "no run recorded" in html
    assert "exempted default/thirty" in html  # the model's reason, as explain gives it


def test_every_area_has_a_title_and_a_marker():
    """An area without a title was shown under its bare id (podgroup was): every area a scenario
    may name, and Karmada's, has its title, and each is a marker the suite registers (the
    plugin's own list, or pyproject.toml's where the markers are still kept there)."""
    import importlib
    import importlib.util
    import tomllib

    from harness.formats import pods

    assert set(model.AREAS) == {*pods.AREAS, model.KARMADA_AREA}
    assert sorted(a for a in model.AREAS if not model.AREA_TITLES.get(a, "").strip()) == []
    assert sorted(set(model.AREA_TITLES) - set(model.AREAS)) == []  # no title for an area that is gone
    assert sorted(a for a in model.AREAS if model.AREA_TITLES[a].strip().lower() == a) == []
    config = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    lines = list(config["tool"]["pytest"]["ini_options"].get("markers", []))
    if importlib.util.find_spec("conformance.plugin.markers") is not None:
        lines += importlib.import_module("conformance.plugin.markers").MARKERS
    markers = {m.split(":")[0] for m in lines}
    assert sorted(set(model.AREAS) - markers) == []


def test_each_area_page_is_headed_by_its_title(site):
    for area in model.AREAS:
        page = site / "areas" / f"{area}.html"
        if page.exists():  # an area with no scenario has no page
            html = unescape(page.read_text())
            assert f"<h1>{model.AREA_TITLES[area]}</h1>" in html, area
            assert f"<title>{model.AREA_TITLES[area]} ·" in html, area


def test_markup_in_a_scenario_is_shown_as_text(tmp_path):
    f = tmp_path / "odd-title.yaml"
    f.write_text(textwrap.dedent("""\
        id: odd-title
        title: "<script>alert(1)</script> pods & nodes"
        spec: "a <b> tag"
        areas: [preemption]
        nodes: [{name: n1}]
        steps:
          - createPod: {name: p}
            expect: {running: {p: n1}}
        """))
    out = tmp_path / "site"
    write_site(model.build(model.load([f])), out)
    html = (out / "scenarios" / "odd-title.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" timestamp="2026-11-20T10:00:00">
<testcase classname="conformance.test_scenarios" name="test_scenario[plugins-preempt-basic]" time="12.0"/>
<testcase classname="conformance.test_scenarios" name="test_scenario[upstream@1.35-preempt-basic]" time="3">
  <failure message="scenario preempt-basic [upstream]: differs&#10;step 0">...</failure></testcase>
<testcase classname="conformance.test_scenarios" name="test_scenario[upstream-toleration-seconds-zero]" time="3">
  <skipped type="pytest.xfail" message="expected difference: the upstream build on Kubernetes 1.35 does not"/></testcase>
<testcase classname="conformance.test_karmada" name="test_binding_scenario[karmada-priority-from-class]" time="9"/>
<testcase classname="conformance.test_smoke" name="test_smoke[plugins]" time="1"/>
</testsuite></testsuites>
"""


def test_recorded_verdicts_are_read_from_junit_and_shown(tmp_path):
    runs = tmp_path / "artifacts"
    runs.mkdir()
    (runs / "run.xml").write_text(JUNIT)
    loaded = model.load()
    verdicts = read_runs(runs, [s.id for _, s in loaded])
    assert [(v.target, v.outcome) for v in verdicts["preempt-basic"]] == [("plugins", "pass"), ("upstream@1.35", "FAIL")]
    assert verdicts["preempt-basic"][1].message == "scenario preempt-basic [upstream]: differs"
    assert [(v.target, v.outcome) for v in verdicts["toleration-seconds-zero"]] == [("upstream", "differs")]
    assert [(v.target, v.outcome) for v in verdicts["karmada-priority-from-class"]] == [("karmada", "pass")]
    out = tmp_path / "site"
    assert main(["site", "--out", str(out), "--runs", str(runs)]) == 0
    html = (out / "areas" / "preemption.html").read_text()
    assert "plugins: pass" in html and "upstream@1.35: FAIL" in html


def test_test_names_match_the_longest_id_and_keep_target_and_copy():
    ids = ["preempt-basic", "x-preempt-basic"]
    assert match("test_scenario[plugins-x-preempt-basic]", ids) == ("x-preempt-basic", "plugins")
    assert match("test_scenario[plugins@1.37-preempt-basic-copy1]", ids) == ("preempt-basic", "plugins@1.37 (copy1)")
    assert match("test_scenario_on_real_kubelets[upstream-preempt-basic]", ids) == ("preempt-basic",
                                                                                   "upstream (real kubelets)")
    # pytest writes a copy's id after the build's, as the suite parametrizes them
    assert match("test_scenario[plugins-copy1-x-preempt-basic]", ids) == ("x-preempt-basic", "plugins (copy1)")
    assert match("test_binding_scenario[karmada-priority-from-class]", ["karmada-priority-from-class"]) == (
        "karmada-priority-from-class", "karmada")
    assert match("test_smoke[plugins]", ids) is None


def test_a_bad_runs_folder_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(KitError, match="no such folder"):
        read_runs(tmp_path / "nowhere", [])
    with pytest.raises(KitError, match="no JUnit XML in it"):
        read_runs(tmp_path, [])
    (tmp_path / "broken.xml").write_text("<testsuites><testsuite>")
    with pytest.raises(KitError, match="no JUnit XML in it"):  # not JUnit: not a run's
        read_runs(tmp_path, [])
    assert main(["site", "--out", str(tmp_path / "site"), "--runs", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("priority-conformance: error: --runs ") and "Traceback" not in err


def test_a_recorded_verdict_is_read_as_data_whatever_the_message_says(tmp_path):
    """The suite records each scenario's verdict as a JUnit property: a reworded xfail message
    must not turn an expected difference into a bare xfail (the site read the words before)."""
    runs = tmp_path / "artifacts"
    runs.mkdir()
    (runs / "ci.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase name="test_scenario[upstream-toleration-seconds-zero]"><properties>'
        '<property name="verdict" value="differs"/></properties>'
        '<skipped type="pytest.xfail" message="reworded entirely"/></testcase>'
        '<testcase name="test_scenario[plugins-preempt-basic]"><properties>'
        '<property name="verdict" value="stopped"/></properties><skipped message="any words"/></testcase>'
        '</testsuite></testsuites>')
    verdicts = read_runs(runs, ["toleration-seconds-zero", "preempt-basic"])
    got = {(v.scenario, v.target): v.outcome for vs in verdicts.values() for v in vs}
    assert got == {("toleration-seconds-zero", "upstream"): "differs", ("preempt-basic", "plugins"): "skipped"}
