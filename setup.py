"""The wheel's copy of the repository files the kit reads at run time.

Everything else is in pyproject.toml. The catalogue (``scenarios/``, ``scenarios/karmada/``), the
mutants (``mutants/``) and ``kind-config.yaml`` stay at the top of the repository, where people
read and edit them; a wheel has no such place, so the build copies them into the ``harness``
package as ``harness/_repo/``, and ``harness.FILES`` is that folder in an installed kit and the
checkout in an editable one (which copies nothing).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("scenarios", "mutants", "peers", "kind-config.yaml")  # keep in step with harness.FILES's users
INTO = Path("harness", "_repo")


class BuildPy(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = Path(self.build_lib) / INTO
        shutil.rmtree(dest, ignore_errors=True)
        for name in SHIPPED:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".*"))
            else:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)


setup(cmdclass={"build_py": BuildPy})
