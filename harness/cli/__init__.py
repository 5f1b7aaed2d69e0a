"""priority-conformance: the command line for people exploring by hand.

  cluster up|down|status   the embedded local cluster, kept running between commands
  build                    build (or find cached) the control-plane binaries
  validate [FILES]         check scenario files without a cluster
  check [FILES]            check that the model meets every expect: of scenario files (exit 1 if not)
  explain FILE             step the model through a scenario and say why, node by node
  explore --count N        generated scenarios against the model on a real cluster
  matrix FILE              which class can preempt which: immediately, after N s, never
  site [--out DIR]         the catalogue as a static HTML spec site, with a run's verdicts (--runs DIR)
  merge DIR...             shards' results (conformance, mutants, explore) as the report of one run
  campaign --shards N      the suite in N shards as a Kubernetes Indexed Job, collected and merged
"""

from __future__ import annotations

import argparse
import sys

from harness.cli import build, campaign, check, cluster, explore, mutants, shards, site, spec
from harness.host import console

# One module per command group, each adding its own subcommands; the order is the help's.
GROUPS = (cluster, build, spec, check, site, mutants, explore, shards, campaign)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="priority-conformance", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from harness.host.lifecycle import install_signal_handlers

    install_signal_handlers()
    args = parser().parse_args(argv)
    try:
        return console.exit_code(lambda: args.func(args))
    except BrokenPipeError:
        # The reader went away (`| head`): the rest of the output is not wanted.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
