"""Nothing the kit starts outlives it: signals, owners, a watchdog, and reaping.

Three layers, each covering what the one before cannot:

1. Signals. SIGINT, SIGTERM and SIGHUP all raise ``Interrupted`` (a
   KeyboardInterrupt) in the main thread, whatever disposition the process
   inherited: a job started in the background from a non-interactive shell
   inherits SIGINT as ignored, and CI runners, ``timeout`` and cancellation
   send SIGTERM. Every cleanup path that handles Ctrl-C then handles them too.
2. The watchdog. kwokctl starts each component in a session of its own, so
   a signal to the kit's process group never reaches them, and SIGKILL of the
   kit runs no cleanup at all. Each local cluster therefore gets a small
   watchdog process (its own session too) that waits for the kit process to
   end and then stops whatever the cluster left running and removes its
   directory. A cluster kept on purpose carries a ``keep`` file and is spared.
3. Reaping. Should the watchdog die with its owner (a cgroup kill takes both,
   but then it takes the components too), the next cluster started on this
   machine removes every cluster directory whose owner is gone.

A cluster's processes are found by their command lines, which all name files
in the cluster's private directory: that covers a kwokctl still starting
components when its owner died, which no pid file lists yet.
"""

from __future__ import annotations

from harness import REPO

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness.errors import KitError

WORKDIR_PREFIX = "priority-conformance-"
OWNER_FILE = "owner.json"
KEEP_FILE = "keep"


class Interrupted(KeyboardInterrupt):
    """A stop request (SIGINT, SIGTERM or SIGHUP), raised where the main thread is."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_stopping = threading.Event()


def stopping() -> bool:
    """True once a stop was requested: long waits in worker threads give up early."""
    return _stopping.is_set()


def pause(seconds: float, cancel: threading.Event | None = None) -> None:
    """Sleep, but wake at once when a stop is requested, or ``cancel`` is set (then raise, so the caller ends)."""
    end = time.monotonic() + seconds
    while True:
        if _stopping.is_set() or (cancel is not None and cancel.is_set()):
            raise StopRequested()
        left = end - time.monotonic()
        if left <= 0:
            return
        (cancel or _stopping).wait(min(left, 0.5))


def check() -> None:
    """Raise if a stop was requested: for polling loops in worker threads."""
    if _stopping.is_set():
        raise StopRequested()


class StopRequested(Exception):
    """Raised in worker threads once a stop was requested, so their loops end."""

    def __str__(self) -> str:
        return "the run was stopped"


def _on_signal(signum, frame) -> None:
    if _stopping.is_set():
        # Teardown is already under way; a second signal must not cut it short.
        print(f"priority-conformance: {signal.Signals(signum).name} again; still stopping", file=sys.stderr, flush=True)
        return
    _stopping.set()
    print(f"priority-conformance: {signal.Signals(signum).name}: stopping and removing everything started",
          file=sys.stderr, flush=True)
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    """SIGINT, SIGTERM and SIGHUP stop the kit cleanly, even if SIGINT was inherited as ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)


# --- owners -------------------------------------------------------------------------


def start_time(pid: int) -> str | None:
    """The kernel's start time of a process: a pid alone may be reused."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return None


def write_owner(workdir: Path, pid: int | None = None) -> None:
    pid = pid or os.getpid()
    (workdir / OWNER_FILE).write_text(json.dumps({"pid": pid, "start": start_time(pid)}))


def owner_alive(workdir: Path) -> bool:
    try:
        rec = json.loads((workdir / OWNER_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return True  # not ours to judge: no record, no reaping
    start = start_time(int(rec["pid"]))
    return start is not None and start == rec.get("start")


def keep(workdir: Path) -> None:
    """Mark a cluster as kept on purpose (``--keep-cluster``): no watchdog or reaper touches it."""
    (workdir / KEEP_FILE).touch()


# --- finding and stopping a cluster's processes ----------------------------------------


def processes_naming(path: Path) -> list[int]:
    """Pids of live processes whose command line mentions ``path`` (this process excluded)."""
    needle = str(path).encode()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
        if needle in cmdline and state not in ("Z", "X") and b"harness.host.watchdog" not in cmdline:
            out.append(int(entry.name))
    return out


def stop_processes(pids: list[int], grace: float = 3.0) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    end = time.monotonic() + grace
    while time.monotonic() < end and any(alive(p) for p in pids):
        for p in pids:
            try:
                os.waitpid(p, os.WNOHANG)  # reap it if it is our child
            except ChildProcessError:
                pass
        time.sleep(0.05)
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def alive(pid: int) -> bool:
    """Running, not merely not yet reaped: a dead component stays a zombie where nothing reaps orphans."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False


def rss_of_kit(workdirs: list[Path], known: dict[int, bool] | None = None) -> int:
    """Bytes resident in this process and in every process of the given clusters (their command
    lines name the cluster's directory): the kit's memory, sampled. ``known``: whether a pid is
    one of them, as an earlier sample over the same clusters read it (``RssSampler``)."""
    needles = [str(w).encode() for w in workdirs]
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            pid = int(entry.name)
            mine = pid == os.getpid() or (known or {}).get(pid)
            if mine is None:
                cmdline = (entry / "cmdline").read_bytes()
                mine = any(n in cmdline for n in needles)
                if known is not None and cmdline:  # empty: a kernel thread, or a child not yet exec'd
                    known[pid] = mine
            if not mine:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError):
            continue
    return total


class RssSampler:
    """``rss_of_kit`` sampled again and again over the same clusters: a process's command line is
    read once, not every second (about 40 ms of CPU a sample on a machine running twenty
    clusters). What it learnt is forgotten when the clusters change, and a "not one of them" every
    ``FORGET`` samples: a child read between its fork and its exec still shows its parent's."""

    FORGET = 10

    def __init__(self) -> None:
        self.known: dict[int, bool] = {}
        self.over: tuple[str, ...] = ()
        self.samples = 0

    def __call__(self, workdirs: list[Path]) -> int:
        over = tuple(sorted(map(str, workdirs)))
        self.samples += 1
        if over != self.over:
            self.known, self.over = {}, over
        elif self.samples % self.FORGET == 0:
            self.known = {pid: True for pid, mine in self.known.items() if mine}
        return rss_of_kit(workdirs, self.known)


TEARDOWN_FILE = "teardown.json"


def add_teardown(workdir: Path, argv: list[str]) -> None:
    """A command the reaper runs for this directory's owner: what no process or file records
    (a kind cluster's containers live in Docker, not here)."""
    path = workdir / TEARDOWN_FILE
    commands = json.loads(path.read_text()) if path.exists() else []
    commands.append(argv)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(commands))
    tmp.replace(path)


def run_teardown(workdir: Path) -> None:
    try:
        commands = json.loads((workdir / TEARDOWN_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return
    for argv in commands:
        try:
            subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            pass


def reap(workdir: Path) -> None:
    """Stop everything that names ``workdir``, run its teardown commands, and remove it."""
    quiet_rounds = 0
    deadline = time.monotonic() + 60
    while quiet_rounds < 2 and time.monotonic() < deadline:
        pids = processes_naming(workdir)
        if pids:
            quiet_rounds = 0
            stop_processes(pids)
        else:
            quiet_rounds += 1
            time.sleep(0.3)
    run_teardown(workdir)
    shutil.rmtree(workdir, ignore_errors=True)


def reap_orphans(base: Path | None = None) -> list[Path]:
    """Remove the clusters of kit processes that are gone (killed before they could clean up)."""
    base = base or Path(tempfile.gettempdir())
    reaped = []
    for d in sorted(base.glob(WORKDIR_PREFIX + "*")):
        if d.is_dir() and (d / OWNER_FILE).exists() and not (d / KEEP_FILE).exists() and not owner_alive(d):
            reap(d)
            reaped.append(d)
    return reaped


def start_watchdog(workdir: Path) -> subprocess.Popen:
    """A process that outlives the kit just long enough to clean up after it.

    If it cannot start, the work folder (only owner.json by then) goes at once and the error
    names what failed: nothing of the cluster exists yet to clean up."""
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "harness.host.watchdog", str(os.getpid()), str(workdir)],
            cwd=REPO,
            # An environment of its own, built before the fork: with env=None the child execs with
            # the process's live `environ`, and one release-matrix run saw that exec fail with
            # EFAULT ("Bad address") while other threads were starting clusters.
            env=dict(os.environ),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,  # a signal to the kit's process group must not take it too
        )
    except OSError as e:
        shutil.rmtree(workdir, ignore_errors=True)
        raise KitError(f"could not start the cleanup watchdog ({sys.executable} -m harness.host.watchdog): {e}") from None


# --- child processes under way ----------------------------------------------------------

_children: set[subprocess.Popen] = set()  # what an interrupt must stop: each is a whole pytest run


def run_child(argv: list[str], **popen) -> int:
    """Run ``argv`` to its end and return its exit status; until then ``stop_children`` can end it.
    Worker threads run children while the main thread takes the interrupt, so the main thread
    needs this registry to reach them."""
    proc = subprocess.Popen(argv, **popen)
    _children.add(proc)
    try:
        return proc.wait()
    finally:
        _children.discard(proc)


def stop_children(grace: float = 120) -> None:
    """SIGTERM every child under way, then wait up to ``grace`` seconds for each before SIGKILL:
    a child pytest run tears its own clusters down on SIGTERM, which takes a while."""
    for p in list(_children):
        p.terminate()
    for p in list(_children):
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            p.kill()
