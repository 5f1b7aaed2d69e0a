"""A seeded scheduler bug as a binary: a pinned Go module with one text replaced, built through a
copy of the build's wrapper module.

The patched module is a private copy of the pinned one (hard links into the module cache, the
patched file a file of its own) that a copy of the wrapper module points at with a local
``replace``; the module cache itself is read-only and never touched (Go refuses ``-overlay`` for
files in it). Go's build cache recompiles only what the patch changes. Binaries are cached by the
patch's content, so a re-run builds nothing.

Which wrapper module and main package a build's scheduler comes from is the targets' fact
(``harness.targets``), which this layer may not read: callers pass them in.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Protocol

from harness.build import pins, toolchain
from harness.errors import KitError


class Patch(Protocol):
    """What a build needs of a mutant (``harness.formats.mutants.Mutant``)."""

    id: str
    module: str  # the Go module patched
    file: str  # the file in it
    original: str
    replacement: str


def source_file(m: Patch, wrapper: str) -> Path:
    """The pinned copy of the file the mutant patches, as the wrapper module resolves it."""
    version = pins.module_versions(wrapper).get(m.module)
    if version is None:
        raise KitError(f"mutant {m.id}: module {m.module} is not part of the {wrapper} build")
    path = toolchain.go_mod_cache() / f"{m.module}@{version}" / m.file
    if not path.is_file():
        # Only packages a build compiled are certain to be in the module cache; fetch the module.
        subprocess.run([toolchain.go_binary(), "mod", "download", m.module], cwd=pins.GOMOD_DIR / wrapper,
                       capture_output=True, env={**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off"})
    if not path.is_file():
        raise KitError(f"mutant {m.id}: file: {m.file} is not in {m.module}@{version} ({path})")
    return path


def patched(m: Patch, original_text: str) -> str:
    count = original_text.count(m.original)
    if count != 1:
        raise KitError(f"mutant {m.id}: original: found {count} times in {m.file}; it must be found exactly once")
    return original_text.replace(m.original, m.replacement)


def _pristine(module: str, version: str, src_root: Path) -> Path:
    """A private, writable-by-us image of a pinned module: hard links into the module cache
    (which is read-only and checked against go.sum, so it is never patched in place)."""
    dest = toolchain.cache_root() / "mutants" / "modules" / f"{module.replace('/', '_')}@{version}"
    if not dest.exists():
        tmp = dest.with_name(dest.name + f".{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        linked = subprocess.run(["cp", "-al", str(src_root), str(tmp)], capture_output=True)
        if linked.returncode != 0:  # another file system: a plain copy
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(src_root, tmp)
        tmp.rename(dest)
    return dest


def patch_key(m: Patch, wrapper: str) -> str:
    """A key naming the patch: the module's version, the file and its patched text."""
    text = patched(m, source_file(m, wrapper).read_text())
    version = pins.module_versions(wrapper)[m.module]
    return hashlib.sha256(f"{m.module}@{version}\0{m.file}\0{text}".encode()).hexdigest()[:16]


def source_tree(m: Patch, build: str, wrapper: str) -> tuple[Path, str]:
    """A private copy of ``wrapper`` (the module ``build``'s scheduler comes from) whose go.mod
    points the mutated module at a patched copy of it; and a key naming the patch. The pinned
    module cache is never touched."""
    src = source_file(m, wrapper)
    text = patched(m, src.read_text())
    version = pins.module_versions(wrapper)[m.module]
    module_root = src.parents[len(Path(m.file).parts) - 1]
    key = patch_key(m, wrapper)
    d = toolchain.cache_root() / "mutants" / f"{m.id}-{build}-{key}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    tree = d / "module"
    subprocess.run(["cp", "-al", str(_pristine(m.module, version, module_root)), str(tree)], check=True)
    target = tree / m.file
    target.parent.chmod(0o755)
    target.unlink()  # break the hard link: the patch goes to a file of its own
    target.write_text(text)
    wrapper_dir = d / "wrapper"
    wrapper_dir.mkdir()
    for f in (pins.GOMOD_DIR / wrapper).iterdir():
        if f.is_file():
            shutil.copy(f, wrapper_dir / f.name)
    gomod = wrapper_dir / "go.mod"
    lines = [ln for ln in gomod.read_text().splitlines()
             if not re.match(rf"^\s*(replace\s+)?{re.escape(m.module)}\s+=>", ln)]
    lines.append(f"replace {m.module} => {tree}")
    gomod.write_text("\n".join(lines) + "\n")
    return wrapper_dir, key


def binary(m: Patch, build: str, wrapper: str, package: str) -> Path:
    """The mutant's scheduler binary: ``package`` of ``wrapper`` built with the patch."""
    # A built one is found by its key alone: copying the module tree for nothing costs seconds a mutant.
    built = toolchain.variant_binary(wrapper, package, patch_key(m, wrapper), f"mutant-{m.id}-{build}")
    if built.is_file():
        return built
    wrapper_dir, key = source_tree(m, build, wrapper)
    try:
        return toolchain.ensure_variant(wrapper, package, wrapper_dir, key, f"mutant-{m.id}-{build}")
    finally:
        shutil.rmtree(wrapper_dir.parent, ignore_errors=True)  # the binary is the cache entry


__all__ = ["Patch", "binary", "patched", "source_file", "source_tree"]
