"""`wismo verify RUN ...`: recompute every counter of recorded runs from their traces."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wismo.cli.parsing import subparser
from wismo.core.textgrid import plural

NAME = "verify"
SUMMARY = "recompute every counter of recorded runs from their traces"
EXAMPLE = "wismo verify data/runs/*"


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo verify` and its arguments."""
    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument("runs", nargs="+", metavar="RUN", help="a run folder, as `wismo evaluate` writes it")
    return p


def run(args: argparse.Namespace) -> int:
    """Verify every run folder; exit 1 naming whatever disagrees, 2 when an argument is no run folder."""
    from wismo import runs

    status = 0
    for folder in args.runs:
        path = Path(folder)
        if not path.is_dir() or not (path / "manifest.json").is_file():
            # Not a run folder at all: an input error, said in one sentence, not a problem of a run.
            what = (
                "no such run folder"
                if not path.exists()
                else "a file, not a run folder"
                if not path.is_dir()
                else "not a run folder (it has no manifest.json)"
            )
            print(f"wismo verify: {folder}: {what}", file=sys.stderr)
            status = 2
            continue
        problems = runs.verify(folder)
        if problems:
            status = max(status, 1)
            print(f"{folder}: {plural(len(problems), 'problem')}")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{folder}: verified")
    return status
