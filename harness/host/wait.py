"""Bounded waits on an observable condition (tenacity), never a bare sleep; a stopping run waits for nothing."""

from __future__ import annotations

from typing import Callable, TypeVar

from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

from harness.errors import KitError
from harness.host import lifecycle

T = TypeVar("T")


class NotYet(Exception):
    """Raised inside a wait: the condition does not hold yet."""


def wait_for(check: Callable[[], T], timeout: float, what: str, interval: float = 0.2) -> T:
    """Poll ``check`` until it returns without raising NotYet; KitError naming ``what`` on timeout."""
    def checked() -> T:
        lifecycle.check()  # a stopping run waits for nothing
        return check()

    try:
        for attempt in Retrying(
            stop=stop_after_delay(timeout), wait=wait_fixed(interval), retry=retry_if_exception_type(NotYet), reraise=False
        ):
            with attempt:
                return checked()
    except RetryError as e:
        last = e.last_attempt.exception()
        raise KitError(f"timed out after {timeout:.0f} s waiting for {what}" + (f": {last}" if str(last) else "")) from None
    raise AssertionError("unreachable")
