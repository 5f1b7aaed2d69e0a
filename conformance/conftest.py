"""The conformance suite's pytest plugin (``conformance/plugin``).

The suite needs a cluster running the scheduler under test. By default it
starts one itself (the embedded local cluster: real control plane, kwok
nodes) and removes it at the end. Options choose the scheduler build, a
user's own scheduler binary or config, or an existing cluster.

A missing cluster is a failure, never a silent skip: only ``--no-cluster``
skips the cluster tests, and then pytest reports them as skipped.

An installed kit's entry point has registered these modules already when the
session runs the suite (``conformance.plugin``), and pytest then skips each
name here; from a checkout without the entry point, these register them.
"""

from conformance.plugin import MODULES

pytest_plugins = MODULES
