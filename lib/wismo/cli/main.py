"""The `wismo` command: serve a design, run the comparison."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from wismo.core.paths import RUNS
from wismo.servers import designs


def _serve(args: argparse.Namespace) -> int:
    """Serve one design over stdio until the client closes stdin."""
    import anyio

    from wismo.domain import DatasetError
    from wismo.servers import design_tools
    from wismo.servers.app import build_server, serve_stdio
    from wismo.servers.designs import UnknownDesign
    from wismo.servers.settings import server_dataset

    # stdout is the protocol channel: everything human-readable goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="wismo %(levelname)s %(message)s")
    try:
        server = build_server(args.design, design_tools(args.design), server_dataset())
    except (DatasetError, UnknownDesign, ValueError) as exc:
        print(f"wismo serve: {exc}", file=sys.stderr)
        return 2
    try:
        if args.http is None and args.http_fd is None:
            anyio.run(serve_stdio, server)
        else:
            from wismo.servers.app import serve_http

            anyio.run(serve_http, server, args.http, args.host, args.http_fd)
    except KeyboardInterrupt:
        pass
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Run the deterministic comparison and write its JSON."""
    import anyio

    from wismo.analyses import comparison

    result = anyio.run(comparison.run, args.orders or None, args.transport)
    path = comparison.write(result, args.out)
    summary = result["summary"]
    print(f"{summary['casesEqual']}/{summary['cases']} cases equal; wrote {path}")
    return 0 if summary["allEqual"] else 1


def _report(args: argparse.Namespace) -> int:
    """Execute every notebook and render the HTML reports."""
    from wismo.render import build as report

    try:
        jobs = report.jobs_wanted(args.jobs)
    except ValueError as exc:
        print(f"wismo report: {exc}", file=sys.stderr)
        return 2
    rendered = report.build(out=args.out, jobs=jobs)
    print(f"{len(rendered)} reports; open {report.output_dir(args.out) / 'index.html'}")
    return 0


def _tokens(args: argparse.Namespace) -> int:
    """Count what the server at --url or after `--` puts in a model's context; exit 1 over --max-tokens, 2 when
    the server or an argument cannot be used."""
    import anyio

    from wismo.audit import measure as servertokens
    from wismo.audit import table as tokentable
    from wismo.core.jsonfmt import stable
    from wismo.tokens import OfflineEncodingError

    # A bad target gets one sentence: the SDK's own error logs (a traceback per unreadable line) stay quiet.
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    try:
        if args.timeout <= 0:
            raise ValueError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
        if args.max_tokens is not None and args.max_tokens < 0:
            raise ValueError(f"--max-tokens must be zero or more, not {args.max_tokens}")
        calls = [servertokens.parse_call(name, arguments) for name, arguments in args.call or []]
        baseline = tokentable.load_baseline(args.baseline) if args.baseline else None
        target = servertokens.target(command, args.url)
        measured = anyio.run(servertokens.measure, target, calls, args.encoding, args.timeout)
    except (ValueError, servertokens.TargetError, OfflineEncodingError) as exc:
        print(f"wismo tokens: {exc}", file=sys.stderr)
        return 2
    diff = tokentable.changes(baseline, measured) if baseline is not None else None
    try:
        if args.json:
            print(
                stable(measured if diff is None else {**measured, "baseline": {"file": args.baseline, **diff}}), end=""
            )
        else:
            print(tokentable.table(measured))
            if diff is not None:
                print("\n" + tokentable.changes_text(diff, args.baseline))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (`| head`) has what it wanted; send the rest of stdout nowhere instead of a traceback at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    verdict = tokentable.over_budget(measured, args.max_tokens) if args.max_tokens is not None else None
    if verdict:
        print(f"wismo tokens: {verdict}", file=sys.stderr)
        return 1
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    """Record agent runs: `wismo evaluate <granular|focused|both> <repetitions> [model] [provider]`."""
    import anyio

    from wismo import runs
    from wismo.agent.backends import make
    from wismo.agent.base import BackendError
    from wismo.agent.loop import Budgets, LatencyModel
    from wismo.core.progress import bar
    from wismo.domain.cases import load_cases
    from wismo.runs import recording

    provider = args.provider or ("openai" if args.model else "scripted")
    chosen = list(designs.article()) if args.design == "both" else [args.design]
    orders = args.orders if args.orders is not None else [c.order_id for c in load_cases(unfriendly=False)]
    try:
        recording.check_request(chosen, args.repetitions, orders)
        if args.timeout <= 0:
            raise ValueError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
        backend = make(provider, args.model, args.base_url, args.timeout, args.profile)
    except (ValueError, BackendError) as exc:
        print(f"wismo evaluate: {exc}", file=sys.stderr)
        return 2
    latency = LatencyModel(*args.latency) if args.latency else None
    total = len(orders) * args.repetitions * len(chosen)
    try:
        with bar(total, f"{provider} {'+'.join(chosen)}") as progress:
            folders = anyio.run(
                lambda: recording.evaluate(
                    chosen,
                    args.repetitions,
                    backend,
                    orders,
                    Path(args.runs_dir),
                    Budgets(args.max_turns, args.max_tool_calls),
                    latency,
                    progress,
                )
            )
    except (BackendError, runs.RunInvalid, FileExistsError) as exc:
        print(f"wismo evaluate: {exc}; nothing was written to {args.runs_dir}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"wismo evaluate: interrupted; nothing was written to {args.runs_dir}", file=sys.stderr)
        return 130
    for folder in folders:
        print(f"{folder}: verified")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Recompute every counter of recorded runs from their traces; exit 1 naming whatever disagrees."""
    from wismo import runs

    status = 0
    for folder in args.runs:
        problems = runs.verify(folder)
        if problems:
            status = 1
            print(f"{folder}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{folder}: verified")
    return status


def _contract(args: argparse.Namespace) -> int:
    """Compare every design's tools/list with the pinned contract, or pin it anew with --update."""
    import anyio

    from wismo.client import contract

    now = anyio.run(contract.current)
    if args.update:
        contract.update(now)
        print(
            f"pinned {sum(len(t) for t in now['designs'].values())} tools of {len(now['designs'])} designs at revision {now['protocolRevision']} in {contract.CONTRACT}"
        )
        return 0
    diff = contract.drift(contract.pinned(), now)
    if diff:
        print(diff)
        print(
            "the servers drifted from the pinned contract; if that is intended, run: wismo contract --update",
            file=sys.stderr,
        )
        return 1
    print(f"contract holds: {', '.join(now['designs'])} at revision {now['protocolRevision']}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of the `wismo` command."""
    from wismo.agent.backends import BACKENDS  # a leaf: the backends themselves load only when one is chosen

    p = argparse.ArgumentParser(prog="wismo", description="Compare a granular and a focused MCP tool design.")
    sub = p.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve one design over stdio (any MCP client can start this)")
    serve.add_argument(
        "design", help=f"one of the registered designs: {', '.join(designs.names())} (wismo.servers.designs)"
    )
    serve.add_argument(
        "--http", type=int, metavar="PORT", help="serve Streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default 127.0.0.1)")
    serve.add_argument(
        "--http-fd",
        type=int,
        metavar="FD",
        help="serve Streamable HTTP on a socket the parent process already listens on (what the harness does)",
    )
    serve.set_defaults(func=_serve)
    comp = sub.add_parser("compare", help="drive both servers and check they return the same evidence")
    comp.add_argument("--orders", nargs="*", help="order IDs (default: the six cases)")
    comp.add_argument("--transport", default="stdio", choices=["stdio"])
    comp.add_argument("--out", default="outputs/deterministic-comparison.json")
    comp.set_defaults(func=_compare)
    tok = sub.add_parser(
        "tokens",
        help="what any MCP server costs in a model's context: wismo tokens [--url URL | -- CMD ARGS]",
        description="Count a server's tool definitions completely (per tool and per part), its "
        "instructions, prompts and resources, and sampled results under every client profile.",
    )
    tok.add_argument("--url", help="a Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp (instead of a command)")
    tok.add_argument(
        "--timeout",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="seconds to wait for the handshake and for each request (default 20)",
    )
    tok.add_argument(
        "--call",
        nargs=2,
        action="append",
        metavar=("NAME", "JSON"),
        help="call tool NAME with these JSON arguments and count its result (repeatable)",
    )
    tok.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="exit 1 when the tool definitions take more than N tokens (harmony count), naming the heaviest",
    )
    tok.add_argument("--baseline", metavar="FILE", help="a saved --json output: print each tool's change since it")
    tok.add_argument(
        "--encoding",
        default="o200k_base",
        choices=["o200k_base", "cl100k_base"],
        help="encoding of every count except harmony's, which is o200k_base (default o200k_base)",
    )
    tok.add_argument(
        "--json", action="store_true", help="print JSON (sorted keys; timings under 'timings') instead of a table"
    )
    tok.add_argument("command_line", nargs=argparse.REMAINDER, help="-- then the server command")
    tok.set_defaults(func=_tokens)
    ev = sub.add_parser(
        "evaluate", help="record agent runs into data/runs/: evaluate <design|both> <repetitions> [model] [provider]"
    )
    ev.add_argument("design", choices=[*designs.names(), "both"], help="a registered design, or both of the article's")
    ev.add_argument("repetitions", type=int)
    ev.add_argument("model", nargs="?", default=None)
    ev.add_argument(
        "provider",
        nargs="?",
        default=None,
        choices=BACKENDS,
        help="default: openai when a model is given, else scripted",
    )
    ev.add_argument("--orders", nargs="*", help="order IDs (default: the six cases)")
    ev.add_argument("--max-turns", type=int, default=8)
    ev.add_argument("--max-tool-calls", type=int, default=12)
    ev.add_argument(
        "--latency",
        type=float,
        nargs=3,
        metavar=("OVERHEAD_MS", "MS_PER_INPUT_TOKEN", "MS_PER_OUTPUT_TOKEN"),
        help="add a modelled elapsed time per request (labelled modelled, kept in its own field)",
    )
    ev.add_argument("--runs-dir", default=str(RUNS))
    ev.add_argument(
        "--base-url",
        default=None,
        help="an OpenAI-compatible server for openai or openai-chat, e.g. http://127.0.0.1:11434/v1 (Ollama); "
        "no key needed unless the server wants one (then set OPENAI_API_KEY)",
    )
    ev.add_argument(
        "--profile",
        default="python",
        choices=["python", "csharp-mcp", "csharp-mcp-relaxed"],
        help="scripted backend: how its token estimates frame tool results (wismo.tokens.framing; default python)",
    )
    ev.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="seconds to wait for one model request (default 120); a local model on a CPU may need more",
    )
    ev.set_defaults(func=_evaluate)
    ve = sub.add_parser("verify", help="recompute every counter of recorded runs from their traces")
    ve.add_argument("runs", nargs="+")
    ve.set_defaults(func=_verify)
    con = sub.add_parser("contract", help="check every design's tools/list against data/contracts/tools.json")
    con.add_argument("--update", action="store_true", help="pin the servers' current tools/list on purpose")
    con.set_defaults(func=_contract)
    rep = sub.add_parser("report", help="execute every notebook with papermill and render HTML into outputs/")
    rep.add_argument("--out", default=None, help="output folder (default: outputs/ in the checkout)")
    rep.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="notebooks executed at once, each in its own process (default: WISMO_REPORT_JOBS, else one per core)",
    )
    rep.set_defaults(func=_report)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `wismo` command."""
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
