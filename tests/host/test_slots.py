"""The machine's start slots: never more control planes starting at once than there are slots,
across threads and processes, and a slot freed when its holder ends."""

import subprocess
import sys
import threading
import time
import uuid

import pytest


@pytest.fixture(autouse=True)
def own_slots(monkeypatch):
    """Slots of the test's own: the machine's are shared with any run going on beside the tests."""
    from harness.host import slots

    name = f"priority-conformance-test-{uuid.uuid4().hex}/start-slot/{{}}"
    monkeypatch.setattr(slots, "SLOT", name)
    return name


def test_no_more_holders_at_once_than_slots(monkeypatch):
    from harness.host import slots

    monkeypatch.setattr(slots, "count", lambda: 2)
    holding, most, lock = [0], [0], threading.Lock()

    def start() -> None:
        with slots.start_slot(poll=0.01):
            with lock:
                holding[0] += 1
                most[0] = max(most[0], holding[0])
            # Held until two overlap (or 5 s), so a slow thread start on a loaded machine does not
            # make the overlap look missing; then a moment longer, for a third to try its luck.
            end = time.monotonic() + 5
            while most[0] < 2 and time.monotonic() < end:
                time.sleep(0.01)
            time.sleep(0.1)
            with lock:
                holding[0] -= 1

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert most[0] == 2 and holding[0] == 0


def test_a_slot_held_by_another_process_is_waited_for_and_freed_when_it_exits(own_slots, monkeypatch):
    from harness.host import slots

    monkeypatch.setattr(slots, "count", lambda: 1)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(chr(0) + sys.argv[1]); "
                               "print('held', flush=True); time.sleep(1)", own_slots.format(0)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        with slots.start_slot(poll=0.02) as index:
            waited = time.monotonic() - t0
        assert index == 0 and waited > 0.5  # it waited for the other process's start
    finally:
        holder.kill()
        holder.wait()


def test_a_stop_request_ends_the_wait(monkeypatch):
    from harness.host import lifecycle, slots

    monkeypatch.setattr(slots, "count", lambda: 1)
    monkeypatch.setattr(lifecycle, "_stopping", threading.Event())
    with slots.start_slot():
        lifecycle._stopping.set()
        with pytest.raises(lifecycle.StopRequested):
            with slots.start_slot(poll=0.01):
                pass
