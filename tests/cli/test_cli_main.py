"""The command line as one program: `priority-conformance --help` (and so `./kit --help`) lists every
command, conformance, test and bench included; `--version` prints the kit's version; every
command's `--help` works, and a benchmark's never runs it; pytest's arguments pass through untouched.

`./kit conformance`, `./kit test` and `./kit bench` were once handled by the kit's bash script
alone: the CLI's help did not know them, `./kit bench --help` failed and `./kit bench model
--help` ran the benchmark."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness.cli import bench, main, parser, suite, version

REPO = Path(__file__).resolve().parents[2]
# The CLI in a process of its own: conformance and test hand that process over to pytest.
CLI = [sys.executable, "-c", "import sys; from harness.cli import main; sys.exit(main())"]


def commands(p: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and subcommand of ``p``, as the words that name it, with its parser."""
    out = []
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((words + (name,), sub))
                out += commands(sub, words + (name,))
    return out


ALL = commands(parser())
# Their --help is pytest's, shown by a process pytest takes over (tested below, in a subprocess).
PYTEST = {("conformance",), ("test",)}


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    top = [words[0] for words, _ in ALL if len(words) == 1]
    assert {"conformance", "test", "bench", "check", "validate", "explain", "site"} <= set(top)
    assert [c for c in top if f"\n    {c}" not in out] == []


@pytest.mark.parametrize("words", [w for w, _ in ALL if w not in PYTEST], ids=" ".join)
def test_every_command_has_a_help_that_exits_0(words, capsys, monkeypatch):
    # A benchmark's help must not run it: running one would fail here.
    monkeypatch.setattr(bench.runpy, "run_path", lambda *a, **k: pytest.fail("the benchmark ran"))
    try:
        code = main([*words, "--help"])
    except SystemExit as e:
        code = e.code
    assert code in (0, None)
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("command, shows", [("conformance", "--scheduler"), ("test", "--junit-xml")])
def test_the_pytest_commands_show_pytests_help_with_the_suites_options(command, shows):
    done = subprocess.run([*CLI, command, "--help"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout and shows in done.stdout


def test_version_is_the_kits_one(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"priority-conformance {harness.__version__}"
    assert version() == harness.__version__  # the installed metadata says the same


def test_version_falls_back_to_the_package_where_nothing_is_installed(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert version() == harness.__version__


@pytest.fixture
def execs(monkeypatch):
    """What a pytest command would exec, instead of exec'ing it."""
    seen: list[list[str]] = []
    monkeypatch.setattr(suite.os, "execv", lambda path, argv: seen.append(list(argv)))
    return seen


def test_conformance_passes_every_argument_to_pytest_on_the_installed_suite(execs):
    args = ["-k", "preempt-basic", "--scenarios", "mine", "-x", "--", "-m", "not slow", "--version"]
    assert main(["conformance", *args]) == 0
    folder = Path(__import__("conformance").__file__).resolve().parent
    assert execs == [[sys.executable, "-m", "pytest", str(folder), *args]]


def test_test_runs_the_checkouts_unit_tests_on_every_core(execs):
    assert main(["test", "-q", "-x", "-k", "cli"]) == 0
    assert execs == [[sys.executable, "-m", "pytest", str(REPO / "tests"), "-n", "auto", "-q", "-x", "-k", "cli"]]


@pytest.mark.parametrize("args", [["-n", "3"], ["-n3"], ["--numprocesses=1"], ["--pdb"], ["-s"], ["-p", "no:xdist"]])
def test_test_leaves_the_workers_to_a_caller_who_chose_them_or_wants_one_process(execs, args):
    assert main(["test", *args]) == 0
    assert execs == [[sys.executable, "-m", "pytest", str(REPO / "tests"), *args]]


def test_test_outside_a_checkout_says_it_needs_one(execs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(suite, "REPO", tmp_path)  # an installed kit: site-packages, no tests/
    assert main(["test"]) == 2
    assert execs == []
    assert "source checkout" in capsys.readouterr().err


def test_bench_lists_its_benchmarks(capsys):
    with pytest.raises(SystemExit) as e:
        main(["bench", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert all(f"\n    {name}" in out for name in ("model", "cluster", "preemption"))
    assert set(bench.BENCHMARKS) == {p.stem for p in (REPO / "benchmarks").glob("*.py")}


def test_bench_model_takes_no_arguments(capsys, monkeypatch):
    monkeypatch.setattr(bench.runpy, "run_path", lambda *a, **k: pytest.fail("the benchmark ran"))
    assert main(["bench", "model", "--fast"]) == 2
    assert "bench model takes no arguments" in capsys.readouterr().err


def test_bench_runs_a_script_with_its_arguments(monkeypatch):
    ran = []
    monkeypatch.setattr(bench.runpy, "run_path", lambda path, run_name: ran.append((path, run_name, sys.argv[1:])))
    assert main(["bench", "cluster", "--runs", "1"]) == 0
    assert ran == [(str(REPO / "benchmarks" / "cluster.py"), "__main__", ["--runs", "1"])]


def test_an_unknown_option_of_an_ordinary_command_is_still_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["validate", "--frobnicate"])
    assert e.value.code == 2
    assert "unrecognized arguments: --frobnicate" in capsys.readouterr().err


def test_kit_hands_every_command_to_the_cli():
    script = (REPO / "kit").read_text()
    assert script.rstrip().endswith('exec "$venv/bin/priority-conformance" "$@"')
    assert "-m pytest" not in script and "benchmarks/" not in script
    assert os.access(REPO / "kit", os.X_OK)
