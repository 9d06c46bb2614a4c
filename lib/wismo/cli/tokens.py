"""`wismo tokens [--url URL | -- CMD ARGS]`: what any MCP server costs in a model's context."""

from __future__ import annotations

import argparse
import logging
import sys

from wismo.cli.parsing import output_may_be_cut, positive_seconds, subparser
from wismo.core.errors import InputError

NAME = "tokens"
SUMMARY = "what any MCP server costs in a model's context: wismo tokens [--url URL | -- CMD ARGS]"
EXAMPLE = "wismo tokens --max-tokens 2000 -- .venv/bin/wismo serve focused"
DESCRIPTION = (
    "Count a server's tool definitions completely (per tool and per part), its instructions, prompts and "
    "resources, and sampled results under every client profile."
)


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo tokens` and its options."""
    from wismo.accounting.tokens import DEFAULT_ENCODING, PACKAGED_ENCODINGS
    from wismo.studies.audit.measure import DEFAULT_TIMEOUT_S

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE, DESCRIPTION)
    p.add_argument("--url", help="a Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp (instead of a command)")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="seconds to wait for the handshake and for each request (default %(default)g)",
    )
    p.add_argument(
        "--call",
        nargs=2,
        action="append",
        metavar=("NAME", "JSON"),
        help="call tool NAME with these JSON arguments and count its result (repeatable)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="exit 1 when the tool definitions take more than N tokens (harmony count), naming the heaviest",
    )
    p.add_argument("--baseline", metavar="FILE", help="a saved --json output: print each tool's change since it")
    p.add_argument(
        "--encoding",
        default=DEFAULT_ENCODING,
        choices=PACKAGED_ENCODINGS,
        help=f"encoding of every count except harmony's, which is {DEFAULT_ENCODING} (default %(default)s)",
    )
    p.add_argument(
        "--json", action="store_true", help="print JSON (sorted keys; timings under 'timings') instead of a table"
    )
    p.add_argument("command_line", nargs=argparse.REMAINDER, help="-- then the server command")
    return p


def run(args: argparse.Namespace) -> int:
    """Count what the server at --url or after `--` puts in a model's context; exit 1 over --max-tokens, 2 when
    the server or an argument cannot be used."""
    import anyio

    from wismo.core.jsonfmt import stable
    from wismo.studies.audit import measure as servertokens
    from wismo.studies.audit import table as tokentable
    from wismo.studies.audit.target import parse_call, target

    # A bad target gets one sentence: the SDK's own error logs (a traceback per unreadable line) stay quiet.
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    positive_seconds("--timeout", args.timeout)
    if args.max_tokens is not None and args.max_tokens < 0:
        raise InputError(f"--max-tokens must be zero or more, not {args.max_tokens}")
    calls = [parse_call(name, arguments) for name, arguments in args.call or []]
    baseline = tokentable.load_baseline(args.baseline) if args.baseline else None
    where = target(command, args.url)
    measured = anyio.run(servertokens.measure, where, calls, args.encoding, args.timeout)
    diff = tokentable.changes(baseline, measured) if baseline is not None else None
    with output_may_be_cut():  # the reader (`| head`) may have what it wanted
        if args.json:
            print(
                stable(measured if diff is None else {**measured, "baseline": {"file": args.baseline, **diff}}), end=""
            )
        else:
            print(tokentable.table(measured))
            if diff is not None:
                print("\n" + tokentable.changes_text(diff, args.baseline))
    verdict = tokentable.over_budget(measured, args.max_tokens) if args.max_tokens is not None else None
    if verdict:
        print(f"wismo tokens: {verdict}", file=sys.stderr)
        return 1
    return 0
