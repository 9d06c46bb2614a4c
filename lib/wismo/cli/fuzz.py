"""`wismo fuzz [EXAMPLES]`: property-based fuzzing of every tool of every design (wismo.qa.fuzz)."""

from __future__ import annotations

import argparse

from wismo.cli.parsing import subparser, writable_file

NAME = "fuzz"
SUMMARY = "fuzz every tool of every design with hostile arguments over real stdio servers"
EXAMPLE = "wismo fuzz 2000"
DEFAULT_EXAMPLES = 2000  # what `make fuzz` runs: minutes, not hours


def add(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Declare `wismo fuzz` and its options."""
    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument(
        "examples",
        nargs="?",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="EXAMPLES",
        help="examples per tool (default %(default)s)",
    )
    p.add_argument("--out", default=None, help="where to write the JSON (default: outputs/fuzz.json)")
    return p


def run(args: argparse.Namespace) -> int:
    """Fuzz every tool, write the JSON and print the totals; exit 1 on any crash, hang or unclear error."""
    import sys

    from wismo.core.jsonfmt import write_stable
    from wismo.core.paths import output_dir
    from wismo.qa.fuzz import fuzz_all

    if args.examples < 1:
        print(f"wismo fuzz: EXAMPLES must be 1 or more, not {args.examples}", file=sys.stderr)
        return 2
    try:
        out = writable_file("--out", args.out or output_dir() / "fuzz.json")
    except ValueError as exc:
        print(f"wismo fuzz: {exc}", file=sys.stderr)
        return 2
    result = fuzz_all(args.examples)
    path = write_stable(out, result)
    t = result["totals"]
    print(
        f"{t['examples']:,} examples ({args.examples:,} per tool); crashes {t['crashes']}, hangs {t['hangs']}, "
        f"unclear errors {t['unclearErrors']}, peak server memory {t['peakServerRssMb']} MB; wrote {path}"
    )
    return 0 if not (t["crashes"] or t["hangs"] or t["unclearErrors"]) else 1
