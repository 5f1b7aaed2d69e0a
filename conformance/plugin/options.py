"""The kit's pytest options, and the checks of their combinations before anything starts.

A wrong option or combination is one usage error (``pytest.UsageError``) naming the option;
a bad scenario file is one too, with its file and field. The options' names and defaults are
the README's and ``.ci/run``'s: they do not change.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.errors import KitError
from harness.targets import (BUILDS, DEFAULT_BUILD, SCHEDULER_MODULES, UnknownBuild, builds_on, not_built,
                             parse_builds, releases_of, split_target)
from conformance.plugin.state import RUN, RunOptions, RunState


# Options the kind plugins for pytest also register, with the same meaning: pytest-kind-ng (the
# maintained fork, whose KindCluster the kit's kind support uses) and pytest-kind both add
# --keep-cluster (keep the cluster the run made) and --kubeconfig (the kubeconfig of the cluster
# to use; they create a kind cluster through it if none of their name exists, the kit starts
# nothing). Where one of them is installed the kit reads its option instead of adding its own:
# pytest refuses a second option of the same name or destination, and one `--keep-cluster` then
# keeps both plugins' clusters. RunOptions.of reads them by name, whoever registered them.
SHARED = ("--keep-cluster", "--kubeconfig")


class _Group:
    """The kit's option group: an option another plugin already registers is shared if it is one
    of ``SHARED``, and any other clash is one usage error naming the option (pytest's own
    ValueError named only a destination, and came from whichever plugin was registered last)."""

    def __init__(self, parser: pytest.Parser) -> None:
        # Which of SHARED are taken, for the group's title in --help (pytest's map of option
        # names; without it, addoption below still finds them taken).
        taken = [o for o in SHARED if o in getattr(parser, "_opt2dest", {})]
        title = "priority-conformance" + (f"; {' and '.join(taken)} are listed under kind (pytest-kind's): the suite "
                                          f"reads them too, --kubeconfig as an existing cluster to run on"
                                          if taken else "")
        self.group = parser.getgroup("priority-conformance", description=title)

    def addoption(self, name: str, **attrs) -> None:
        try:
            self.group.addoption(name, **attrs)
        except (ValueError, argparse.ArgumentError) as e:
            if name in SHARED:
                return
            raise pytest.UsageError(
                f"priority-conformance: another pytest plugin already registers {name} ({e}); run the "
                f"suite with that plugin disabled: -p no:<its name> (pytest --trace-config lists them)") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    g = _Group(parser)
    g.addoption("--scheduler", default=None,
                help="scheduler build(s) under test, comma-separated: plugins (scheduler-plugins with "
                     "PreemptionToleration, default) and/or upstream (kube-scheduler with DefaultPreemption); "
                     "with --k8s-version and no --scheduler, every build that exists on each release")
    g.addoption("--k8s-version", default=None, metavar="RELEASE",
                help="Kubernetes release(s) of the whole local control plane, comma-separated (1.35,1.37) or "
                     "all; each build runs on each release where it builds (default: the newest release on "
                     "which both builds run). With several, the run ends with a scenario x release table")
    g.addoption("--scheduler-binary", type=Path, default=None,
                help="run this kube-scheduler binary instead of the kit's build (its semantics: --scheduler)")
    g.addoption("--scheduler-config", type=Path, default=None,
                help="KubeSchedulerConfiguration for the scheduler instead of the kit's")
    g.addoption("--flush-interval", default="60s", metavar="DURATION|default",
                help="the scheduler's flush interval (--pod-max-in-unschedulable-pods-duration) on the clusters "
                     "the kit starts: a parked pod nothing wakes is retried once parked this long (default 60s, "
                     "fast; 'default': the release's own 5 min, for release validation; kind and --kubeconfig "
                     "clusters run the release's own)")
    g.addoption("--keep-cluster", action="store_true",
                help="leave the local cluster running at the end and print its kubeconfig")
    g.addoption("--kubeconfig", type=Path, default=None,
                help="use the existing cluster this kubeconfig points at (explicit opt-in; nothing is started)")
    g.addoption("--cluster", choices=["local", "kind"], default="local",
                help="where to run: the embedded local cluster (default) or a kind cluster (see README)")
    g.addoption("--kind-binary", default=None,
                help="with --cluster kind: the kind binary to use (default: the kit's build of the pinned kind)")
    g.addoption("--kind-node-image", default=None, metavar="IMAGE",
                help="with --cluster kind: the node image, already on this Docker host (default: the kit's "
                     "offline build of its own release, `./kit kind-image`)")
    g.addoption("--scheduler-image", default=None,
                help="with --cluster kind: the kube-scheduler image under test, already on this Docker host "
                     "(default: the node image's own for upstream, the kit's scheduler-plugins build for plugins)")
    g.addoption("--kubelet-binary", type=Path, default=None,
                help="with --cluster kind: run this kubelet on the kind workers instead of the node image's "
                     "(a kubelet mutant: the real-kubelet scenarios then judge it)")
    g.addoption("--repeat", type=int, default=1, metavar="N",
                help="run each selected scenario N times side by side (to reproduce a rare failure); "
                     "each copy is a test of its own")
    g.addoption("--scheduler-verbosity", type=int, default=None, metavar="V",
                help="the local cluster's kube-scheduler logs at -v=V (its log lines land in a failing "
                     "scenario's artifacts); 4 shows each scheduling attempt, 5 the queue's moves")
    g.addoption("--artifacts", type=Path, default=Path("artifacts"), metavar="DIR",
                help="where failing scenarios leave their pods, events and scheduler log lines (default: artifacts)")
    g.addoption("--timelines", action="store_true",
                help="keep every pod scenario's timeline picture (timeline.png in its artifacts folder), a "
                     "passing one's too; a failing scenario's is always kept")
    g.addoption("--scenarios", type=Path, action="append", default=None, metavar="PATH",
                help="run these scenario files or folders instead of the kit's catalogue (repeatable; "
                     "add --with-catalogue to run the catalogue too)")
    g.addoption("--with-catalogue", action="store_true",
                help="with --scenarios: run the kit's own catalogue as well (the installed kit's, whatever the "
                     "current folder; the catalogue of --system)")
    g.addoption("--no-cluster", action="store_true",
                help="skip every test that needs a cluster (they are reported as skipped, not passed)")
    g.addoption("--system", choices=["pods", "karmada"], default="pods",
                help="what is under test: pods (kube-scheduler builds, default) or karmada (binding priority: "
                     "karmada-controller-manager and karmada-scheduler on a local Karmada control plane)")
    g.addoption("--feature-gates", default=None, metavar="GATE=BOOL,...",
                help="feature gates of the local clusters' Kubernetes components: Gate=true for all of them, "
                     "kube-scheduler:Gate=false for one; a scenario's own gates: come on top")
    g.addoption("--runtime-config", default=None, metavar="GROUP/VERSION,...",
                help="API versions the local clusters' kube-apiserver serves besides its defaults "
                     "(e.g. scheduling.k8s.io/v1alpha1)")
    g.addoption("--karmada-scheduler-binary", type=Path, default=None,
                help="with --system karmada: run this karmada-scheduler binary instead of the kit's build")
    g.addoption("--karmada-scheduler-gates", default=None, metavar="GATE=BOOL,...",
                help="with --system karmada: feature gates of karmada-scheduler over the kit's and the "
                     "scenario's (PriorityBasedScheduling=false runs a misconfigured scheduler the suite must catch)")


def targets(opts: RunOptions) -> list[str]:
    """The targets under test: a build, or build@release when --k8s-version is given."""
    return plan(opts)[0]


def plan(opts: RunOptions) -> tuple[list[str], list[tuple[str, str]]]:
    """The targets under test, and the (target, reason) cells asked for that cannot run.

    With --k8s-version, a build that does not exist on a release is not run there, and said so
    (the run's header and summary list it): never dropped in silence. Without --scheduler, the
    builds are every build on each release; an explicit build that runs nowhere asked is an error."""
    given = opts.scheduler is not None
    try:
        builds = parse_builds(opts.scheduler) if given else [DEFAULT_BUILD]
    except UnknownBuild as e:
        # The suite's usage line has always listed the unknown builds; scripts around it may match it.
        raise pytest.UsageError(f"{e.option}: unknown build {e.unknown}: choose from {', '.join(BUILDS)}") from None
    if opts.kubeconfig and len(builds) > 1:
        raise pytest.UsageError("--kubeconfig runs one existing cluster: give a single --scheduler")
    wanted = opts.k8s_version
    if wanted is None:
        return builds, []
    if opts.kubeconfig or opts.cluster != "local":
        raise pytest.UsageError("--k8s-version chooses the release of the local cluster the kit starts; "
                                "an existing or kind cluster runs the release it runs")
    from harness.build import pins

    known = pins.releases()
    chosen = known if wanted.strip() == "all" else [r.strip() for r in wanted.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in known]
    if unknown or not chosen:
        raise pytest.UsageError(f"--k8s-version: no release {', '.join(unknown) or repr(wanted)}: "
                                f"choose from {', '.join(known)} or all")
    if not given:
        builds = list(BUILDS)
    own_binary = opts.scheduler_binary is not None
    found, not_run = [], []
    for r in chosen:
        for b in builds:
            if own_binary or builds_on(b, r):
                found.append(f"{b}@{r}")
            else:
                not_run.append((f"{b}@{r}", not_built(b, r)))
    if not found:
        b = split_target(not_run[0][0])[0]
        raise pytest.UsageError(f"--k8s-version {wanted}: no {SCHEDULER_MODULES[b]} release builds on it; "
                                f"the {b} build runs on {', '.join(releases_of(b))}")
    return found, not_run


def load_scenarios(state: RunState) -> None:
    """A bad scenario file stops the run before anything starts, with its file and field."""
    from harness.formats import bindings, pods
    from harness.formats.common import ScenarioError

    try:
        if state.options.karmada:
            state.binding_scenarios = bindings.load_sources(_paths(state.options.scenarios))
        else:
            state.scenarios = pods.load_sources(_paths(state.options.scenarios))
    except ScenarioError as e:
        raise pytest.UsageError(f"invalid scenario: {e}") from None


def _paths(scenarios: tuple[Path, ...] | None) -> list[Path] | None:
    return list(scenarios) if scenarios is not None else None


def check_karmada(state: RunState) -> None:
    from harness.build import pins
    from harness.clusters.karmada import parse_gates

    opts = state.options
    if opts.cluster != "local" or opts.kubeconfig:
        raise pytest.UsageError("--system karmada runs on the local Karmada control plane the kit starts; "
                                "--cluster kind and --kubeconfig are for pod scheduling")
    release = opts.k8s_version
    if release is not None and release not in pins.releases():
        raise pytest.UsageError(f"--k8s-version: with --system karmada, one release of "
                                f"{', '.join(pins.releases())} for its API server and members")
    try:
        state.karmada_gates = parse_gates(opts.karmada_scheduler_gates or "")
    except KitError as e:
        raise pytest.UsageError(f"--karmada-scheduler-gates: {e}") from None


def check_kind(state: RunState) -> None:
    """A Docker host that cannot run kind is one error before anything is built."""
    from harness.build.base_image import image_exists
    from harness.clusters.kind import preflight

    opts = state.options
    try:
        state.kind_binary = preflight(opts.kind_binary)
    except KitError as e:
        raise pytest.UsageError(str(e)) from None
    if opts.kind_node_image and not image_exists(opts.kind_node_image):
        raise pytest.UsageError(f"--kind-node-image {opts.kind_node_image}: no such image "
                                "on this Docker host (the kit pulls nothing)")


def check_gates(opts: RunOptions) -> None:
    if not (opts.feature_gates or opts.runtime_config):
        return
    try:
        opts.gates
    except ValueError as e:
        raise pytest.UsageError(f"--feature-gates/--runtime-config: {e}") from None
    if opts.kind or opts.kubeconfig or opts.karmada:
        raise pytest.UsageError("--feature-gates and --runtime-config set the local clusters the kit starts for "
                                "pod scheduling; a kind cluster, an existing cluster or Karmada take them otherwise")


def check_flush(opts: RunOptions) -> None:
    try:
        opts.flush
    except KitError as e:
        raise pytest.UsageError(str(e)) from None


def check_files(opts: RunOptions) -> None:
    if opts.kind and opts.scheduler_config:
        raise pytest.UsageError("--scheduler-config is for the local cluster: on kind the kit mounts its own "
                                "configuration of each build (see kind-config.yaml)")
    if opts.kubelet_binary is not None and not opts.kind:
        raise pytest.UsageError("--kubelet-binary replaces the kubelet of kind's workers: add --cluster kind "
                                "(the local cluster's nodes are kwok's, with no kubelet)")
    for opt, p in (("--scheduler-binary", opts.scheduler_binary), ("--scheduler-config", opts.scheduler_config),
                   ("--kubelet-binary", opts.kubelet_binary),
                   ("--kubeconfig", opts.kubeconfig), ("--karmada-scheduler-binary", opts.karmada_scheduler_binary)):
        if p is not None and not p.is_file():
            raise pytest.UsageError(f"{opt}: file not found: {p}")


def pytest_configure(config: pytest.Config) -> None:
    # The checks in this order: with several mistakes, the same one is reported first as before.
    opts = RunOptions.of(config)
    found, not_run = plan(opts)
    state = RunState(options=opts, targets=found, not_run=not_run)
    load_scenarios(state)
    if opts.karmada:
        check_karmada(state)
    if opts.kind and not (opts.no_cluster or opts.collect_only):
        check_kind(state)
    check_gates(opts)
    check_flush(opts)
    check_files(opts)
    config.stash[RUN] = state
