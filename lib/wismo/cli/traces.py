"""`wismo traces FILE... [--out DIR]`: an agent's OpenTelemetry traces read into the chains its model rebuilds, what
a focused tool would save, and the study that checks it."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wismo.cli.parsing import at_least, output_may_be_cut, positive_seconds, subparser, writable_folder
from wismo.core import atomic
from wismo.core.errors import InputError
from wismo.core.paths import OUTPUTS
from wismo.core.textgrid import plural

if TYPE_CHECKING:
    from wismo.core.processes import Guard

NAME = "traces"
SUMMARY = "the tool chains in an agent's OpenTelemetry traces and what a focused tool would save: wismo traces FILE..."
EXAMPLE = "wismo traces data/traces/*.json --out outputs/traces"
DESCRIPTION = (
    "Read OTLP JSON trace files (the OpenTelemetry Collector's file exporter output, or one document), group the "
    "spans into conversations, find the chains of tool calls the model rebuilds and their links, model what one "
    "focused call would save, and write into DIR: report 05 (traces.json, the notebook and its HTML), study.toml "
    "and the imported runs (with --no-report, traces.json and study.toml, and the runs only where --runs-dir "
    "names). With --record, trace wismo's own agent loop on the article's study instead (the shipped traces)."
)
ANALYSIS, STUDY = "traces.json", "study.toml"
MIN_PART_MB = 0.01  # smaller byte ranges would make a task of every few lines


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo traces` and its options."""
    from wismo.runs.traces.conversations import IDLE_NS
    from wismo.runs.traces.partitioned import CHUNK

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE, DESCRIPTION)
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="an OTLP JSON trace file or a glob of them (quoted); .gz and .zst are read as they stream, and a remote "
        "path (s3://...) through fsspec once its filesystem's package is installed",
    )
    p.add_argument(
        "--out",
        default=str(OUTPUTS / "traces"),
        metavar="DIR",
        help="where to write, a folder replaced whole: a new or empty one, or one an earlier wismo traces wrote "
        "(default %(default)s)",
    )
    p.add_argument(
        "--idle",
        type=int,
        default=IDLE_NS // 10**9,
        metavar="SECONDS",
        help="a conversation with no span ending for this long (span time) is complete (default %(default)g)",
    )
    p.add_argument("--price-model", metavar="MODEL", help="the model to price at when the traced one has no price")
    p.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="where the imported runs go, one per trace file (default: runs/ in the --out folder; with --no-report, "
        "none unless this names where)",
    )
    p.add_argument(
        "--study",
        metavar="FILE",
        help="the study the traces are of: each file's run is the design the file is named after, each conversation "
        "the case its first call names (so notebook 03 shows them beside the study's other runs)",
    )
    p.add_argument(
        "--no-report",
        action="store_true",
        help="write traces.json and the drafted study.toml only: no report 05 and, unless --runs-dir is given, no "
        "imported runs (a file per conversation: at production volume, the most of the time)",
    )
    p.add_argument("--record", metavar="DIR", help="record traces of wismo's own loop into DIR instead of reading")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="build the conversations on N local worker processes (default 1: in this process, in one pass)",
    )
    p.add_argument(
        "--part-mb",
        type=float,
        metavar="MB",
        help="with --jobs or --dask: an uncompressed file of the Collector's lines is read in byte ranges of this "
        f"size, one task each (default {CHUNK / 2**20:g}, at least {MIN_PART_MB:g}); the analysis is the same for "
        "any number of workers, and for any size but where a conversation lies idle for longer than --idle",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="build the conversations on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT); its "
        "workers read the files, so give paths they can reach (absolute, or remote)",
    )
    return p


def _record(folder: Path) -> int:
    import anyio

    from wismo.core.paths import REPO_ROOT
    from wismo.runs.traces import own_loop
    from wismo.studies import declaration

    study = declaration.load(REPO_ROOT / "data" / "studies" / "where-is-my-order.toml")
    folder.mkdir(parents=True, exist_ok=True)
    recorded = anyio.run(own_loop.record, study, list(study.designs), folder)
    with output_may_be_cut():
        for path in recorded:
            print(f"recorded {path}")
    return 0


def _write(args: argparse.Namespace, result: dict[str, Any], finished: list[tuple[Path, Path]], guard: Guard) -> None:
    """The study file, the runs and report 05 (or traces.json alone) into --out, in one replace; runs bound for
    --runs-dir are moved there only once --out is in place, and then all of them whatever signal comes."""
    from wismo.core.jsonfmt import stable
    from wismo.mcp.servers import designs
    from wismo.runs.traces import prediction, study_file

    result["files"] = [Path(f).name for f in args.files]  # as the report writes them
    study_text = None
    top = result["topLinkedChain"]
    if top is not None:
        chain = result["chains"][top]
        served = designs.for_tools(set(chain["tools"]))
        command = ["{python}", "-m", "wismo", "serve", served.name] if served else None
        if served and served.investigation.tools() != set(chain["tools"]):
            command = None  # the chain calls tools the design does not declare: not that design's server
        # Every traced case of the entry is a case, those of shorter chains from it too.
        cases = [c for other in result["chains"] if other["tools"][:1] == chain["tools"][:1] for c in other["cases"]]
        study_text = study_file.text(
            chain, command, list(args.files), list({prediction.case_key(c): c for c in cases}.values())
        )

    def fill(folder: Path) -> None:
        if study_text is not None:
            (folder / STUDY).write_text(study_text, encoding="utf-8")
        if not args.runs_dir and finished:
            (folder / "runs").mkdir()
            for staging, run in finished:
                atomic.put_in_place(staging, folder / "runs" / run.name)
        if args.no_report:
            (folder / ANALYSIS).write_text(stable(result), encoding="utf-8")
            return
        from wismo.core.paths import NOTEBOOKS
        from wismo.reports.render import build

        params = {
            "trace_files": [str(Path(f).resolve()) for f in args.files],
            "price_model": args.price_model,
            "idle_s": args.idle,
            **({"study": str(Path(args.study).resolve())} if args.study else {}),
        }
        build.build([NOTEBOOKS / "05-traces.ipynb"], folder, 1, params, title="Traces: " + ", ".join(result["files"]))

    with atomic.building(Path(args.out), replace=True) as folder:
        fill(folder)
        guard.too_late_from_here()  # from here --out and the runs are put in place, signal or not
    if args.runs_dir:  # only once --out is in place: a failed report leaves the runs folder as it was
        for staging, run in finished:
            atomic.put_in_place(staging, run)


def _replaceable(out: Path, given: str, files: list[str], study: str | None) -> None:
    """Refuse an --out whose replacing (it is replaced whole) would lose what wismo traces did not write there: a
    folder holding anything without an earlier run's traces.json, the folder the command runs in or one above it, a
    folder holding a file it reads (a trace file, the study)."""
    from wismo.runs.traces import otlp

    if Path.cwd().resolve().is_relative_to(out):
        raise InputError(f"--out {given} is the folder this runs in or one above it, and --out is replaced whole.")
    for f in [*files, *([study] if study else [])]:
        if not otlp.remote(f) and Path(f).resolve().is_relative_to(out):
            raise InputError(f"--out {given} holds {f}, a file this reads, and --out is replaced whole.")
    if out.is_dir() and not _earlier_run(out):
        held = sorted(e.name for e in out.iterdir())
        if held:
            shown = ", ".join(held[:5]) + (f" and {len(held) - 5:,} more" if len(held) > 5 else "")
            raise InputError(
                f"--out {given} holds what wismo traces did not write ({shown}), and --out is replaced whole: give a "
                "new or empty folder, or one an earlier wismo traces wrote."
            )


MARK_BYTES = 1 << 24  # an earlier run's traces.json is far smaller: a file this large is somebody else's


def _earlier_run(folder: Path) -> bool:
    """Whether an earlier wismo traces wrote the folder: its traces.json is the analysis (a Collector's file may bear
    the same name)."""
    import json

    from wismo.runs.traces.analysis import SCHEMA

    mark = folder / ANALYSIS
    try:
        if not mark.is_file() or mark.stat().st_size > MARK_BYTES:
            return False
        read = json.loads(mark.read_bytes())
    except (OSError, ValueError, RecursionError):  # unreadable, or not JSON
        return False
    return isinstance(read, dict) and read.get("schema") == SCHEMA


def _reachable(files: list[str]) -> None:
    """Refuse a relative local path with --dask: the cluster's workers read it from their own folder, not this one."""
    from wismo.runs.traces import otlp

    for f in files:
        if not otlp.remote(f) and not Path(f).is_absolute():
            raise InputError(
                f"{f}: with --dask the cluster's workers read the files from where they run; give the path whole "
                f"({Path(f).resolve()}) or a remote one."
            )


def run(args: argparse.Namespace) -> int:
    """Analyse the files into --out; a file that is not usable OTLP JSON is one sentence and exit 2, nothing
    written."""
    from wismo.core.processes import Interrupted, interruptible

    if args.record and args.files:
        raise InputError("give trace files to read, or --record DIR, not both")
    if not args.record and not args.files:
        raise InputError("give at least one OTLP JSON trace file to read (or --record DIR)")
    positive_seconds("--idle", args.idle)
    at_least("--jobs", args.jobs, 1)
    if args.jobs > 1 and args.dask is not None:
        raise InputError("give --jobs N (local workers) or --dask ADDRESS (a cluster's), not both.")
    if args.part_mb is not None and args.jobs == 1 and args.dask is None:
        raise InputError("--part-mb cuts files into parts for workers: give it with --jobs N or --dask ADDRESS.")
    if args.part_mb is not None and not MIN_PART_MB <= args.part_mb < float("inf"):
        raise InputError(f"--part-mb must be a number of MB, at least {MIN_PART_MB:g}, not {args.part_mb:g}")
    if args.dask is not None and not args.dask.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        raise InputError(f"--dask wants a scheduler's address such as tcp://127.0.0.1:8786, not {args.dask!r}")
    writable_folder("--out" if not args.record else "--record", args.record or args.out)
    if Path(args.out).is_file():
        raise InputError(f"--out {args.out} is a file, not a folder")
    out, runs = Path(args.out).resolve(), Path(args.runs_dir).resolve() if args.runs_dir else None
    if runs is not None and runs.is_relative_to(out):
        raise InputError(f"--runs-dir {args.runs_dir} is inside --out {args.out}, which is replaced whole")
    if args.record:
        return _record(Path(args.record))
    try:
        # From here, Ctrl-C or SIGTERM (a remote glob's listing may be slow) stops the local workers too and removes
        # what was begun: one line, 128 + the signal.
        # Its own processes are a local Dask cluster's, which its close stops in order (killed, its nannies would
        # restart them and multiprocessing's tracker fail, in sixty lines); a report's kernels its build stops.
        with interruptible(args.out, stop=False) as guard:
            result = _analysed(args, out, guard)
    except Interrupted as exc:
        print(f"wismo {NAME}: {exc}; {args.out} and the runs are as they were.", file=sys.stderr)
        return exc.exit_code
    with output_may_be_cut():
        _say(args, result)
    return 0


def _analysed(args: argparse.Namespace, out: Path, guard: Guard) -> dict[str, Any]:
    """The files found, checked against --out, analysed and written (_write); the analysis."""
    from wismo.runs.traces import analysis, imported, otlp

    args.files = otlp.expand(args.files)  # globs, local or remote, as the files they match
    _replaceable(out, args.out, args.files, args.study)  # every file named, a copy read once too
    copies = otlp.same_bytes(args.files)
    for copy, earlier in copies.items():
        print(f"{copy} holds the same bytes as {earlier}: read once.", file=sys.stderr)
    args.files = [f for f in args.files if f not in copies]
    if args.dask is not None:
        _reachable(args.files)
    # Absolute from here: the report is built by notebooks that do not run in this folder.
    args.out = str(out)
    block, replacements = None, []
    if args.study:
        from wismo.runs.recording import about
        from wismo.runs.traces import prediction
        from wismo.studies.declaration import load

        study = load(Path(args.study))
        block = about(study)
        replacements = prediction.from_study(study)
    runs_dir = (
        Path(args.runs_dir) if args.runs_dir else Path(args.out).parent / f".{Path(args.out).name}.runs-{os.getpid()}"
    )
    importing = not args.no_report or args.runs_dir is not None  # report 05 and notebook 03 read the runs
    importer = imported.Importer(list(args.files), runs_dir, block) if importing else None
    try:
        # One pass: the runs are written as each conversation completes, into hidden folders moved at the end.
        result = analysis.analyse(
            args.files,
            args.idle,
            args.price_model,
            each=importer.add if importer else None,
            replacements=replacements,
            jobs=args.jobs,
            dask=args.dask,
            part_bytes=None if args.part_mb is None else max(1, int(args.part_mb * 2**20)),
        )
        _write(args, result, importer.finish() if importer else [], guard)
    finally:
        if importer:
            importer.abort()
        if not args.runs_dir:
            shutil.rmtree(runs_dir, ignore_errors=True)
    return result


def _say(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """What was read and found, in a few lines."""
    from wismo.runs.traces import analysis

    read = result["read"]
    print(
        f"{plural(read['spans'], 'span')}, {plural(result['conversations'], 'conversation')}, "
        f"{plural(len(result['chains']), 'chain')} ({plural(read['ignoredSpans'], 'span')} neither a model nor a tool "
        f"call) -> {args.out}"
    )
    for said in (analysis.duplicated(read), analysis.unattached(read)):
        if said:
            print(said)
    if result["topLinkedChain"] is not None:
        print(_top_chain(result["chains"][result["topLinkedChain"]]))
    else:
        print(f"no study file drafted: {analysis.no_links(result)}")
    for check in result["checks"]:
        print(_check(check))


def _check(check: dict[str, object]) -> str:
    """A prediction beside what the traces show, in one line."""
    return (
        f"predicted {check['chain']} replaced by {check['replacement']}: {check['predictedInput']:,.1f} input tokens "
        f"per conversation (modelled) against {check['observedInput']:,.1f} observed in the traces over "
        f"{check['cases']} case{'s' if check['cases'] != 1 else ''} ({check['errorPercent']:+.1f}%)"
    )


def _top_chain(chain: dict[str, Any]) -> str:
    """The top chain with links in one paragraph: its tools, links and modelled saving, each figure labelled."""
    saving, price = chain["saving"], chain["price"]
    links = "; ".join(
        f"{k['tool']}.{k['argument']} from {k['from']} at {k['path'] or '(text)'}" for k in chain["links"]
    )
    priced = (
        f", USD {saving['usdSavedPer1000']:,.4f} per 1,000 conversations at {price['as']}'s input price (modelled)"
        if price["priced"]
        else f" ({price['why']})"
    )
    return (
        f"top chain with links: {chain['shown']}, {chain['conversations']:,} conversations; links: "
        f"{links}; one focused call would save {saving['inputTokensSavedPerConversation']:,.1f} input tokens per "
        f"conversation (modelled) of {saving['inputTokensPerConversationToday']:,.1f} ({saving['label']['today']})"
        f"{priced}."
    )
