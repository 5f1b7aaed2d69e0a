"""The session's own temporary base folder (harness.host.scratch): set before pytest's tmpdir
plugin reads the option, removed when the session ends."""

from __future__ import annotations

import pytest

from harness.host import scratch

_WORK = pytest.StashKey[object]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[_WORK] = scratch.private_basetemp(config.option)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    scratch.remove(config.stash.get(_WORK, None))
