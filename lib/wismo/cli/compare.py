"""`wismo compare`: drive the compared designs' servers and check they return the same evidence, case by case."""

from __future__ import annotations

import argparse

from wismo.cli.parsing import subparser, writable_file

NAME = "compare"
SUMMARY = "drive both servers and check they return the same evidence"
EXAMPLE = "wismo compare --orders ORD-1004 ORD-1005 --transport http"


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo compare` and its options."""
    from wismo.mcp.client.connection import TRANSPORTS
    from wismo.mcp.servers import designs
    from wismo.reports.analyses.comparison import DEFAULT_OUT

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument("--orders", nargs="*", help="order IDs (default: the six cases and the unfriendly inputs)")
    p.add_argument(
        "--designs",
        nargs="+",
        choices=designs.names(),
        help=f"designs to compare with the reference, {designs.REFERENCE} (default: those the registry marks compared)",
    )
    p.add_argument(
        "--transport", default=TRANSPORTS[0], choices=TRANSPORTS, help="how to reach the servers (default %(default)s)"
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), help="where to write the JSON (default %(default)s)")
    return p


def run(args: argparse.Namespace) -> int:
    """Run the deterministic comparison and write its JSON; exit 1 if any case differs."""
    import sys

    import anyio

    from wismo.reports.analyses import comparison

    writable_file("--out", args.out)
    result = anyio.run(lambda: comparison.run(args.orders or None, args.transport, design_names=args.designs))
    for said in [*result["unfollowedLinks"], *result["unreadPatterns"]]:  # not a failure, never silent
        print(f"wismo compare: {said['sentence']}", file=sys.stderr)
    path = comparison.write(result, args.out)
    summary = result["summary"]
    print(f"{summary['casesEqual']}/{summary['cases']} cases equal; wrote {path}")
    return 0 if summary["allEqual"] else 1
