"""`wismo study check FILE` and `wismo study run FILE`: a study file validated against its servers, and its
comparison and token accounting rendered into a folder of its own."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NoReturn

from wismo.cli.parsing import stopped_build, subparser, whole_number, writable_folder
from wismo.core.errors import InputError
from wismo.core.textgrid import plural

if TYPE_CHECKING:  # imported when a command runs, so that `wismo --help` stays fast
    from wismo.studies.declaration import Study

NAME = "study"
SUMMARY = "check a study file against its servers, or run its comparison and accounting"
EXAMPLE = "wismo study run data/studies/memory-graph.toml --out /tmp/memory-study"


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo study check`, `wismo study run` and `wismo study schema` and their options."""
    from wismo.accounting.tokens import framing
    from wismo.checks.hostile import STUDY_COUNT

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION", help="check, run or schema")
    check = subparser(
        actions,
        "check",
        "validate the file, then connect to every design and check its tools take the named arguments",
        "wismo study check data/studies/where-is-my-order.toml",
    )
    check.add_argument("file", help="the study file (TOML)")
    run = subparser(
        actions,
        "run",
        "run the equivalence and context-cost reports on the study into its own folder",
        EXAMPLE,
    )
    subparser(
        actions,
        "schema",
        "print the study file's JSON Schema, for an editor that checks TOML against one",
        "wismo study schema > study.schema.json",
    )
    run.add_argument("file", help="the study file (TOML)")
    run.add_argument(
        "--out",
        default=None,
        help="output folder (default: outputs/studies/<file stem>/ for a study in this checkout, else "
        "<file stem>-reports/ beside the study file)",
    )
    run.add_argument(
        "--profile",
        default=framing.PYTHON.name,
        choices=list(framing.PROFILES),
        help="how the client frames definitions and results in the token figures (default %(default)s)",
    )
    run.add_argument("--models", nargs="+", default=None, help="models to price (default: the report's four)")
    run.add_argument("--jobs", type=int, default=None, help="notebooks executed at once (default: one per core)")
    run.add_argument(
        "--hostile",
        metavar="N",
        default=None,
        help="hostile argument objects per tool on the study's own servers, frames and HTTP cases a tenth as many "
        f"per kind; 0 skips the hostile-input section (default {STUDY_COUNT})",
    )
    return p


def _problems(file: str) -> tuple[Study | None, list[str]]:
    """The study and every problem of the file and of its servers (one sentence each)."""
    import anyio

    from wismo.studies import servers
    from wismo.studies.declaration import StudyInvalid, load

    try:
        study = load(file)
    except StudyInvalid as exc:
        return None, exc.problems
    return study, anyio.run(servers.check, study)


def _say(file: str, problems: list[str], after: str = "") -> NoReturn:
    """An InputError listing each problem on its own line (and `after`, a line of its own, when given)."""
    listed = "".join(f"\n  - {p}" for p in problems)
    raise InputError(f"{file}: {plural(len(problems), 'problem')}:{listed}" + (f"\n{after}" if after else ""))


def _options_problem(args: argparse.Namespace) -> str | None:
    """The first of `study run`'s options that cannot be used, as one sentence, before any server starts."""
    from wismo.accounting.cost import prices
    from wismo.reports.render.build import jobs_wanted

    try:
        jobs_wanted(args.jobs)
        if args.out is not None:
            writable_folder("--out", args.out)
        prices.resolve(args.models or [])
        if args.hostile is not None:
            whole_number("--hostile", args.hostile, 0)
    except (ValueError, prices.UnknownModel) as exc:
        return str(exc)
    return None


def run(args: argparse.Namespace) -> int:
    """Check or run the study; exit 2 when it is invalid or a server cannot be reached, 1 when evidence differs."""
    if args.action == "schema":
        from wismo.core.jsonfmt import stable
        from wismo.studies import schema

        print(stable(schema.document()), end="")
        return 0
    problem = _options_problem(args) if args.action == "run" else None
    if problem:  # an option's, not the file's: one sentence, as every command says bad input
        raise InputError(problem)
    study, problems = _problems(args.file)
    if study is None or problems:  # no study comes with its problems
        _say(args.file, problems)
    if args.action == "check":
        print(
            f"{args.file}: valid; {plural(len(study.designs), 'design')} reached ({', '.join(study.designs)}), every "
            f"entry and link tool offered and taking the named arguments; {plural(len(study.cases), 'case')}, "
            f"{plural(len(study.unfriendly), 'unfriendly input')}."
        )
        return 0
    from wismo.reports import study_run as study_run

    params = {"profile": args.profile, **({"models": args.models} if args.models else {})}
    if args.hostile is not None:
        params["hostile_count"] = int(args.hostile)
    try:
        done = study_run.run(study, args.out, params, args.jobs)
    except study_run.StudyRefused as exc:
        staged = f"what the run wrote, and why it stopped: {exc.staged.index}" if exc.staged is not None else ""
        _say(args.file, [str(exc)], staged)
    except BaseException as exc:  # a failed build other than a claim, or an interrupt: said as every build says it
        stopped = stopped_build(NAME, exc)
        if stopped is None:
            raise
        return stopped
    if done.unfollowed:  # not a failure, never silent: the walk may not be what the file meant
        print(
            f"wismo study: {args.file}: {plural(len(done.unfollowed), 'link')} found nothing to follow:",
            file=sys.stderr,
        )
        for line in done.unfollowed:
            print(f"  - {line}", file=sys.stderr)
    if done.differing:
        print(
            f"wismo study: {args.file}: the evidence differs in {plural(len(done.differing), 'case')}:", file=sys.stderr
        )
        for line in done.differing:
            print(f"  - {line}", file=sys.stderr)
        print(f"the reports in {done.out} are as they were; this run's are in its staging folder", file=sys.stderr)
        print(f"the report as far as it ran: {done.staged.index}", file=sys.stderr)
        return 1
    print(f"{plural(len(done.rendered), 'report')} for {study.title}; open {done.out / 'index.html'}")
    return 0
