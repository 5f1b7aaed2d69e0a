"""One test per scenario file: the cluster under test must do what the model predicts.

On the local cluster, every build's scenarios start in the background as soon
as the tests are collected (``conformance.plugin.session``), each in its own namespace on its own
nodes, and an ``alone`` scenario on a cluster of its own, so a run takes about
as long as its longest scenario (``harness.run.pods.batch``). On a cluster the kit did
not start, they run when the first test asks for a result. Each test reports
its own scenario's comparison, and its own scenario's seconds as its duration.
"""

from __future__ import annotations

from conformance.plugin.verdicts import judge
from harness.run.pods.batch import Batch


def test_scenario(scenario, build: str, copy: int, batch: Batch, request):
    judge(scenario, batch, copy, request.node.user_properties)
