"""The conformance plugin in a pytest run of its own (pytester): a scenario test's JUnit time is its scenario's."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "preempt-basic.yaml"


def test_a_scenario_test_reports_its_own_scenario_s_seconds_not_the_batch_s(pytester):
    pytester.makeconftest("from conformance.plugin import MODULES\n\npytest_plugins = MODULES\n")
    pytester.makepyfile(test_scenarios="""
        import time
        from types import SimpleNamespace

        import pytest


        @pytest.fixture(scope="session")
        def batch(build, kit_run):
            time.sleep(0.5)  # the whole batch, in the first test's setup
            return SimpleNamespace(results={(s.id, 0): SimpleNamespace(seconds=42.0) for s in kit_run.scenarios})


        def test_scenario(scenario, build, batch):
            pass
        """)
    pytester.makefile(".yaml", kubeconfig="{}")  # an existing cluster: the plugin starts nothing
    (pytester.path / SCENARIO.name).write_text(SCENARIO.read_text())
    # As the kit's pyproject does: pytest-kind-ng's plugin registers options of the same names.
    result = pytester.runpytest_subprocess("-p", "no:pytest-kind-ng", "-p", "no:cacheprovider",
                                           "-W", "ignore::pytest.PytestUnknownMarkWarning",  # the kit's are in its ini
                                           "--scenarios", SCENARIO.name, "--kubeconfig", "kubeconfig.yaml",
                                           "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    case = ET.parse(pytester.path / "junit.xml").getroot().find(".//testcase")
    assert case.get("name") == "test_scenario[plugins-preempt-basic]"
    assert abs(float(case.get("time")) - 42.0) < 0.1  # not the half second the batch took


def test_a_run_writes_report_html_linking_each_scenario_s_page_and_timeline(pytester):
    """A run's report.html: one row per scenario test with its verdict, its page on the spec site
    written beside it, and the timeline picture its artifacts hold."""
    pytester.makeconftest("from conformance.plugin import MODULES\n\npytest_plugins = MODULES\n")
    pytester.makepyfile(test_scenarios="""
        from pathlib import Path
        from types import SimpleNamespace

        import pytest


        @pytest.fixture(scope="session")
        def batch(build, kit_run):
            kept = Path("artifacts") / "plugins" / "preempt-basic"
            kept.mkdir(parents=True)
            (kept / "timeline.png").write_bytes(b"not really a picture")
            return SimpleNamespace(results={(s.id, 0): SimpleNamespace(seconds=4.0, artifacts=kept)
                                            for s in kit_run.scenarios})


        def test_scenario(scenario, build, batch):
            pytest.fail("the cluster preempted nothing")
        """)
    pytester.makefile(".yaml", kubeconfig="{}")
    (pytester.path / SCENARIO.name).write_text(SCENARIO.read_text())
    result = pytester.runpytest_subprocess("-p", "no:pytest-kind-ng", "-p", "no:cacheprovider",
                                           "-W", "ignore::pytest.PytestUnknownMarkWarning",
                                           "--scenarios", SCENARIO.name, "--kubeconfig", "kubeconfig.yaml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*each scenario's verdict, page and timeline in artifacts/report.html*"])
    html = (pytester.path / "artifacts" / "report.html").read_text()
    assert 'href="site/scenarios/preempt-basic.html"' in html and 'src="plugins/preempt-basic/timeline.png"' in html
    assert "the cluster preempted nothing" in html and "v-FAIL" in html
    page = (pytester.path / "artifacts" / "site" / "scenarios" / "preempt-basic.html").read_text()
    assert "plugins: FAIL" in page  # the site beside the report carries this run's verdicts


def test_a_real_kubelet_scenario_test_reports_its_own_scenario_s_duration():
    """JUnit's time of a scenario test is its scenario's; the real-kubelet tests said 0.0 s."""
    from types import SimpleNamespace

    from conformance.plugin.reporting import pytest_runtest_makereport

    scenario = SimpleNamespace(id="eviction-x")
    batch = SimpleNamespace(results={("eviction-x", 0): SimpleNamespace(seconds=31.5)})
    item = SimpleNamespace(callspec=SimpleNamespace(params={"real_scenario": scenario, "build": "plugins"}),
                           funcargs={"real_batch": batch}, config=SimpleNamespace(stash={}), nodeid="t")
    report = SimpleNamespace(when="call", duration=0.0)
    hook = pytest_runtest_makereport(item, None)
    next(hook)
    try:
        hook.send(SimpleNamespace(get_result=lambda: report))
    except StopIteration:
        pass
    assert report.duration == 31.5
