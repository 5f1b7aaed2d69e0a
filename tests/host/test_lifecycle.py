"""What keeps the kit from leaving things behind, without a cluster: signals, reaping, locks, ports."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from harness.host import lifecycle, ports
from harness.build import toolchain


def _sleeper(workdir: Path) -> subprocess.Popen:
    # A stand-in for a component: its command line names the cluster directory, as theirs do.
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(workdir / "etcd")],
                            start_new_session=True)
    _until_named(workdir, proc.pid)
    return proc


def _until_named(workdir: Path, pid: int) -> None:
    # Until it has exec'd, a child's command line is its parent's: on a busy machine that lasts.
    end = time.monotonic() + 10
    while pid not in lifecycle.processes_naming(workdir) and time.monotonic() < end:
        time.sleep(0.02)


def test_a_cluster_whose_owner_is_gone_is_reaped(tmp_path):
    workdir = tmp_path / f"{lifecycle.WORKDIR_PREFIX}orphan"
    workdir.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lifecycle.write_owner(workdir)
    rec = json.loads((workdir / lifecycle.OWNER_FILE).read_text())
    (workdir / lifecycle.OWNER_FILE).write_text(json.dumps({**rec, "pid": dead.pid}))
    component = _sleeper(workdir)
    try:
        assert lifecycle.processes_naming(workdir) == [component.pid]
        assert lifecycle.reap_orphans(tmp_path) == [workdir]
        assert component.wait(timeout=10) is not None
        assert not workdir.exists()
    finally:
        component.kill()


def test_a_cluster_whose_owner_lives_or_that_is_kept_is_not_reaped(tmp_path):
    alive = tmp_path / f"{lifecycle.WORKDIR_PREFIX}alive"
    kept = tmp_path / f"{lifecycle.WORKDIR_PREFIX}kept"
    for d in (alive, kept):
        d.mkdir()
    lifecycle.write_owner(alive)
    (kept / lifecycle.OWNER_FILE).write_text(json.dumps({"pid": 999999999, "start": "0"}))
    lifecycle.keep(kept)
    assert lifecycle.reap_orphans(tmp_path) == []
    assert alive.exists() and kept.exists()


def test_the_watchdog_cleans_up_after_an_owner_killed_with_sigkill(tmp_path):
    workdir = tmp_path / "cluster"
    script = tmp_path / "owner.py"
    script.write_text(textwrap.dedent(f"""\
        import sys, time, subprocess
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from pathlib import Path
        from harness.host import lifecycle
        w = Path({str(workdir)!r}); w.mkdir()
        lifecycle.start_watchdog(w)
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(w / "etcd")], start_new_session=True)
        end = time.monotonic() + 10  # until it has exec'd, its command line is this one's
        while p.pid not in lifecycle.processes_naming(w) and time.monotonic() < end:
            time.sleep(0.02)
        print("up", flush=True)
        time.sleep(60)
        """))
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "up"
        assert lifecycle.processes_naming(workdir)
        owner.kill()
        owner.wait()
        end = time.monotonic() + 20
        while time.monotonic() < end and (workdir.exists() or lifecycle.processes_naming(workdir)):
            time.sleep(0.2)
        assert not workdir.exists() and not lifecycle.processes_naming(workdir)
    finally:
        owner.kill()
        lifecycle.stop_processes(lifecycle.processes_naming(workdir))


def test_sigterm_and_sighup_stop_like_ctrl_c_even_with_sigint_ignored(tmp_path):
    script = tmp_path / "kit.py"
    script.write_text(textwrap.dedent(f"""\
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from harness.host import lifecycle
        lifecycle.install_signal_handlers()
        try:
            print("ready", flush=True)
            time.sleep(30)
        except KeyboardInterrupt as e:
            print("cleaned up after", e, flush=True)
            sys.exit(3)
        """))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            assert proc.stdout.readline().strip() == "ready"
            proc.send_signal(sig)
            out, _ = proc.communicate(timeout=10)
            assert proc.returncode == 3 and f"cleaned up after {sig.name}" in out
        finally:
            proc.kill()


def test_a_second_process_waits_for_the_build_lock_then_finds_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIORITYKIT_CACHE", str(tmp_path))
    order = []
    held = threading.Event()

    def first():
        with toolchain.build_lock("m", "k"):
            order.append("first in")
            held.set()
            time.sleep(0.5)
            order.append("first out")

    t = threading.Thread(target=first)
    t.start()
    held.wait(5)
    with toolchain.build_lock("m", "k"):
        order.append("second in")
    t.join()
    assert order == ["first in", "first out", "second in"]


def test_clusters_reserve_disjoint_free_ports():
    a = ports.reserve("a")
    b = ports.reserve("b")
    try:
        assert set(a) == set(ports.PORT_OPTIONS) and len(set(a.values())) == len(a)
        assert set(a.values()).isdisjoint(b.values())
        assert all(ports.LOW <= p < ports.HIGH for p in (*a.values(), *b.values()))
        assert all(ports.held(p) for p in a.values())
    finally:
        ports.release("a")
        ports.release("b")
    assert not any(ports.held(p) for p in a.values())


def test_a_port_another_kit_process_holds_is_not_given_even_while_nothing_listens_on_it(tmp_path):
    # Another kit process (another cache, another run) holds a cluster's ports: one of them free
    # for the moment, as an API server's is while a fault step restarts it.
    code = ("import sys, time; from harness.host import ports; "
            "got = ports.reserve('other', names=('p',)); print(got['p'], flush=True); time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PRIORITYKIT_CACHE": str(tmp_path)})
    try:
        port = int(other.stdout.readline())
        assert ports.held(port)
        # Every port of the range but that one is taken here: a reserve must find it held.
        rng = random.Random(0)
        rng.randrange = lambda low, high: port
        with pytest.raises(OSError, match="no 1 free ports"):
            ports.reserve("mine", rng=rng, names=("p",))
    finally:
        other.kill()
        other.wait()
    # Its process gone, the kernel dropped the claim: nothing stale to clean.
    assert not ports.held(port)
    rng = random.Random(0)
    rng.randrange = lambda low, high: port
    assert ports.reserve("mine", rng=rng, names=("p",)) == {"p": port}
    ports.release("mine")


def test_pause_wakes_when_a_stop_is_requested(monkeypatch):
    monkeypatch.setattr(lifecycle, "_stopping", threading.Event())
    threading.Timer(0.2, lifecycle._stopping.set).start()
    started = time.monotonic()
    with pytest.raises(lifecycle.StopRequested):
        lifecycle.pause(30)
    assert time.monotonic() - started < 5


def test_a_watchdog_that_cannot_start_leaves_no_work_folder(tmp_path, monkeypatch):
    workdir = tmp_path / (lifecycle.WORKDIR_PREFIX + "x")
    workdir.mkdir()
    lifecycle.write_owner(workdir)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(lifecycle.KitError, match="cleanup watchdog"):
        lifecycle.start_watchdog(workdir)
    assert not workdir.exists()


def test_the_memory_sampler_counts_the_clusters_processes_reading_each_command_line_once(tmp_path):
    import subprocess
    import sys
    import time

    from harness.host.lifecycle import RssSampler

    sample = RssSampler()
    alone = sample([tmp_path])
    # A process whose command line names the cluster's directory, as every component's does.
    child = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(64 << 20); time.sleep(60)",
                              str(tmp_path)])
    try:
        deadline = time.monotonic() + 20
        while sample([tmp_path]) < alone + (48 << 20):
            assert time.monotonic() < deadline, "the child's memory was never counted"
            time.sleep(0.2)
        assert sample.known[child.pid] is True
        assert sample([tmp_path / "another"]) < alone + (48 << 20)  # other clusters: learnt anew
        assert child.pid not in sample.known or sample.known[child.pid] is False
    finally:
        child.kill()
        child.wait()
