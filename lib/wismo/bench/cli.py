"""`python -m wismo.bench [--quick] [--only NAME ...] [--out PATH]`: run the benchmarks, write the JSON, print the
table."""

from __future__ import annotations

import argparse

from wismo.bench import suite
from wismo.bench.settings import Settings
from wismo.bench.table import table
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import OUTPUTS

DEFAULT_OUT = OUTPUTS / "bench.json"


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, write outputs/bench.json (sorted keys) and print the table."""
    p = argparse.ArgumentParser(
        prog="python -m wismo.bench", description="The suite's timings, each beside its floor, in one run."
    )
    p.add_argument("--only", nargs="+", choices=list(suite.BENCHMARKS), help="run only these benchmarks")
    p.add_argument("--quick", action="store_true", help="tiny repetition counts: proves it runs, measures little")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="where to write the JSON (default outputs/bench.json)")
    args = p.parse_args(argv)
    result = suite.run(args.only, Settings.quick() if args.quick else Settings())
    path = write_stable(args.out, result)
    print(table(result))
    print(f"\nwrote {path}")
    return 0
