import freezegun
import pytest

from harness.host import scratch

# freezegun swaps datetime in every loaded module while time is frozen; the
# kubernetes client's pydantic models must keep the real one to build schemas.
freezegun.configure(extend_ignore_list=["kubernetes", "pydantic", "pydantic_core", "urllib3"])


# A session of its own under the kit's temporary folders (harness.host.scratch): pytest's shared
# one is cleaned by every other pytest session of the user, a conformance run's included.
_work = []


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _work.append(scratch.private_basetemp(config.option))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    while _work:
        scratch.remove(_work.pop())
