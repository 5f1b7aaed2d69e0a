"""Fixtures of the campaign's tests."""

import pytest

from harness.campaign import run


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(run, "POLL", 0)
    monkeypatch.setattr(run.time, "sleep", lambda s: None)
