"""`wismo verify RUN ...`: recompute every counter of recorded runs from their traces."""

from __future__ import annotations

import argparse

from wismo.cli.parsing import subparser

NAME = "verify"
SUMMARY = "recompute every counter of recorded runs from their traces"
EXAMPLE = "wismo verify data/runs/*"


def add(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Declare `wismo verify` and its arguments."""
    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument("runs", nargs="+", metavar="RUN", help="a run folder, as `wismo evaluate` writes it")
    return p


def run(args: argparse.Namespace) -> int:
    """Verify every run folder; exit 1 naming whatever disagrees."""
    from wismo import runs

    status = 0
    for folder in args.runs:
        problems = runs.verify(folder)
        if problems:
            status = 1
            print(f"{folder}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{folder}: verified")
    return status
