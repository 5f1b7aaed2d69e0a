"""The conformance suite's pytest plugin, one module per concern.

``options`` the kit's options and their checks; ``markers`` the suite's markers; ``state`` the
run's state in ``config.stash``; ``clusters`` the run's one collection of clusters, of the kind
its options choose; ``session`` when they and the batches of a run start and end; ``collection``
parametrization and deselection; ``fixtures`` the cluster, nodes and batches tests ask for;
``verdicts`` a scenario's verdict as a pytest outcome; ``reporting`` durations, timings and the
release matrix; ``sharding`` the shard of a split run (pytest-split) and its record; ``scratch``
the session's own temporary folder.

Who registers the modules, installed or not:

- Installed (a wheel, or a checkout installed editable), the ``priority-conformance`` entry
  point (``pytest_priority_conformance``, beside this package) registers them in a session that
  runs the suite, so that ``pytest --pyargs conformance --scheduler-binary ...`` works from any
  folder: the suite's conftest is no initial conftest there, and options it added would come
  too late.
- From a checkout without the entry point (or with plugin autoload disabled),
  ``conformance/conftest.py`` registers them (``pytest_plugins``).

pytest registers a module under its name once: a module the entry point registered is skipped
when the conftest names it again, so an editable install run from its checkout has each once.
"""

# In this order: scratch first (it sets pytest's basetemp before the tmpdir plugin reads it).
MODULES = [f"conformance.plugin.{m}" for m in
           ("scratch", "options", "markers", "session", "collection", "fixtures", "reporting", "sharding")]
