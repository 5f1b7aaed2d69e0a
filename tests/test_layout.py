"""The harness's layers, checked statically: imports point one way and no module reaches into
another's private names. A newcomer relies on the layout telling where a thing lives; a stray
upward import or a poked private name is where that stops being true.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Lower layers first: a module may import its own layer and any layer before it.
LAYERS = ("harness.errors", "harness.host", "harness.build", ("harness.targets", "harness.gates"), "harness.kube",
          "harness.formats", "harness.clusters", "harness.run",
          ("harness.explore", "harness.mutants", "harness.shards", "harness.site", "harness.bench", "harness.campaign"),
          "harness.cli")
SOURCES = ("harness", "conformance", "reference", "benchmarks")


def _layer(module: str) -> int | None:
    for i, names in enumerate(LAYERS):
        for name in (names if isinstance(names, tuple) else (names,)):
            if module == name or module.startswith(name + "."):
                return i
    return None


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module, names, line) of every absolute import of the project's own code."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
    return [(m, n, ln) for m, n, ln in out if m.split(".")[0] in ("harness", "reference", "conformance")]


def _files(*packages: str) -> list[Path]:
    return [p for pkg in packages for p in sorted((ROOT / pkg).rglob("*.py")) if "gomod" not in p.parts]


def test_harness_imports_point_one_way():
    wrong = []
    for path in _files("harness"):
        here = _layer(_module(path))
        for module, names, line in _imports(path):
            targets = [module] + [f"{module}.{n}" for n in names]
            there = min((x for x in map(_layer, targets) if x is not None), default=None)
            if module.startswith("conformance"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports the test layer ({module})")
            elif here is not None and there is not None and there > here:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module} from a higher layer")
    assert wrong == []


def test_the_shared_run_seams_know_no_scenario_kind_and_the_kinds_not_each_other():
    """harness/run/ at top level is what every kind of scenario shares (the run interface, record,
    settle, artifacts); what only pods or only Karmada bindings need lives in run/pods or run/bindings."""
    kinds = ("harness.run.pods", "harness.run.bindings")
    wrong = []
    for path in _files("harness/run"):
        here = _module(path)
        mine = next((k for k in kinds if here == k or here.startswith(k + ".")), None)
        for module, names, line in _imports(path):
            for target in [module] + [f"{module}.{n}" for n in names]:
                other = next((k for k in kinds if target == k or target.startswith(k + ".")), None)
                if other is not None and other != mine:
                    wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


def test_one_module_reads_junit():
    """A run's results have one reader (harness.run.results), so the kill matrix, the site, the merge
    and the figures cannot each read a verdict their own way."""
    readers = []
    for path in _files("harness", "conformance", "benchmarks"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith(("xml.etree", "junitparser")) for n in names):
                readers.append(str(path.relative_to(ROOT)))
    assert sorted(set(readers)) == ["harness/run/results.py"]


def test_the_model_imports_nothing_of_the_harness():
    found = [f"{p.relative_to(ROOT)}:{ln} {m}" for p in _files("reference") for m, _, ln in _imports(p)
             if not m.startswith("reference")]
    assert found == []


def test_no_private_name_is_used_outside_its_module():
    used = []
    for path in _files(*SOURCES):
        for module, names, line in _imports(path):
            used += [f"{path.relative_to(ROOT)}:{line} {module}.{n}" for n in names
                     if n.startswith("_") and not n.startswith("__")]
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            # module._private, where the module is one of ours imported by name
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in _module_aliases(tree)):
                used.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value.id}.{node.attr}")
    assert used == []


def _module_aliases(tree: ast.AST) -> set[str]:
    """Names bound to the project's own modules by `from harness.x import module`."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("harness", "reference"):
            for a in node.names:
                if (ROOT / (node.module.replace(".", "/") + "/" + a.name + ".py")).exists() or \
                        (ROOT / (node.module.replace(".", "/") + "/" + a.name)).is_dir():
                    out.add(a.asname or a.name)
    return out


def test_no_test_folder_is_one_pytest_skips_without_a_word():
    """pytest's default norecursedirs skips folders named build, dist, venv and the like, so tests
    placed in tests/build/ were never collected (nine of them, until this test)."""
    skipped = {"build", "dist", "CVS", "node_modules", "venv", "_darcs", "{arch}"}
    folders = [p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    assert folders and [f for f in folders if f in skipped or f.startswith(".") or f.endswith(".egg")] == []
