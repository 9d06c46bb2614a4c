"""The `wismo` command: serve a design, run the comparison."""

from __future__ import annotations

import argparse
import logging
import sys


def _serve(args: argparse.Namespace) -> int:
    """Serve one design over stdio until the client closes stdin."""
    import anyio

    from .domain import DatasetError, load
    from .servers import design_tools
    from .servers.app import build_server, serve_stdio

    # stdout is the protocol channel: everything human-readable goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="wismo %(levelname)s %(message)s")
    try:
        server = build_server(args.design, design_tools(args.design), load())
    except (DatasetError, ValueError) as exc:
        print(f"wismo serve: {exc}", file=sys.stderr)
        return 2
    try:
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Run the deterministic comparison and write its JSON."""
    import anyio

    from . import compare

    result = anyio.run(compare.run, args.orders or None, args.transport)
    path = compare.write(result, args.out)
    summary = result["summary"]
    print(f"{summary['casesEqual']}/{summary['cases']} cases equal; wrote {path}")
    return 0 if summary["allEqual"] else 1


def _report(args: argparse.Namespace) -> int:
    """Execute every notebook and render the HTML reports."""
    from . import report

    rendered = report.build(out=args.out)
    print(f"{len(rendered)} reports; open {report.output_dir(args.out) / 'index.html'}")
    return 0


async def tool_token_counts(command: list[str], encoding_name: str) -> dict:
    """Tool-definition tokens of any stdio MCP server, per tool and in total (tiktoken-estimated)."""
    from . import tokens
    from .harness import connect

    async with connect("MCP", command=command, require_pinned=False) as conn:
        tools = await conn.list_tools()
    functions = [tokens.mcp_tool_to_function(t) for t in tools]
    return {
        "label": tokens.LABEL,
        "method": tokens.COOKBOOK_GPT4O.name,
        "encoding": encoding_name,
        "tools": [{"name": f["name"], "tokens": tokens.count_function(f, encoding_name)} for f in functions],
        "total": tokens.count_tools(functions, encoding_name),
    }


def _tokens(args: argparse.Namespace) -> int:
    """Print the tool-definition tokens of the server started by the command after `--`."""
    import anyio

    from .harness import HarnessError
    from .jsonfmt import stable

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    if not command:
        print("wismo tokens: give the server command after --, for example: wismo tokens -- wismo serve granular", file=sys.stderr)
        return 2
    try:
        counts = anyio.run(tool_token_counts, command, args.encoding)
    except HarnessError as exc:
        print(f"wismo tokens: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(stable(counts), end="")
        return 0
    width = max([len(t["name"]) for t in counts["tools"]] + [len("total (with the tools block's end)")])
    print(f"{'tool':<{width}}  tokens   ({counts['label']}, {counts['method']}, {counts['encoding']})")
    for t in counts["tools"]:
        print(f"{t['name']:<{width}}  {t['tokens']:>6}")
    print(f"{'total (with the tools block' + chr(39) + 's end)':<{width}}  {counts['total']:>6}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of the `wismo` command."""
    p = argparse.ArgumentParser(prog="wismo", description="Compare a granular and a focused MCP tool design.")
    sub = p.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve one design over stdio (any MCP client can start this)")
    serve.add_argument("design", choices=["granular", "focused"])
    serve.set_defaults(func=_serve)
    comp = sub.add_parser("compare", help="drive both servers and check they return the same evidence")
    comp.add_argument("--orders", nargs="*", help="order IDs (default: the six cases)")
    comp.add_argument("--transport", default="stdio", choices=["stdio"])
    comp.add_argument("--out", default="outputs/deterministic-comparison.json")
    comp.set_defaults(func=_compare)
    tok = sub.add_parser("tokens", help="tool-definition tokens of any MCP server over stdio: wismo tokens -- CMD ARGS")
    tok.add_argument("--encoding", default="o200k_base", choices=["o200k_base", "cl100k_base"])
    tok.add_argument("--json", action="store_true", help="print JSON instead of a table")
    tok.add_argument("command_line", nargs=argparse.REMAINDER, help="-- then the server command")
    tok.set_defaults(func=_tokens)
    rep = sub.add_parser("report", help="execute every notebook with papermill and render HTML into outputs/")
    rep.add_argument("--out", default=None, help="output folder (default: outputs/ in the checkout)")
    rep.set_defaults(func=_report)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `wismo` command."""
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
