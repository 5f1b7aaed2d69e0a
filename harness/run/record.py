"""A watch kept on one kind of object in one namespace: the feed every recorded history reads.

Polling sees whatever happens to be current when it looks, so under load it misses
short-lived states and times things by when it looked. A watch delivers every version the
API server wrote, in its order. The feed lists first (so a history starts complete), then
watches from the list's resourceVersion, resuming each time from the last version it
delivered. When the server no longer has that version (410 Gone, after compaction), the
feed lists again and delivers what changed in the gap: the new or changed objects, and a
DELETED version (the last one seen) of each that went. ``stop`` ends the watch at once,
not at its next timeout, and joins the thread.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from harness.errors import KitError
from harness.host import lifecycle

GONE = 410
WATCH_SECONDS = 5  # each watch request's own timeout: the feed resumes from the last version after it
RETRY = 0.5  # seconds before a failed watch is tried again
FAILING_FOR = 15.0  # seconds of failed watches after which the history is no evidence any more

Sink = Callable[[str, Any], None]  # (ADDED | MODIFIED | DELETED, object as the API sent it)


def meta(obj: Any, key: str) -> str | None:
    """A metadata field of a typed object or of a custom object's dict."""
    if isinstance(obj, dict):
        return (obj.get("metadata") or {}).get({"resource_version": "resourceVersion"}.get(key, key))
    return getattr(obj.metadata, key, None)


def items(listing: Any) -> list:
    return (listing.get("items") or []) if isinstance(listing, dict) else listing.items


class WatchFeed:
    """Delivers every version of one list call's objects to ``sink``, from a first list to ``stop``."""

    def __init__(self, list_call: Callable, args: tuple, sink: Sink, what: str):
        self.list_call, self.args, self.sink, self.what = list_call, args, sink, what
        self.error: Exception | None = None
        self._failing_since: float | None = None
        self.relisted = 0  # lists after the first (a 410): the versions in such a gap are lost
        self._last: dict[str, Any] = {}  # name -> the last version delivered
        self._stop = threading.Event()
        self._watch: watch.Watch | None = None
        self._lock = threading.Lock()
        self._rv = self._list()
        self._thread = threading.Thread(target=self._run, name=f"watch-{what}", daemon=True)
        self._thread.start()

    def _deliver(self, kind: str, obj: Any) -> None:
        name = meta(obj, "name")
        if kind == "DELETED":
            self._last.pop(name, None)
        else:
            self._last[name] = obj
        self.sink(kind, obj)

    def _list(self) -> str:
        """List, and deliver the difference from what was delivered before."""
        listing = self.list_call(*self.args)
        now = {meta(o, "name"): o for o in items(listing)}
        for name, old in sorted(self._last.items()):
            if name not in now:
                self._deliver("DELETED", old)
        for name, obj in sorted(now.items()):
            old = self._last.get(name)
            if old is None or meta(old, "resource_version") != meta(obj, "resource_version"):
                self._deliver("ADDED" if old is None else "MODIFIED", obj)
        return meta(listing, "resource_version")

    def _run(self) -> None:
        while not self._stop.is_set() and not lifecycle.stopping():
            try:
                self._watch_once()
                self._failing_since = None
            except ApiException as e:
                if self._stop.is_set():
                    break
                if e.status == GONE:
                    try:
                        self._rv = self._list()
                        self.relisted += 1
                        continue
                    except Exception as again:
                        e = again
                self._failed(e)
            except Exception as e:  # a dropped connection: resume from the same version
                if self._stop.is_set():
                    break
                self._failed(e)

    def _watch_once(self) -> None:
        w = watch.Watch()
        with self._lock:
            if self._stop.is_set():
                return
            self._watch = w
        try:
            for ev in w.stream(self.list_call, *self.args, resource_version=self._rv,
                               timeout_seconds=WATCH_SECONDS, allow_watch_bookmarks=False):
                if self._stop.is_set():
                    return
                obj = ev["object"]
                self._rv = meta(obj, "resource_version") or self._rv
                self._failing_since = None
                self._deliver(ev["type"], obj)
        finally:
            with self._lock:
                self._watch = None

    def _failed(self, e: Exception) -> None:
        self.error = e
        self._failing_since = self._failing_since or time.monotonic()
        self._stop.wait(RETRY)

    def forgive(self) -> None:
        """Count failures afresh from now: an outage the kit made itself (an API server restart) is over."""
        if self._failing_since is not None:
            self._failing_since = time.monotonic()

    def check(self) -> None:
        """Raise if the watch has failed for so long that the history cannot be trusted."""
        since = self._failing_since
        if since is not None and time.monotonic() - since >= FAILING_FOR:
            raise KitError(f"the watch on {self.what} has failed for {FAILING_FOR:.0f} s: {self.error}")

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        end = time.monotonic() + timeout
        while self._thread.is_alive() and time.monotonic() < end:
            with self._lock:
                if self._watch is not None:
                    # Shuts the socket: the blocked read ends now. Asked again while the thread
                    # lives: a watch still connecting has no socket yet, and forgets the request.
                    self._watch.stop()
            self._thread.join(timeout=0.2)
