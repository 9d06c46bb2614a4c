"""`wismo fuzz [EXAMPLES]`: the hostile-input pass at scale on a study's servers, the article's by default
(wismo.checks): arguments and stdio frames on every design, and on the designs wismo serves their HTTP side and sessions
abandoned by the thousand."""

from __future__ import annotations

import argparse
from pathlib import Path

from wismo.cli.parsing import at_least, subparser, writable_file
from wismo.core.errors import InputError

NAME = "fuzz"
SUMMARY = "hostile arguments, frames and HTTP requests at scale on a study's servers (default the article's)"
EXAMPLE = "wismo fuzz 2000"
DEFAULT_EXAMPLES = 2000  # what `make fuzz` runs: minutes, not hours


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo fuzz` and its options."""
    from wismo.checks.hostile import SESSIONS

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
        "--study",
        default=None,
        metavar="FILE",
        help="the study whose servers get it (default: the article's, data/studies/where-is-my-order.toml)",
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
    """The pass at scale, the JSON written and the findings printed; exit 1 on any finding."""
    import sys

    from wismo.checks import study_hostile
    from wismo.core.errors import WismoError
    from wismo.core.jsonfmt import write_stable
    from wismo.studies.declaration import chosen

    if args.examples < 1:
        raise InputError(f"EXAMPLES must be 1 or more, not {args.examples}")
    at_least("--sessions", args.sessions, 1)
    out = writable_file("--out", args.out or default_out())
    study = chosen(args.study)
    try:
        result = study_hostile.at_scale(study, args.examples, args.sessions)
    except (WismoError, RuntimeError) as exc:  # a server that cannot be started or serve a normal client at all
        print(f"wismo fuzz: {exc}", file=sys.stderr)
        return 1
    path = write_stable(out, result)
    t = result["totals"]
    by = ", ".join(f"{name} {count:,}" for name, count in t["byCategory"].items())
    lines = [f"{study.title}: {t['cases']:,} hostile cases on {len(result['designs'])} designs; findings: {by}"]
    if "sessions" in result:
        bound = result["sessions"]["wismo"]
        lines.append(
            f"{bound['abandoned']:,} abandoned sessions added {bound['growthMb']} MB (bound {bound['boundMb']:g} MB)"
        )
    print("\n".join([*lines, f"wrote {path}"]))
    return 0 if not study_hostile.failures(result) else 1


def default_out() -> Path:
    """Where a run by hand writes: outputs/fuzz/fuzz.json, never the outputs/fuzz.json of `make fuzz` that notebook 01
    shows. Only named here: the run creates the folder when it writes (asking where it would write creates nothing)."""
    from wismo.core.paths import OUTPUTS

    return OUTPUTS / "fuzz" / "fuzz.json"
