"""The suite in shards: pytest-split chooses the tests, this names the shard and records it.

pytest-split (``--splits N --group i``, balanced by a ``--durations-path`` file, by count
without one) deselects in its ``pytest_collection_modifyitems``, which runs last; the kit's
background batches read ``session.items`` only afterwards, in ``pytest_collection_finish``, so
a shard's clusters run exactly its own scenarios. An ``alone`` scenario still gets a cluster of
its own in whichever shard it lands (``harness.run.pods.placement``, per scenario).

``--splits N`` without ``--group`` takes the group from ``JOB_COMPLETION_INDEX`` (a Kubernetes
Indexed Job's pod index, from 0; groups count from 1).
"""

from __future__ import annotations

import json
import time

import pytest

from harness.errors import KitError
from harness.shards.split import ENV, Shard, job_index, record
from conformance.plugin.state import run_state

RECORD = "shard-conformance.json"  # beside the shard's artifacts, for ./kit merge


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # pytest-split checks --splits and --group in its own tryfirst pytest_cmdline_main. Among
    # tryfirst hooks the plugin registered later runs first: this module comes with the suite's
    # conftest, after pytest-split's entry point, so the group is set before it is checked.
    option = config.option
    if getattr(option, "splits", None) is None or getattr(option, "group", None) is not None:
        return None
    try:
        index = job_index()
    except KitError as e:
        raise pytest.UsageError(str(e)) from None
    if index is None:
        raise pytest.UsageError(f"--splits {option.splits}: name the group, --group i (from 1), or set {ENV} "
                                f"(from 0, as a Kubernetes Indexed Job does)")
    if index > option.splits:
        raise pytest.UsageError(f"{ENV}={index - 1}: group {index} of --splits {option.splits} does not exist "
                                f"({ENV} counts from 0, groups from 1)")
    option.group = index
    return None


_started = pytest.StashKey[float]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_started] = time.time()


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    splits, group = getattr(config.option, "splits", None), getattr(config.option, "group", None)
    if not (splits and group) or config.getoption("collectonly") or _started not in config.stash:
        return
    artifacts = run_state(config).options.artifacts
    artifacts.mkdir(parents=True, exist_ok=True)
    rec = record("conformance", Shard(group, splits), [i.nodeid for i in session.items], config.stash[_started],
                 junitxml=config.getoption("xmlpath"))
    (artifacts / RECORD).write_text(json.dumps(rec, indent=1) + "\n")
