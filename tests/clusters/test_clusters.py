"""The cluster protocol (harness.clusters.base) without a cluster: every adapter has its shape, a
kept cluster survives its down(), and the run's one collection of clusters (conformance.plugin.clusters)
brings each up once and ends each once, whatever its kind."""

from __future__ import annotations

import dataclasses
import inspect
import threading
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.plugin.clusters import RunClusters, for_run
from conformance.plugin.state import RunOptions, RunState
from harness.clusters import base
from harness.clusters.base import Cluster
from harness.clusters.existing import ExistingCluster
from harness.clusters.karmada import KarmadaPlane
from harness.clusters.kind import KindCluster
from harness.clusters.local import ClusterOptions, LocalCluster
from harness.errors import KitError
from harness.host import lifecycle

METHODS = ("up", "log_path", "keep", "down")


def adapters(tmp_path: Path) -> list:
    """One of each kind, made with its options and nothing started."""
    return [LocalCluster(ClusterOptions(build="upstream", name="t")), KindCluster("upstream", tmp_path / "kind"),
            ExistingCluster(tmp_path / "kubeconfig"), KarmadaPlane()]


def test_every_adapter_has_the_protocol_s_shape(tmp_path):
    for cluster in adapters(tmp_path):
        assert isinstance(cluster, Cluster), type(cluster).__name__
        for name in METHODS:
            want = list(inspect.signature(getattr(Cluster, name)).parameters)
            assert list(inspect.signature(getattr(type(cluster), name)).parameters) == want, (type(cluster), name)
        # Nothing started: no kubeconfig to read yet, and nothing of it on this machine.
        assert cluster.kubeconfig is None and cluster.workdir is None and isinstance(cluster.timings, dict)
        assert cluster.name


class Fake:
    """A cluster that records what was asked of it."""

    def __init__(self, name: str = "fake", fails: Exception | None = None):
        self.name, self.fails, self.calls = name, fails, []
        self.timings: dict[str, float] = {}
        self.kubeconfig: Path | None = None
        self.workdir: Path | None = None

    def up(self) -> Path:
        self.calls.append("up")
        if self.fails is not None:
            raise self.fails
        self.kubeconfig = Path(f"/{self.name}/kubeconfig")
        self.timings["up"] = 1.0
        return self.kubeconfig

    def log_path(self, component: str) -> Path | None:
        return None

    def keep(self) -> str:
        self.calls.append("keep")
        return f"kept {self.name}"

    def down(self) -> None:
        self.calls.append("down")


def test_the_fake_is_a_cluster_too():
    assert isinstance(Fake(), Cluster)


def test_end_takes_a_cluster_down_or_keeps_it_and_says_how_to_reach_it(monkeypatch):
    gone, kept = Fake(), Fake()
    assert base.end(gone, keep=False) == "" and gone.calls == ["down"]
    # down() after keep() ends only what lives in the kit's process: every adapter's own rule.
    assert base.end(kept, keep=True) == "kept fake" and kept.calls == ["keep", "down"]
    monkeypatch.setattr(lifecycle, "stopping", lambda: True)
    stopped = Fake()
    assert base.end(stopped, keep=True) == "" and stopped.calls == ["down"]  # a stopped kit keeps nothing


def test_running_ends_the_cluster_whatever_the_block_does(capsys):
    c = Fake()
    with pytest.raises(RuntimeError):
        with base.running(c) as same:
            assert same is c and c.calls == ["up"]
            raise RuntimeError("the block failed")
    assert c.calls == ["up", "down"]
    with base.running(Fake("mine"), keep=True):
        pass
    assert capsys.readouterr().out == "\nkept mine\n"


def _local(tmp_path: Path, label: str = "") -> LocalCluster:
    """A local cluster as up() leaves it, without its processes: its folder and kubeconfig."""
    workdir = tmp_path / "cluster"
    workdir.mkdir()
    return LocalCluster(ClusterOptions(build="upstream", name="prio-t", label=label), workdir=workdir,
                        kubeconfig=workdir / "kubeconfig.yaml")


def test_a_kept_local_cluster_outlives_its_down(tmp_path):
    c = _local(tmp_path, label="upstream@1.35")
    workdir = c.workdir
    line = c.keep()
    assert line == (f"kept the upstream@1.35 cluster: KUBECONFIG={workdir}/kubeconfig.yaml; stop it with: "
                    f"KWOK_WORKDIR={workdir} kwokctl --name prio-t delete cluster")
    c.down()
    assert (workdir / lifecycle.KEEP_FILE).exists() and c.workdir == workdir


def test_a_local_cluster_not_kept_goes_with_its_folder_and_twice_is_harmless(tmp_path):
    c = _local(tmp_path)
    workdir = c.workdir
    c.down()
    c.down()
    assert not workdir.exists() and c.workdir is None and "down" in c.timings


def _kind(tmp_path: Path, ended: list) -> KindCluster:
    """A kind cluster as up() leaves it, without Docker: its folder, a client, the watchdog."""
    c = KindCluster("upstream", tmp_path / "kind")
    c.workdir = tmp_path / "kind-work"
    c.workdir.mkdir()
    c.kube = SimpleNamespace()
    c._stack = ExitStack()
    c._stack.callback(ended.append, "kwok and the client")
    c._watchdog = SimpleNamespace(wait=lambda timeout: ended.append(f"watchdog {timeout}"))
    return c


def test_a_kept_kind_cluster_keeps_its_containers_and_ends_what_the_kit_runs(tmp_path, monkeypatch):
    reaped, ended = [], []
    monkeypatch.setattr(lifecycle, "reap", reaped.append)
    c = _kind(tmp_path, ended)
    workdir = c.workdir
    assert c.kubeconfig == workdir / "kubeconfig" and c.log_path("kwok") == workdir / "kwok.log"
    assert c.log_path("kube-scheduler") is None  # it logs inside its node container
    line = c.keep()
    assert line == (f"kept kind cluster {c.name}: KUBECONFIG={workdir / 'kubeconfig'}; remove it with: "
                    f"{tmp_path / 'kind'} delete cluster --name {c.name}")
    c.down()
    assert reaped == [] and ended == ["kwok and the client", "watchdog 0"]
    assert (workdir / lifecycle.KEEP_FILE).exists()


def test_a_kind_cluster_not_kept_is_reaped_once(tmp_path, monkeypatch):
    reaped, ended = [], []
    monkeypatch.setattr(lifecycle, "reap", reaped.append)
    c = _kind(tmp_path, ended)
    workdir = c.workdir
    c.down()
    c.down()
    assert reaped == [workdir] and ended == ["kwok and the client", "watchdog 10"] and c.kubeconfig is None


def test_an_existing_cluster_is_only_reached(tmp_path):
    c = ExistingCluster(tmp_path / "missing")
    with pytest.raises(KitError, match="cannot load kubeconfig"):
        c.up()
    assert c.kubeconfig is None and c.keep() == "" and c.log_path("kube-scheduler") is None
    c.down()  # the kit made nothing of it


def test_a_kept_karmada_plane_keeps_its_host_and_members_and_stops_nothing(tmp_path):
    stopped = []
    plane = KarmadaPlane()
    host = _local(tmp_path)
    member_dir = tmp_path / "m1"
    member_dir.mkdir()
    member = LocalCluster(ClusterOptions(build="upstream", name="k-m1", label="member m1"), workdir=member_dir,
                          kubeconfig=member_dir / "kubeconfig.yaml")
    plane.host, plane.members = host, {"m1": member}
    plane.components = SimpleNamespace(stop_all=lambda: stopped.append("karmada"))
    assert plane.kubeconfig == host.kubeconfig and plane.workdir == host.workdir
    lines = plane.keep().splitlines()
    assert lines[0].startswith(f"kept Karmada control plane {plane.name}: KUBECONFIG={host.kubeconfig}; ")
    assert str(host.workdir / "karmada") in lines[0]
    assert lines[1].startswith("kept the upstream cluster: ") and lines[2].startswith("kept the member m1 cluster: ")
    plane.down()
    assert stopped == [] and plane.host is host and host.workdir.exists() and member_dir.exists()


# --- the run's one collection ---------------------------------------------------------------


def _clusters(made: list, fails: Exception | None = None, **kw) -> RunClusters:
    def make(target, suffix="", needs=None):
        c = Fake(target + (f"-{suffix}" if suffix else ""), fails=fails)
        made.append(c)
        return c

    return RunClusters(make, "cluster", **kw)


def test_a_target_s_cluster_comes_up_once_whoever_asks(tmp_path):
    made, noted = [], []
    clusters = _clusters(made, keep=False, noted=lambda t, c: noted.append(t))
    got = []
    threads = [threading.Thread(target=lambda: got.append(clusters.get("upstream"))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and got == [made[0]] * 4 and made[0].calls == ["up"] and noted == ["upstream"]
    extra = clusters.extra("upstream", "alone-0")
    assert extra.name == "upstream-alone-0" and extra.calls == [] and clusters.made == [made[0], extra]


def test_a_cluster_that_did_not_come_up_fails_every_asker_and_is_not_ended():
    made = []
    clusters = _clusters(made, keep=True, fails=KitError("no room"))
    for _ in range(2):
        with pytest.raises(KitError, match="no room"):
            clusters.get("upstream")
    clusters.end_all()
    assert len(made) == 1 and made[0].calls == ["up"] and clusters.came_up == {}


def test_a_fixture_s_cluster_ends_with_it_and_the_run_s_own_at_the_end(capsys):
    made = []
    mine = _clusters(made, keep=True)
    first = mine.get("upstream")
    mine.release("upstream")
    assert first.calls == ["up", "keep", "down"] and capsys.readouterr().out == "\nkept upstream\n"
    # Asked for again (pytest set the fixture up again): a new one; the summary reads the last.
    assert mine.get("upstream") is not first and mine.came_up["upstream"] is made[1]

    held = _clusters([], keep=False, held=True)
    c = held.get("plugins")
    held.release("plugins")
    assert c.calls == ["up"]
    held.end_all()
    held.end_all()
    assert c.calls == ["up", "down"] and held.came_up["plugins"] is c


DEFAULTS = RunOptions(
    scheduler=None, k8s_version=None, scheduler_binary=None, scheduler_config=None, keep_cluster=True,
    kubeconfig=None, cluster="local", kind_binary=None, kind_node_image=None, scheduler_image=None, repeat=1,
    scheduler_verbosity=None, artifacts=Path("artifacts"), scenarios=None, no_cluster=False, system="pods",
    karmada_scheduler_binary=None, karmada_scheduler_gates=None, feature_gates=None, runtime_config=None,
    collect_only=False, stop_at_first_failure=False)


@pytest.mark.parametrize("changes, kind, what, keep, held", [
    ({}, LocalCluster, "cluster", True, True),
    ({"cluster": "kind"}, KindCluster, "kind cluster", True, False),
    ({"kubeconfig": Path("k")}, ExistingCluster, "cluster", True, False),
    # The plane has never been kept: --keep-cluster is the pod clusters'.
    ({"system": "karmada"}, KarmadaPlane, "Karmada control plane", False, False),
])
def test_the_run_s_options_choose_one_kind_of_cluster(changes, kind, what, keep, held):
    state = RunState(options=dataclasses.replace(DEFAULTS, **changes), targets=["upstream"])
    state.kind_binary = Path("kind")
    clusters = for_run(state)
    made = clusters.make("upstream", "", None)
    assert type(made) is kind and (clusters.what, clusters.keep, clusters.held) == (what, keep, held)


def test_a_local_cluster_of_the_run_is_named_for_its_target_and_one_alone_gets_its_gates():
    from harness import gates

    state = RunState(options=dataclasses.replace(DEFAULTS, feature_gates="GenericWorkload=true"), targets=[])
    clusters = for_run(state)
    shared = clusters.make("upstream", "", None)
    alone = clusters.make("upstream", "x-0", gates.parse("kube-scheduler:SchedulerQueueingHints=false"))
    assert shared.options.label == "upstream" and shared.options.name.startswith("prio-upstream-")
    assert alone.options.name.endswith("-x-0") and len(alone.options.gates.gates) == 2
    assert shared.options.failure_logs == Path("artifacts").resolve() / "cluster-logs"
