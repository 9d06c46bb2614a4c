"""`wismo peers OUT NAME=FILE ...`: `wismo tokens --json` outputs of several servers gathered into one file and a
table (what `make peers` runs after measuring the MCP reference servers)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wismo.cli.parsing import subparser, writable_file

NAME = "peers"
SUMMARY = "gather `wismo tokens --json` outputs of several servers into one JSON file and a table"
EXAMPLE = 'wismo peers outputs/peers.json "mcp-server-time 2026.10.19=.peers/measured/time.json"'


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo peers` and its arguments."""
    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument("out", metavar="OUT", help="the JSON file to write; the table goes beside it as .txt")
    p.add_argument(
        "measurements", nargs="+", metavar="NAME=FILE", help="a label and a saved `wismo tokens --json` output"
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Write OUT (sorted keys) and OUT's .txt table, and print the table; exit 2 naming a bad NAME=FILE or an OUT
    that cannot be written."""
    from wismo.studies.audit import peers

    writable_file("OUT", args.out)
    writable_file("OUT", Path(args.out).with_suffix(".txt"))
    measured = peers.gather(args.measurements)
    path, text = peers.write(args.out, measured)
    print(text)
    print(f"\nwrote {path} and {path.with_suffix('.txt')}")
    return 0
