"""The run's state, kept in ``config.stash``: the options as read once, and what the run makes.

Every part of the plugin (options, session, fixtures, reporting) reads and writes this one
object instead of attributes hung on the pytest config.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness import gates

if TYPE_CHECKING:
    from conformance.plugin.clusters import RunClusters
    from conformance.plugin.session import Batches


@dataclass(frozen=True)
class RunOptions:
    """The kit's command-line options (their names and defaults: ``options.pytest_addoption``)."""

    scheduler: str | None  # None: not given (the default build, or every build with --k8s-version)
    k8s_version: str | None
    scheduler_binary: Path | None
    scheduler_config: Path | None
    keep_cluster: bool
    kubeconfig: Path | None
    cluster: str
    kind_binary: str | None
    kind_node_image: str | None
    scheduler_image: str | None
    repeat: int
    scheduler_verbosity: int | None
    artifacts: Path
    scenarios: tuple[Path, ...] | None
    no_cluster: bool
    system: str
    karmada_scheduler_binary: Path | None
    karmada_scheduler_gates: str | None
    feature_gates: str | None
    runtime_config: str | None
    collect_only: bool  # pytest's own --collect-only: nothing is built or started
    stop_at_first_failure: bool  # pytest's own -x
    timelines: bool = False  # --timelines: a passing scenario's timeline picture too
    flush_interval: str = "60s"  # --flush-interval (harness.flush.parse_option)
    kubelet_binary: Path | None = None  # --kubelet-binary: kind workers' kubelet (a kubelet mutant)

    @property
    def flush(self):
        """The flush interval the kit gives the schedulers it starts (None: the release's own)."""
        from harness import flush

        return flush.parse_option(self.flush_interval)

    @property
    def gates(self) -> gates.Settings:
        """The feature gates and runtime-config of every cluster the kit starts (checked at configure)."""
        return gates.parse(self.feature_gates or "", self.runtime_config or "")

    @classmethod
    def of(cls, config: pytest.Config) -> RunOptions:
        scenarios = config.getoption("--scenarios")
        system = config.getoption("--system")
        if scenarios is not None and config.getoption("--with-catalogue"):
            from harness.formats import bindings, pods

            scenarios = [*scenarios, bindings.CATALOGUE if system == "karmada" else pods.CATALOGUE]
        # pytest-kind's --kubeconfig, where it registered it (options.SHARED), is text.
        kubeconfig = config.getoption("--kubeconfig")
        return cls(
            scheduler=config.getoption("--scheduler"), k8s_version=config.getoption("--k8s-version"),
            scheduler_binary=config.getoption("--scheduler-binary"),
            scheduler_config=config.getoption("--scheduler-config"),
            keep_cluster=bool(config.getoption("--keep-cluster")),
            kubeconfig=Path(kubeconfig) if kubeconfig else None,
            cluster=config.getoption("--cluster"), kind_binary=config.getoption("--kind-binary"),
            kind_node_image=config.getoption("--kind-node-image"),
            scheduler_image=config.getoption("--scheduler-image"), repeat=config.getoption("--repeat"),
            scheduler_verbosity=config.getoption("--scheduler-verbosity"),
            artifacts=config.getoption("--artifacts"),
            scenarios=tuple(scenarios) if scenarios is not None else None,
            no_cluster=config.getoption("--no-cluster"), system=system,
            karmada_scheduler_binary=config.getoption("--karmada-scheduler-binary"),
            karmada_scheduler_gates=config.getoption("--karmada-scheduler-gates"),
            feature_gates=config.getoption("--feature-gates"), runtime_config=config.getoption("--runtime-config"),
            collect_only=config.getoption("collectonly"),
            stop_at_first_failure=config.getoption("maxfail") == 1,
            timelines=config.getoption("--timelines"), flush_interval=config.getoption("--flush-interval"),
            kubelet_binary=config.getoption("--kubelet-binary"))

    @property
    def karmada(self) -> bool:
        return self.system == "karmada"

    @property
    def kind(self) -> bool:
        return self.cluster == "kind"

    @property
    def local_mode(self) -> bool:
        """Whether this run starts local pod-scheduling clusters (a Karmada run starts its own plane)."""
        return not (self.no_cluster or self.kubeconfig or self.cluster != "local" or self.karmada)


@dataclass
class RunState:
    options: RunOptions
    targets: list[str]  # build, or build@release with --k8s-version, in the order reports list them
    not_run: list[tuple[str, str]] = field(default_factory=list)  # (target, why) asked for, not runnable
    scenarios: list = field(default_factory=list)  # pod scenarios (--system pods)
    binding_scenarios: list = field(default_factory=list)  # Karmada scenarios (--system karmada)
    karmada_gates: dict[str, bool] = field(default_factory=dict)
    kind_binary: Path | None = None  # what the kind preflight found
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    clusters: RunClusters | None = None  # the run's clusters, of whatever kind, once collected
    batches: Batches | None = None  # the scenarios started at collection, on the run's own local clusters
    timing_lines: list[str] = field(default_factory=list)  # for the terminal summary
    longest: float = 0.0  # the longest scenario's seconds
    preemptions: list[dict] = field(default_factory=list)  # every preemption's phase timings
    karmada_timings: dict[str, float] = field(default_factory=dict)
    karmada_seconds: float = 0.0  # the Karmada scenarios' time, one after another
    # For report.html: each scenario test's (scenario id, target, timeline picture) by node id,
    # and the rows of those that ended (harness.site.report.Row).
    report_tests: dict[str, tuple] = field(default_factory=dict)
    report_rows: list = field(default_factory=list)


RUN = pytest.StashKey[RunState]()


def run_state(config: pytest.Config) -> RunState:
    return config.stash[RUN]
