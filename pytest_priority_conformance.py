"""The ``pytest11`` entry point of priority-conformance: the suite's plugin (``conformance/plugin``)
in a session that runs the suite, nothing in any other.

pytest loads an installed package's entry point in every session of the environment, a user's own
unit tests included, so this module only looks at what the session was asked to run
(``pytest_load_initial_conftests``): a session that names the suite (``--pyargs conformance``, or
a path in or at the installed ``conformance`` folder) gets the plugin's modules, hence its options,
markers, builds and clusters. Registered here, after every other plugin's entry point and before
the initial conftests, the modules add their options while pytest can still parse them, and find
the options a kind plugin already has (``conformance.plugin.options.SHARED``) taken.

A module of its own, under a name no other project uses: the kit's packages have generic names
(``conformance``, ``harness``, ``reference``), and a project's own ``conformance`` package earlier
on ``sys.path`` would hide the kit's. Only a session that runs the suite imports it, then, and one
that finds another package under that name says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# The suite's package, installed beside this module (site-packages, or a checkout installed editable).
SUITE = Path(__file__).resolve().parent / "conformance"


def names_the_suite(args: list[str], pyargs: bool, invocation_dir: Path) -> bool:
    """Whether a session with these command-line arguments runs the suite: an argument that is the
    suite's folder or a path in it, or with ``--pyargs`` the package or one of its modules. A folder
    that holds the suite does not count (a virtualenv inside a repository holds it)."""
    for arg in args:
        target = str(arg).split("::")[0]
        if pyargs and "/" not in target and target.split(".")[0] == SUITE.name:
            return True
        try:
            path = (invocation_dir / target).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if path == SUITE or SUITE in path.parents:
            return True
    return False


def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    ns = early_config.known_args_namespace
    args = list(getattr(ns, "file_or_dir", None) or [])
    invocation = early_config.invocation_params.dir
    if not args and invocation == early_config.rootpath:
        args = list(early_config.getini("testpaths") or [])
    if not names_the_suite(args or [str(invocation)], bool(getattr(ns, "pyargs", False)), invocation):
        return
    try:
        from conformance import plugin
    except ImportError as e:
        raise pytest.UsageError(f"priority-conformance: cannot import the suite's plugin ({e}): another "
                                f"package named conformance hides the kit's ({SUITE})") from None
    found = Path(plugin.__file__).resolve().parent.parent
    if found != SUITE:
        raise pytest.UsageError(f"priority-conformance: the package named conformance is {found}, not the "
                                f"kit's suite ({SUITE}): run from a folder without a conformance package")
    for module in plugin.MODULES:
        early_config.pluginmanager.import_plugin(module)
