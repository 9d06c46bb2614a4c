"""`wismo fuzz [EXAMPLES]`: hostile tool arguments, stdio frames and HTTP requests against real servers (wismo.qa)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wismo.cli.parsing import at_least, subparser, writable_file

NAME = "fuzz"
SUMMARY = "fuzz every design with hostile arguments and frames over stdio, and hostile requests over HTTP"
EXAMPLE = "wismo fuzz 2000"
DEFAULT_EXAMPLES = 2000  # what `make fuzz` runs: minutes, not hours


def add(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Declare `wismo fuzz` and its options."""
    from wismo.qa.hostile import SESSIONS

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument(
        "examples",
        nargs="?",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="EXAMPLES",
        help="examples per tool (default %(default)s)",
    )
    p.add_argument(
        "--cases",
        type=int,
        metavar="N",
        help="cases per kind of stdio frame and of HTTP request (default: a tenth of EXAMPLES)",
    )
    p.add_argument(
        "--sessions",
        type=int,
        default=SESSIONS,
        metavar="N",
        help="Streamable HTTP sessions opened and abandoned in the session test (default %(default)s)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="where to write the JSON (default: outputs/fuzz/fuzz.json; `make fuzz` writes outputs/fuzz.json, the "
        "one notebook 01 shows, which a run by hand leaves as it was)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Fuzz every tool, write the JSON and print the totals; exit 1 on any crash, hang or unclear error."""
    import sys

    from wismo.core.jsonfmt import write_stable
    from wismo.qa import hostile

    if args.examples < 1:
        print(f"wismo fuzz: EXAMPLES must be 1 or more, not {args.examples}", file=sys.stderr)
        return 2
    try:
        if args.cases is not None:
            at_least("--cases", args.cases, 1)
        at_least("--sessions", args.sessions, 1)
        out = writable_file("--out", args.out or default_out())
    except ValueError as exc:
        print(f"wismo fuzz: {exc}", file=sys.stderr)
        return 2
    result = hostile.run(args.examples, args.cases, args.sessions)
    path = write_stable(out, result)
    t, frames, http = result["totals"], result["frames"]["totals"], result["http"]
    bound = http["abandonedSessions"]
    print(
        f"arguments: {t['examples']:,} examples ({args.examples:,} per tool); crashes {t['crashes']}, hangs "
        f"{t['hangs']}, unclear errors {t['unclearErrors']}, peak server memory {t['peakServerRssMb']} MB\n"
        f"stdio frames: {frames['cases']:,} cases, {frames['failures']} failures, peak server memory "
        f"{frames['peakServerRssMb']} MB\n"
        f"HTTP: {http['totals']['cases']:,} cases, {http['totals']['failures']} failures; {bound['abandoned']:,} "
        f"abandoned sessions added {bound['growthMb']} MB (bound {bound['boundMb']:g} MB)\nwrote {path}"
    )
    return 0 if not hostile.failures(result) else 1


def default_out() -> Path:
    """Where a run by hand writes: outputs/fuzz/fuzz.json, never the outputs/fuzz.json of `make fuzz` that notebook 01
    shows. Only named here: the run creates the folder when it writes (asking where it would write creates nothing)."""
    from wismo.core.paths import OUTPUTS

    return OUTPUTS / "fuzz" / "fuzz.json"
