"""The conformance suite's pytest plugin, one module per concern.

``options`` the kit's options and their checks; ``markers`` the suite's markers; ``state`` the
run's state in ``config.stash``; ``session`` the clusters and batches of a run; ``collection``
parametrization and deselection; ``fixtures`` the cluster, nodes and batches tests ask for;
``verdicts`` a scenario's verdict as a pytest outcome; ``reporting`` durations, timings and the
release matrix; ``sharding`` the shard of a split run (pytest-split) and its record; ``scratch``
the session's own temporary folder.

How the modules are registered, installed or not:

- Installed (a wheel, or an editable install of a checkout), this package is the
  ``priority-conformance`` plugin of the ``pytest11`` entry point, so that
  ``pytest --pyargs conformance --scheduler-binary ...`` works from any folder: the suite's
  conftest is not an initial conftest there, and options it added would come too late. The
  entry point loads in every pytest session of the environment, a user's own unit tests
  included, so this package does nothing but look at what the session was asked to run
  (``pytest_load_initial_conftests``): only a session that names the suite (``--pyargs
  conformance``, or a path in or at the installed ``conformance`` folder) gets the modules,
  hence the options, markers, builds and clusters. Any other session is left as it was.
- From a checkout without the entry point (or with plugin autoload disabled),
  ``conformance/conftest.py`` registers the same modules (``pytest_plugins``).

pytest registers a module under its name once: a module the entry point registered is skipped
when the conftest names it again, so an editable install run from its checkout has each once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# In this order: scratch first (it sets pytest's basetemp before the tmpdir plugin reads it).
MODULES = [f"conformance.plugin.{m}" for m in
           ("scratch", "options", "markers", "session", "collection", "fixtures", "reporting", "sharding")]

SUITE = Path(__file__).resolve().parent.parent  # the conformance package: the suite's test modules


def names_the_suite(args: list[str], pyargs: bool, invocation_dir: Path) -> bool:
    """Whether a session with these command-line arguments runs the suite: an argument that is the
    suite's folder or a path in it, or with ``--pyargs`` the package or one of its modules."""
    for arg in args:
        target = str(arg).split("::")[0]
        if pyargs and target.split(".")[0] == SUITE.name and "/" not in target:
            return True
        try:
            path = (invocation_dir / target).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if path == SUITE or SUITE in path.parents:
            return True
    return False


def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """The entry point's only work: the suite's modules in a session that runs the suite.

    Registered here, after every other plugin's entry point and before the initial conftests,
    the modules add their options while pytest can still parse them, and the kit's options that
    another kind plugin already has (``options.SHARED``) are found taken and shared."""
    ns = early_config.known_args_namespace
    args = list(getattr(ns, "file_or_dir", None) or [])
    invocation = early_config.invocation_params.dir
    if not args and invocation == early_config.rootpath:
        args = list(early_config.getini("testpaths") or [])
    if not names_the_suite(args or [str(invocation)], bool(getattr(ns, "pyargs", False)), invocation):
        return
    for module in MODULES:
        early_config.pluginmanager.import_plugin(module)
