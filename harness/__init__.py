"""The kit's machinery around the model: builds, clusters, scenario formats, runs, campaigns, CLI.

Where the kit's own files are, for every module, whatever its depth.
"""

from pathlib import Path

# The kit's version, written once: `priority-conformance --version` prints it, and the installed
# distribution's must agree (tests/test_cli_main.py).
__version__ = "0.1.0"

HARNESS = Path(__file__).resolve().parent
REPO = HARNESS.parent
DATA = HARNESS / "data"  # the kit's behaviour as data: kwok stages, kind's base recipe, RBAC
GOMOD = HARNESS / "gomod"  # the wrapper Go modules the kit builds from
SCENARIOS = REPO / "scenarios"
