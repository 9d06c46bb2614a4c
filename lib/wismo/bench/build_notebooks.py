"""`python -m wismo.bench.build_notebooks OUT NOTEBOOK ...`: execute and render these notebooks into OUT, as
`wismo report` does for all of them; `--warm` only imports what the notebooks use (bytecode, matplotlib's font
cache), for the unmeasured warm-up of a warm environment."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Build the notebooks named after the output folder, or warm up with --warm."""
    if argv == ["--warm"]:
        import matplotlib.pyplot  # noqa: F401  (imported for their side effects: caches written once)
        import nbconvert  # noqa: F401
        import pandas  # noqa: F401
        import papermill  # noqa: F401

        from wismo.reports.render import build as report

        return 0
    if len(argv) < 2:
        print("usage: python -m wismo.bench.build_notebooks OUT NOTEBOOK ... | --warm", file=sys.stderr)
        return 2
    from wismo.reports.render import build as report

    report.build([Path(p) for p in argv[1:]], out=Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
