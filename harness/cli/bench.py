"""`bench model|cluster|suite|preemption`: the kit's benchmarks. They measure and print figures
(docs/figures.md, docs/bench.md); nothing fails because a figure is slow.

`model`, `cluster` and `suite` are scripts in the checkout's benchmarks/ folder; `preemption`'s logic is in
harness.bench, so it runs from an installed kit too. `bench NAME --help` never runs one.
"""

from __future__ import annotations

import argparse
import ast
import runpy
import sys
from pathlib import Path

from harness.errors import KitError

BENCHMARKS = {
    "model": "how long the model takes to predict one preemption on 100 to 5,000 generated nodes "
             "(no cluster; under a minute)",
    "cluster": "the local cluster: warm bring-up and teardown of each build, and with --cold a cold "
               "build of every binary (minutes)",
    "suite": "where a stranger's first run goes: the README's two commands from a fresh clone with an "
             "empty cache, split into virtualenv, each binary's build, cluster start, longest scenario, "
             "unit tests and total (a full run: 15 to 30 minutes)",
    "preemption": "how fast each build and release preempts on 100 to 5,000 kwok nodes, and whether "
                  "it preempted right (about 15 minutes at the default sizes)",
}
HELP = ("-h", "--help")


def register(sub) -> None:
    b = sub.add_parser("bench", help="the kit's benchmarks: " + ", ".join(BENCHMARKS) + " (figures, never a verdict)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = b.add_subparsers(dest="benchmark", required=True, title="benchmarks", metavar="BENCHMARK")
    for name, what in BENCHMARKS.items():
        # Its arguments are the benchmark's own (add_help=False: --help is handled in run, unrun).
        x = names.add_parser(name, add_help=False, help=what)
        x.set_defaults(func=run, passthrough=("bench", name))


def script(name: str) -> Path:
    from harness.cli.suite import source_checkout

    root = source_checkout()
    if root is None:
        raise KitError(f"bench {name}: its script is in the kit's source checkout (benchmarks/{name}.py), "
                       "not in the installed package; run it from a clone of the repository")
    return root / "benchmarks" / f"{name}.py"


def usage(name: str) -> str:
    """A script benchmark's help: its docstring, which says how to run it, read without running it."""
    doc = ast.get_docstring(ast.parse(script(name).read_text())) or ""
    return f"priority-conformance bench {name}: {BENCHMARKS[name]}\n\n{doc}"


def run(args) -> int:
    name, rest = args.benchmark, args.rest
    if name == "preemption":
        from harness.bench import preemption

        return _exit_status(lambda: preemption.main(rest))  # its own parser, its own --help
    if any(a in HELP for a in rest):
        print(usage(name))
        return 0
    if name == "model" and rest:
        raise KitError(f"bench model takes no arguments (got {' '.join(rest)})")
    return _exit_status(lambda: _run_script(script(name), rest))


def _run_script(path: Path, rest: list[str]) -> int:
    saved = sys.argv
    sys.argv = [str(path), *rest]  # the script's argparse reads them
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = saved
    return 0


def _exit_status(call) -> int:
    try:
        return call() or 0
    except SystemExit as e:  # argparse's --help and usage errors, a script's sys.exit
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
