"""On kind, the preemption scenarios once more on the workers' real kubelets.

The catalogue runs on kwok nodes of the kind cluster (``test_scenarios``); kwok plays the
kubelet from ``data/kwok-stages.yaml``. Here the scenarios where the kubelet's part shows (a
victim's graceful termination, its DisruptionTarget and deletion, the start times victims are
ranked by: ``placement.on_real_kubelets``) run again on the kind workers, one at a time, with
containerd running a container that outlasts SIGTERM, so a victim stays Terminating for its
grace period as the specs describe. Collected only with --cluster kind.
"""

from __future__ import annotations

import pytest

from conformance.plugin.verdicts import judge
from harness.run.pods.batch import Batch

pytestmark = [pytest.mark.real_kubelets]


def test_scenario_on_real_kubelets(real_scenario, build: str, real_batch: Batch, request):
    judge(real_scenario, real_batch, properties=request.node.user_properties)
