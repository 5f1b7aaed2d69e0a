"""`conformance` and `test`: pytest on the conformance suite, or on the kit's unit tests.

Everything after the command is pytest's, passed on untouched, so -k, -m, -x, --junitxml and the
suite's own options (--scheduler, --k8s-version, --scenarios, ...) work as they do with pytest;
`conformance --help` is pytest's help, with the suite's options in it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from harness import REPO
from harness.errors import KitError


def register(sub) -> None:
    # No options of their own (add_help=False too): every argument, --help included, is pytest's.
    c = sub.add_parser("conformance", add_help=False,
                       help="the conformance suite on a cluster (pytest; every argument is pytest's or the "
                            "suite's: `conformance --help` lists them)")
    c.set_defaults(func=conformance, passthrough=("conformance",))
    t = sub.add_parser("test", add_help=False,
                       help="the kit's unit tests, no cluster (pytest; from a source checkout of the kit)")
    t.set_defaults(func=test, passthrough=("test",))


def source_checkout() -> Path | None:
    """The source checkout this kit runs from, or None for an installed kit: only a checkout has
    the unit tests and the benchmarks (they are not part of the package)."""
    project = REPO / "pyproject.toml"
    if project.is_file() and 'name = "priority-conformance"' in project.read_text() and (REPO / "tests").is_dir():
        return REPO
    return None


def suite_folder() -> Path:
    """The installed `conformance` package: the suite pytest runs, wherever the kit is installed."""
    spec = importlib.util.find_spec("conformance")
    if spec is None or spec.origin is None:
        raise KitError("the conformance package is not installed: reinstall priority-conformance")
    return Path(spec.origin).resolve().parent


def pytest_argv(folder: Path, rest: list[str]) -> list[str]:
    # The interpreter running the kit, so pytest sees the kit's own environment and plugins.
    return [sys.executable, "-m", "pytest", str(folder), *rest]


def _exec(argv: list[str]) -> int:
    # pytest takes this process over, as `./kit` always did: signals, exit code and terminal are its own.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)
    return 0  # not reached


def conformance(args) -> int:
    return _exec(pytest_argv(suite_folder(), args.rest))


# Arguments after which `./kit test` leaves pytest-xdist's workers out: the caller chose them, or
# wants one process (a debugger, output shown as it comes, xdist turned off).
ONE_PROCESS = ("-n", "--numprocesses", "--pdb", "--trace", "-s", "--capture=no", "no:xdist", "--collect-only",
               "--co")


def with_workers(rest: list[str]) -> list[str]:
    """The unit tests on every core (pytest-xdist, ``-n auto``): on 2 cores they take half the time
    of one process, and none of them shares state with another through anything but files of its
    own and machine-wide claims (harness.host.claims)."""
    if any(a == o or a.startswith(o + "=") or (o == "-n" and a.startswith("-n") and a[2:].isdigit())
           for a in rest for o in ONE_PROCESS):
        return rest
    return ["-n", "auto", *rest]


def test(args) -> int:
    root = source_checkout()
    if root is None:
        raise KitError("test: the unit tests are in the kit's source checkout (its tests/ folder), not in the "
                       f"installed package ({REPO}); clone the repository and run `./kit test` there")
    return _exec(pytest_argv(root / "tests", with_workers(args.rest)))
