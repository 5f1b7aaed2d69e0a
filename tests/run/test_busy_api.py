"""A busy API server (429, 503, 504) does not fail a run: reads are repeated, and a write whose
answer was lost is checked before it is repeated, so it lands exactly once."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from harness.errors import KitError
from harness.kube import read_retries, write_once


class Store:
    """What the API server holds, and an answer script: each write gets the next answer."""

    def __init__(self, answers: list[int | None], lands_despite: tuple[int, ...] = (504,)):
        self.answers, self.lands_despite = list(answers), lands_despite
        self.objects: list[str] = []
        self.writes = 0

    def create(self) -> None:
        self.writes += 1
        status = self.answers.pop(0) if self.answers else None
        if status is None or status in self.lands_despite:
            if "pod" in self.objects:
                raise ApiException(status=409, reason="AlreadyExists")
            self.objects.append("pod")
        if status is not None:
            raise ApiException(status=status, reason="busy")

    def landed(self) -> bool:
        return "pod" in self.objects


def test_a_write_that_landed_before_its_504_is_not_repeated():
    s = Store([504])
    write_once(s.create, s.landed, "creating pod", bound=5)
    assert s.objects == ["pod"] and s.writes == 1


def test_a_write_refused_while_busy_is_repeated_until_it_lands():
    s = Store([503, 429], lands_despite=())
    write_once(s.create, s.landed, "creating pod", bound=5)
    assert s.objects == ["pod"] and s.writes == 3


def test_a_repeat_answered_conflict_has_landed():
    s = Store([504, 504])  # the first landed; the check saw it, so no repeat runs
    write_once(s.create, lambda: False, "creating pod", bound=5)  # a check that cannot see it
    assert s.objects == ["pod"] and s.writes == 2  # the repeat's 409 says it is there


def test_a_refusal_is_not_retried():
    def refuse():
        raise ApiException(status=422, reason="Invalid")
    with pytest.raises(ApiException) as e:
        write_once(refuse, lambda: False, "creating pod", bound=5)
    assert e.value.status == 422


def test_a_server_busy_past_the_bound_is_one_clear_error():
    s = Store([503] * 100, lands_despite=())
    with pytest.raises(KitError, match="creating pod .*answered 503 at first"):
        write_once(s.create, s.landed, "creating pod", bound=2)


@pytest.mark.parametrize("method,status,again", [
    ("GET", 504, True), ("GET", 429, True), ("GET", 503, True), ("HEAD", 504, True),
    ("GET", 500, False), ("GET", 404, False),
    ("POST", 504, False), ("DELETE", 504, False), ("PUT", 504, False), ("PATCH", 504, False),
])
def test_only_reads_are_repeated_by_the_client(method, status, again):
    assert read_retries().is_retry(method, status) is again
