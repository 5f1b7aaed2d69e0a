"""The kit as a package, used from another repository: a wheel built by pip from the sources,
installed into a virtualenv of its own, run from a folder that is not the checkout.

The wheel must carry everything the kit reads at run time (the catalogue, the mutants, the
wrapper Go modules of every release, kind's config, the site's templates), register the suite's
pytest plugin through its entry point, and write nothing into its own installed folder: a run's
artifacts and pytest's cache land in the current folder, the builds in the kit's cache.

The virtualenv is made without a network (tests/venvs.py: its dependencies are this
environment's, the kit's own install left out), and the wheel is built offline by this
environment's setuptools when it can build one (the test extra asks for one that can), else by
pip's isolated build.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import harness
from tests.venvs import Venv, build_options, dependency_links, make_venv, ok as _ok, run as _run

REPO = Path(__file__).resolve().parents[2]
# What a build of the kit reads from a checkout (pyproject.toml, setup.py and MANIFEST.in say how).
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "pytest_priority_conformance.py", "reference", "harness",
           "conformance", "scenarios", "mutants", "peers", "kind-config.yaml")
SCENARIO = "preempt-basic.yaml"


def copy_sources(dest: Path) -> Path:
    """The files a build reads, copied: pip builds in the source folder (build/, *.egg-info), and
    the test must leave the checkout as it was."""
    dest.mkdir(parents=True)
    for name in SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and mtime; Python's own bytecode caches left out."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@dataclass
class Installed:
    wheel: Path
    src: Path  # the sources it was built from (the checkout may change while the tests run)
    venv: Venv
    elsewhere: Path  # a user's repository: not the checkout, and the current folder of every run
    cache: Path
    build_seconds: float


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    import time

    work = tmp_path_factory.mktemp("packaging")
    src = copy_sources(work / "src")
    dist = work / "dist"
    started = time.monotonic()
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *build_options(), "-w", dist, src], cwd=work))
    seconds = time.monotonic() - started
    [wheel] = dist.glob("priority_conformance-*.whl")
    cache = work / "cache"
    venv = make_venv(work / "venv", dependency_links(work / "deps"), cache)
    _ok(_run([venv.python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=work, env=venv.env))
    elsewhere = work / "my-repo"
    elsewhere.mkdir()
    return Installed(wheel, src, venv, elsewhere, cache, seconds)


def test_the_wheel_carries_the_files_the_kit_reads_and_its_entry_points(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    src = installed.src
    data = [p.relative_to(src).as_posix() for top in ("scenarios", "mutants", "peers", "harness/gomod", "harness/data",
                                                     "harness/site/templates")
            for p in (src / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert len(data) > 150, "the kit's data was not found"
    # The top-level files of the repository go under harness/_repo/ (setup.py); the rest as they are.
    wanted = {f"harness/_repo/{f}" if not f.startswith("harness/") else f for f in data}
    wanted.add("harness/_repo/kind-config.yaml")
    assert sorted(wanted - set(names)) == []
    # The wrapper Go modules of every release, two folders deep (the old package-data missed them).
    assert any(n.startswith("harness/gomod/1.35/kubernetes/go.mod") for n in names)
    # Nothing of the checkout's own: no tests, docs or benchmarks, no artifacts or caches.
    assert not [n for n in names if n.split("/")[0] in ("tests", "docs", "benchmarks", "artifacts")]
    meta = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    entry_points = zipfile.ZipFile(installed.wheel).read(meta).decode()
    assert "[pytest11]\npriority-conformance = pytest_priority_conformance" in entry_points
    assert "priority-conformance = harness.cli:main" in entry_points
    # One version, harness.__version__'s.
    assert installed.wheel.name.startswith(f"priority_conformance-{harness.__version__}-")


def test_the_installed_kit_runs_its_commands_from_another_folder(installed):
    venv, here = installed.venv, installed.elsewhere
    before = snapshot(venv.site)
    where = _ok(_run([venv.python, "-c", "import conformance, harness; print(conformance.__file__); "
                      "print(harness.SCENARIOS)"], cwd=here, env=venv.env)).stdout.split()
    # The installed packages, not the checkout's (no editable install, no path to it).
    assert all(Path(p).is_relative_to(venv.site) for p in where), where
    catalogue = Path(where[1])
    assert (catalogue / SCENARIO).is_file() and list((catalogue / "karmada").glob("*.yaml"))

    cli = venv.bin("priority-conformance")
    assert "conformance" in _ok(_run([cli, "--help"], cwd=here, env=venv.env)).stdout
    assert _ok(_run([cli, "--version"], cwd=here, env=venv.env)).stdout.strip() == \
        f"priority-conformance {harness.__version__}"
    # validate reads the installed catalogue, pod and Karmada scenarios alike.
    valid = _ok(_run([cli, "validate"], cwd=here, env=venv.env)).stdout
    pods = len(list((installed.src / "scenarios").glob("*.yaml")))
    karmada = len(list((installed.src / "scenarios" / "karmada").glob("*.yaml")))
    assert f"{pods + karmada} valid ({pods} pod, {karmada} Karmada), 0 invalid" in valid, valid
    explained = _ok(_run([cli, "explain", catalogue / SCENARIO], cwd=here, env=venv.env)).stdout
    assert "preemptor" in explained and "victim" in explained

    assert snapshot(venv.site) == before, "the kit wrote into its installed folder"
    assert sorted(p.name for p in here.iterdir()) == [], "the offline commands wrote into the current folder"


def test_pytest_pyargs_runs_the_installed_suite_from_another_folder(installed):
    """`pytest --pyargs conformance` in a user's repository, with its own pytest configuration:
    the plugin comes from the entry point (pytest-kind-ng is installed beside it, as in this
    environment), the markers from the plugin, every cluster test reported skipped."""
    venv, here = installed.venv, installed.elsewhere / "suite"
    here.mkdir()
    (here / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n")
    (here / "kubeconfig").write_text("{}\n")
    mine = here / "my-scenarios"
    mine.mkdir()
    text = (installed.src / "scenarios" / SCENARIO).read_text()
    (mine / "my-preempt-basic.yaml").write_text(text.replace("id: preempt-basic", "id: my-preempt-basic", 1))
    before = snapshot(venv.site)
    plugins = _ok(_run([venv.python, "-c", "from importlib import metadata; print(sorted(d.metadata['Name'] for d in "
                        "metadata.distributions()))"], cwd=here, env=venv.env)).stdout
    assert "pytest-kind-ng" in plugins  # the clash this run shows gone
    out = _run([venv.python, "-m", "pytest", "--pyargs", "conformance", "--no-cluster", "-q", "-rs",
                "--junitxml=report.xml", "--keep-cluster", "--cluster", "local", "--kind-binary", "kind",
                "--scenarios", "my-scenarios", "--with-catalogue"], cwd=here, env=venv.env)
    _ok(out)
    # The user's scenario and the catalogue's, each a test.
    import xml.etree.ElementTree as ET

    tests = {tc.get("name") for tc in ET.parse(here / "report.xml").getroot().iter("testcase")}
    assert {"test_scenario[plugins-my-preempt-basic]", "test_scenario[plugins-preempt-basic]"} <= tests, tests
    last = out.stdout.strip().splitlines()[-1]
    assert " skipped" in last and "passed" not in last and "failed" not in last and "error" not in last, last
    assert "--no-cluster was given: cluster tests were not run" in out.stdout
    # The run's files are in the current folder, none in the installed kit.
    assert (here / "report.xml").is_file() and (here / "artifacts").is_dir() and (here / ".pytest_cache").is_dir()
    assert snapshot(venv.site) == before, "the run wrote into the installed kit"
    # With --kubeconfig too (pytest-kind-ng's option, shared): an existing cluster, so nothing is built.
    _ok(_run([venv.python, "-m", "pytest", "--pyargs", "conformance", "--co", "-q", "--kubeconfig", "kubeconfig",
              "-p", "no:cacheprovider"], cwd=here, env=venv.env))
    assert not installed.cache.exists() or not any(installed.cache.iterdir()), "a collection built something"


def test_the_plugin_stays_out_of_sessions_that_do_not_run_the_suite(installed):
    """The entry point loads in every pytest session of the environment: a user's own tests get
    none of the kit's hooks (no builds, no basetemp of its own, no options), and a package of
    theirs named conformance (`python -m pytest` puts the current folder first on sys.path) breaks
    only a session that asks for the kit's suite, saying why."""
    here = installed.elsewhere / "own-tests"
    (here / "conformance").mkdir(parents=True)
    (here / "conformance" / "__init__.py").write_text("MINE = True\n")
    (here / "test_mine.py").write_text(
        "import sys\n\n\n"
        "def test_mine(request, tmp_path):\n"
        "    names = [n for n, _ in request.config.pluginmanager.list_name_plugin()]\n"
        "    assert 'priority-conformance' in names\n"
        "    assert not [n for n in names if n.startswith('conformance.plugin')], names\n"
        "    assert 'conformance.plugin' not in sys.modules\n"
        "    assert 'priority-conformance-pytest-' not in str(tmp_path)\n")
    # The user's session makes its temp folders where pytest does by default; a folder of this
    # test's own stands for that default, so nothing is left in /tmp/pytest-of-<user>.
    with tempfile.TemporaryDirectory(prefix="users-tmp-") as users_tmp:
        out = _ok(_run([installed.venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"], cwd=here,
                       env={**installed.venv.env, "PYTEST_DEBUG_TEMPROOT": users_tmp}))
    assert out.stdout.strip().splitlines()[-1].startswith("1 passed"), out.stdout
    out = _run([installed.venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "conformance"],
               cwd=here, env=installed.venv.env)
    assert out.returncode == 4, out.stdout + out.stderr
    assert "another package named conformance hides the kit's" in out.stderr


def test_an_editable_install_run_from_its_checkout_registers_each_module_once(tmp_path):
    """Installed editable, the entry point registers the suite's modules, and the checkout's
    conftest names them again: pytest must take each once (a second registration is an error)."""
    src = copy_sources(tmp_path / "src")
    venv = make_venv(tmp_path / "venv", dependency_links(tmp_path / "deps"), tmp_path / "cache")
    _ok(_run([sys.executable, "-m", "pip", "--python", venv.python, "install", "--no-deps", "-q", *build_options(),
              "-e", src], cwd=tmp_path, env=venv.env))
    out = _ok(_run([venv.python, "-m", "pytest", "conformance", "--co", "-q", "--no-cluster", "--keep-cluster",
                    "-p", "no:cacheprovider", "--trace-config"], cwd=src, env=venv.env))
    assert "conformance/test_smoke.py::" in out.stdout
    # The entry point's plugin, and each module once (pytest would have stopped at a second).
    lines = out.stdout.splitlines()
    assert [ln for ln in lines if "registered" in ln and "priority-conformance" in ln], out.stdout[-3000:]
    assert len([ln for ln in lines if "registered" in ln and "conformance.plugin.options" in ln]) == 1
