"""kubectl as the Karmada plane uses it: manifests in, output back, a failure one clear error."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.errors import KitError


@dataclass(frozen=True)
class Kubectl:
    binary: Path
    kubeconfig: Path  # Karmada's API server, unless a call names another cluster's

    def __call__(self, *args: str, stdin: str | None = None, kubeconfig: Path | None = None) -> str:
        cmd = [str(self.binary), "--kubeconfig", str(kubeconfig or self.kubeconfig), *args]
        out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise KitError(f"`kubectl {' '.join(args)}` failed on the Karmada API server: {out.stderr.strip()[-800:]}")
        return out.stdout
