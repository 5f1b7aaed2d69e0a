"""The kit's machinery around the model: builds, clusters, scenario formats, runs, campaigns, CLI.

Where the kit's own files are, for every module, whatever its depth.
"""

from pathlib import Path

# The kit's version, written once: `priority-conformance --version` prints it, and the installed
# distribution's must agree (tests/cli/test_cli_main.py).
__version__ = "0.1.0"

HARNESS = Path(__file__).resolve().parent
REPO = HARNESS.parent  # the checkout; in an installed kit, site-packages: read FILES, write nothing here
DATA = HARNESS / "data"  # the kit's behaviour as data: kwok stages, kind's base recipe, RBAC
GOMOD = HARNESS / "gomod"  # the wrapper Go modules the kit builds from
# The files the kit reads from the top of its repository (the catalogue, the mutants,
# kind-config.yaml): there in a checkout, copied into the package as _repo/ in a wheel (setup.py).
FILES = HARNESS / "_repo" if (HARNESS / "_repo").is_dir() else REPO
SCENARIOS = FILES / "scenarios"
