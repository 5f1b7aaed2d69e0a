"""The conformance suite's pytest plugin, one module per concern.

``options`` the kit's options and their checks; ``state`` the run's state in ``config.stash``;
``session`` the clusters and batches of a run; ``collection`` parametrization and deselection;
``fixtures`` the cluster, nodes and batches tests ask for; ``verdicts`` a scenario's verdict as
a pytest outcome; ``reporting`` durations, timings and the release matrix; ``sharding`` the
shard of a split run (pytest-split) and its record; ``scratch`` the session's own temporary folder.
"""

# Registered by conformance/conftest.py (pytest_plugins), in this order.
MODULES = [f"conformance.plugin.{m}" for m in
           ("scratch", "options", "session", "collection", "fixtures", "reporting", "sharding")]
