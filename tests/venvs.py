"""Virtualenvs for the tests that install the kit or another plugin: made without a network, their
dependencies this environment's own, seen through a folder of links to its site-packages."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path


def run(cmd: list, cwd: Path, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def ok(out: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert out.returncode == 0, f"{' '.join(out.args)} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out


def builds_offline() -> bool:
    """Whether this environment's setuptools can build the wheel itself (>= 70.1 has bdist_wheel)."""
    try:
        version = tuple(int(p) for p in metadata.version("setuptools").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return version >= (70, 1)


def build_options() -> list[str]:
    """This environment's setuptools where it can build the kit, else pip's isolated build (which
    downloads setuptools)."""
    return ["--no-build-isolation"] if builds_offline() else []


def dependency_links(dest: Path) -> Path:
    """A folder of links to this environment's installed packages, the kit's own install left
    out: the new virtualenv's dependencies without a download. Every folder on sys.path that holds
    a distribution counts (this environment may itself see its packages through such links)."""
    dest.mkdir()
    folders = {str(Path(getattr(d, "_path", "")).parent) for d in metadata.distributions()}
    for folder in [Path(p) for p in sys.path if p in folders]:
        for entry in folder.iterdir():
            name = entry.name.lower()
            if (name.startswith(("priority_conformance", "pytest_priority_conformance", "__editable__"))
                    or name.endswith(".pth") or name in ("conformance", "harness", "reference", "__pycache__")
                    or (dest / entry.name).exists()):
                continue
            (dest / entry.name).symlink_to(entry)
    return dest


@dataclass
class Venv:
    root: Path
    python: Path
    site: Path  # its site-packages, where the wheel goes
    env: dict

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name


def make_venv(root: Path, links: Path, cache: Path) -> Venv:
    ok(run([sys.executable, "-m", "venv", "--without-pip", root], cwd=root.parent))
    python = root / "bin" / "python"
    site = Path(ok(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         cwd=root.parent)).stdout.strip())
    (site / "deps.pth").write_text(f"{links}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
    env.update(PRIORITYKIT_CACHE=str(cache), PATH=f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    return Venv(root, python, site, env)


