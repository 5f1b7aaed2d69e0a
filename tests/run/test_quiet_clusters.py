"""Clusters scenarios have to themselves are handed on to the next scenario with the same
settings (one a fault ran on once its scheduler is started anew), stopped when they do not
settle, and never more than the limit at once."""

from __future__ import annotations

from harness import gates
from harness.run.pods.quiet import QuietClusters

PLAIN, GATED = gates.Settings(), gates.Settings(gates=(("", "GenericWorkload", True),))
LACKING = False  # whether the stand-in's release lacks GATED's gate


class Cluster:
    """Stands in for a LocalCluster: the pool only names, keeps and stops them."""

    def __init__(self, name, settings, fresh_fails=False):
        self.name, self.settings, self.stopped = name, settings, False
        self.fresh, self.fresh_fails = 0, fresh_fails

    def down(self):
        self.stopped = True

    def unavailable(self):
        return "Kubernetes 1.35 has no feature gate GenericWorkload" if self.settings == GATED and LACKING else ""

    def fresh_scheduler(self):
        if self.fresh_fails:
            raise RuntimeError("kube-scheduler did not become ready")
        self.fresh += 1


def pool(limit=2, settle=lambda c, run_id: None):
    made = []

    def make(name, settings):
        made.append(Cluster(name, settings))
        return made[-1]
    return QuietClusters(make, limit, settle), made


def test_a_quiet_cluster_goes_to_the_next_scenario_with_the_same_settings():
    q, made = pool()
    first, up = q.take("a", PLAIN)
    assert not up
    q.give_back(first, PLAIN, "r")
    again, up = q.take("b", PLAIN)
    assert again is first and up and not first.stopped
    other, up = q.take("c", GATED)
    assert other is not first and not up and len(made) == 2
    assert (q.served, q.started) == (3, 2)


def test_one_a_fault_ran_on_is_handed_on_with_its_scheduler_started_anew_and_only_then():
    q, made = pool()
    faulted, _ = q.take("a", PLAIN)
    q.give_back(faulted, PLAIN, "r", fresh_scheduler=True)
    assert faulted.fresh == 1 and not faulted.stopped
    again, up = q.take("b", PLAIN)
    assert again is faulted and up
    q.give_back(again, PLAIN, "r")
    assert faulted.fresh == 1  # a scenario without a fault leaves the scheduler as it is


def test_one_whose_fresh_scheduler_does_not_start_is_stopped_and_replaced():
    q, made = pool()
    c, _ = q.take("a", PLAIN)
    c.fresh_fails = True
    q.give_back(c, PLAIN, "r", fresh_scheduler=True)
    assert c.stopped and q.alive == 0 and q.take("b", PLAIN)[0] is not c


def test_one_a_run_gave_up_on_or_that_did_not_settle_is_stopped_and_replaced():
    q, made = pool()
    c, _ = q.take("a", PLAIN)
    q.lost(c)
    assert c.stopped and q.alive == 0

    def never(cluster, run_id):
        raise TimeoutError("namespaces still terminating")
    q2, _ = pool(settle=never)
    c2, _ = q2.take("a", PLAIN)
    q2.give_back(c2, PLAIN, "r")
    assert c2.stopped and q2.take("b", PLAIN)[0] is not c2


def test_at_the_limit_an_idle_cluster_of_other_settings_makes_room_and_close_stops_the_rest():
    q, made = pool(limit=1)
    plain, _ = q.take("a", PLAIN)
    q.give_back(plain, PLAIN, "r")
    gated, _ = q.take("b", GATED)
    assert plain.stopped and q.alive == 1
    q.give_back(gated, GATED, "r")
    q.close()
    assert gated.stopped and q.alive == 0


def test_room_holds_the_first_limit_until_widened_then_the_second():
    import threading

    from harness.run.pods.quiet import Room

    room = Room(2, 4)
    assert room.enter() and room.enter()
    third = threading.Event()

    def wait_for_room():
        if room.enter():
            third.set()
    t = threading.Thread(target=wait_for_room)
    t.start()
    assert not third.wait(1.5)  # two at once while the shared batch runs
    room.widen()
    assert third.wait(5)
    t.join()
    assert room.enter() and room.busy == 4  # four once widened
    stopping = threading.Event()
    stopping.set()
    assert room.enter(stopping.is_set) is False and room.busy == 4  # a stop ends the wait, holding nothing
    room.leave()
    assert room.enter(stopping.is_set) and room.busy == 4


def test_a_cluster_whose_gates_the_release_lacks_is_refused_before_an_idle_one_is_stopped(monkeypatch):
    import pytest

    import sys

    monkeypatch.setattr(sys.modules[__name__], "LACKING", True)
    q, made = pool(limit=1)
    plain, _ = q.take("a", PLAIN)
    q.give_back(plain, PLAIN, "r")
    with pytest.raises(gates.Unavailable, match="no feature gate"):
        q.take("b", GATED)
    assert not plain.stopped and q.alive == 1 and q.started == 1
    assert q.take("c", PLAIN) == (plain, True)


def test_a_build_runs_as_many_clusters_alone_as_the_free_memory_holds_with_the_other_build_beside_it():
    from harness.run.pods.batch import CLUSTER_BYTES, MAX_ALONE_CLUSTERS, MAX_ALONE_CLUSTERS_AFTER, alone_rooms

    gib = 1 << 30
    assert alone_rooms(2, 20 * gib) == (MAX_ALONE_CLUSTERS, MAX_ALONE_CLUSTERS_AFTER)
    assert alone_rooms(2, 6 * gib) == (3, 3)  # 4.5 GiB for two builds' clusters
    assert alone_rooms(1, 6 * gib) == (MAX_ALONE_CLUSTERS, 7)
    assert alone_rooms(2, CLUSTER_BYTES) == (1, 1)  # never none: a scenario alone still runs


def test_free_memory_is_the_cgroups_limit_where_that_leaves_less(tmp_path):
    from harness.host.memory import available as memory_available

    meminfo, cgroup = tmp_path / "meminfo", tmp_path / "cgroup"
    cgroup.mkdir()
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n")
    assert memory_available(meminfo, cgroup) == 20000000 * 1024
    (cgroup / "memory.max").write_text("max\n")
    assert memory_available(meminfo, cgroup) == 20000000 * 1024
    (cgroup / "memory.max").write_text(f"{5 << 30}\n")
    (cgroup / "memory.current").write_text(f"{2 << 30}\n")
    assert memory_available(meminfo, cgroup) == 3 << 30
    assert memory_available(tmp_path / "none", tmp_path / "none") is None
