"""`wismo bench [--quick] [--only NAME ...] [--out PATH]`: run the benchmarks (wismo.bench), write the JSON, print
the table."""

from __future__ import annotations

import argparse

from wismo.cli.parsing import subparser, writable_file

NAME = "bench"
SUMMARY = "time the round trip, server start, the comparison, the report build and more, each beside its floor"
EXAMPLE = "wismo bench --quick --only stdioRoundTrip tokens --out /tmp/bench.json"
DESCRIPTION = "The suite's timings, each beside its floor, in one run (5 to 8 minutes on 2 cores; --quick: seconds)."


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo bench` and its options."""
    from wismo.bench import suite
    from wismo.core.paths import OUTPUTS

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE, DESCRIPTION)
    p.add_argument("--only", nargs="+", choices=list(suite.BENCHMARKS), help="run only these benchmarks")
    p.add_argument("--quick", action="store_true", help="tiny repetition counts: proves it runs, measures little")
    p.add_argument(
        "--out", default=str(OUTPUTS / "bench.json"), help="where to write the JSON (default: outputs/bench.json)"
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Run the benchmarks, write the JSON (sorted keys) and print the table."""
    from wismo.bench import suite
    from wismo.bench.settings import Settings
    from wismo.bench.table import table
    from wismo.core.jsonfmt import write_stable

    writable_file("--out", args.out)
    result = suite.run(args.only, Settings.quick() if args.quick else Settings())
    path = write_stable(args.out, result)
    print(table(result))
    print(f"\nwrote {path}")
    return 0
