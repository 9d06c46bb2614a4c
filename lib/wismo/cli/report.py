"""`wismo report`: execute every notebook with papermill and render the HTML reports and their index."""

from __future__ import annotations

import argparse
from pathlib import Path

from wismo.cli.parsing import stopped_build, subparser, writable_folder
from wismo.core.textgrid import plural

NAME = "report"
SUMMARY = "execute every notebook with papermill and render HTML into outputs/"
EXAMPLE = "wismo report --out /tmp/wismo-out --jobs 2"


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo report` and its options."""
    from wismo.reports.render.build import JOBS_ENV

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    p.add_argument("--out", default=None, help="output folder (default: outputs/ in the checkout)")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help=f"notebooks executed at once, each in its own process (default: {JOBS_ENV}, else one per core)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Execute every notebook and render the HTML reports; a failed or interrupted build leaves the previous one as
    it was."""
    from wismo.core.paths import REPO_ROOT, output_dir
    from wismo.reports.render import build as report

    jobs = report.jobs_wanted(args.jobs)
    if args.out is not None:  # as the build resolves it: a relative folder is under the checkout
        writable_folder("--out", args.out if Path(args.out).is_absolute() else REPO_ROOT / args.out)
    from wismo.reports.study_run import plan
    from wismo.studies.declaration import article

    study = article()  # the built-in reports are the article's study, through the path every study takes
    paths, params, left_out = plan(study)
    try:
        rendered = report.build(
            paths,
            out=args.out,
            jobs=jobs,
            parameters=params,
            title=study.title,
            intro=study.description,
            left_out=tuple(left_out),
        )
    except BaseException as exc:  # an interrupt too: its one line and 130 or 143
        code = stopped_build(NAME, exc)
        if code is None:
            raise
        return code
    print(f"{plural(len(rendered), 'report')}; open {output_dir(args.out) / 'index.html'}")
    return 0
