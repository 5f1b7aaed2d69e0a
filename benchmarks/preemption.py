"""How fast each scheduler build and release preempts at scale, and whether it still preempts right.

Run: ./kit bench preemption [--nodes 100,1000,5000] [--preemptors M] [--scheduler plugins,upstream]
                            [--k8s-version RELEASE,...] [--targets build@release,...] [--out DIR]
The logic is in harness/bench/ (docs/bench.md says how to read the tables and the plot).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.bench.preemption import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
