"""priority-conformance (also ./kit COMMAND): a conformance kit for Kubernetes pod priority and preemption.

`conformance` runs the suite against a scheduler on a cluster; `test` runs the kit's own unit
tests. validate, check, explain, matrix and site read scenario files and need no cluster.
`COMMAND --help` says more about each; docs/commands.md shows them at work, and
docs/environment.md lists the environment variables the kit reads.
"""

from __future__ import annotations

import argparse
import sys

from harness.cli import bench, build, campaign, check, cluster, explore, mutants, peers, shards, site, spec, suite
from harness.host import console

# One module per command group, each adding its own subcommands; the order is the help's.
GROUPS = (suite, cluster, build, spec, check, site, mutants, explore, peers, shards, campaign, bench)
DISTRIBUTION = "priority-conformance"


def version() -> str:
    """The installed distribution's version; harness.__version__ (the one place it is written)
    where the kit runs from files that were never installed."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        from harness import __version__

        return __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="priority-conformance", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return p


def passed_on(argv: list[str], words: tuple[str, ...]) -> list[str]:
    """What follows a pass-through command's words in ``argv``, exactly as given: argparse would
    reorder, drop (``--``) or refuse what it does not know, and it is pytest's or a benchmark's."""
    at = -1
    for w in words:
        at = argv.index(w, at + 1)
    return argv[at + 1:]


def main(argv: list[str] | None = None) -> int:
    from harness.host.lifecycle import install_signal_handlers

    install_signal_handlers()
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    args, unknown = p.parse_known_args(argv)
    words = getattr(args, "passthrough", None)
    if words:
        args.rest = passed_on(argv, words)
    elif unknown:
        p.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return console.exit_code(lambda: args.func(args))
    except BrokenPipeError:
        # The reader went away (`| head`): the rest of the output is not wanted.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
