"""What every subcommand's parser shares: its one help line, and the example its --help ends with."""

from __future__ import annotations

import argparse

EXAMPLE_PREFIX = "example: "


def subparser(
    subparsers: argparse._SubParsersAction, name: str, summary: str, example: str, description: str = ""
) -> argparse.ArgumentParser:
    """A subcommand's parser: `summary` in `wismo --help`, `description` (or the summary) above its options, and
    `example: EXAMPLE` as the last line of its --help."""
    return subparsers.add_parser(
        name,
        help=summary,
        description=description or summary[:1].upper() + summary[1:] + ".",
        epilog=EXAMPLE_PREFIX + example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def positive_seconds(option: str, value: float) -> None:
    """Raise ValueError in one sentence unless `value` (given as `option`) is a positive number of seconds."""
    if value <= 0:
        raise ValueError(f"{option} must be a positive number of seconds, not {value:g}")
