"""The `wismo` command: the parser assembled from one module per subcommand, and the dispatch to its `run`.

Only the chosen subcommand declares its options, because each reads its registries (designs, encodings, client
profiles, backends, benchmarks) and those pull in what that command alone needs: `wismo serve` starts without
the token counters, the agent loop, papermill or the benchmarks. The others are listed by name and help line, and
only when a listing can be printed (no command, or one that names none): a chosen command imports its module alone.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import cast

from wismo.cli.parsing import EXAMPLE_PREFIX
from wismo.core.errors import InputError, single

# Each is the module wismo.cli.NAME, in the order `wismo --help` lists them.
COMMANDS = (
    "serve", "compare", "report", "study", "tokens", "traces",
    "contract", "evaluate", "verify", "fuzz", "bench", "peers",
)  # fmt: skip


def command_module(name: str) -> ModuleType:
    """The module declaring subcommand `name` (imported on first use)."""
    return importlib.import_module(f"wismo.cli.{name}")


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of `wismo`, with every subcommand's options if `command` is None, else only with the
    options of `command` (a word that names no subcommand declares none); a subcommand's parser prints no listing
    of the others, so when `command` names one the others are neither declared nor imported."""
    p = argparse.ArgumentParser(
        prog="wismo",
        description="Compare a granular and a focused MCP tool design.",
        epilog=EXAMPLE_PREFIX + command_module("serve").EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="one of these; `wismo COMMAND --help` explains it"
    )
    for name in COMMANDS:
        if command is None or command == name:
            module = command_module(name)
            module.add(sub).set_defaults(run=module.run)
        elif command not in COMMANDS:
            sub.add_parser(name, help=command_module(name).SUMMARY)
    return p


def is_input_error(exc: BaseException) -> bool:
    """Whether `exc` says the input is unusable (an InputError: a name, a value, a file), which the command reports
    in its one sentence with exit 2 rather than as a traceback."""
    return isinstance(exc, InputError)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `wismo` command; an input error is one sentence on stderr and exit 2."""
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv and argv[0] in COMMANDS else ""
    try:
        from wismo.mcp.servers import designs

        # The registry first, even for --help: a design file named in WISMO_DESIGNS that cannot be used is then one
        # sentence whatever the command, not a traceback from the first parser that lists the designs.
        designs.registered()
        args = parser(command).parse_args(argv)
        return cast("int", args.run(args))
    except Exception as exc:  # anything but an input error is re-raised as it was
        failure = single(exc)
        if not is_input_error(failure):
            raise
        print(f"wismo{' ' + command if command else ''}: {failure}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
