"""The `wismo` command: the parser assembled from one module per subcommand, and the dispatch to its `run`.

Only the chosen subcommand declares its options, because each reads its registries (designs, encodings, client
profiles, backends, benchmarks) and those pull in what that command alone needs: `wismo serve` starts without
the token counters, the agent loop, papermill or the benchmarks. The others are listed by name and help line.
"""

from __future__ import annotations

import argparse
import sys

from wismo.cli import bench, compare, contract, evaluate, fuzz, peers, report, serve, study, tokens, verify
from wismo.cli.parsing import EXAMPLE_PREFIX

COMMANDS = {m.NAME: m for m in (serve, compare, report, study, tokens, contract, evaluate, verify, fuzz, bench, peers)}


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of `wismo`, with every subcommand's options if `command` is None, else only with the
    options of `command` (a word that names no subcommand declares none)."""
    p = argparse.ArgumentParser(
        prog="wismo",
        description="Compare a granular and a focused MCP tool design.",
        epilog=EXAMPLE_PREFIX + serve.EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        if command is None or command == name:
            module.add(sub).set_defaults(run=module.run)
        else:
            sub.add_parser(name, help=module.SUMMARY)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `wismo` command."""
    argv = sys.argv[1:] if argv is None else argv
    args = parser(argv[0] if argv else "").parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
