"""`wismo serve DESIGN`: serve one design over stdio, or Streamable HTTP, until the client closes it."""

from __future__ import annotations

import argparse
import errno
import logging
import sys

from wismo.cli.parsing import subparser

NAME = "serve"
SUMMARY = "serve one design over stdio (any MCP client can start this)"
EXAMPLE = "wismo serve focused --http 8000"


def add(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Declare `wismo serve` and its options."""
    from wismo.servers import designs

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    # Not argparse choices: an unknown design gets the registry's own sentence, which the harness quotes.
    p.add_argument(
        "design", help=f"one of the registered designs: {', '.join(designs.names())} (wismo.servers.designs)"
    )
    p.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (0: any free port); the URL is printed "
        "on stderr once it listens",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default %(default)s)")
    p.add_argument(
        "--http-fd",
        type=int,
        metavar="FD",
        help="serve Streamable HTTP on a socket the parent process already listens on (what the harness does)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Serve one design over stdio until the client closes stdin (or over HTTP until stopped)."""
    import anyio

    from wismo.domain import DatasetError
    from wismo.servers import design_tools
    from wismo.servers.app import CannotListen, build_server, serve_stdio
    from wismo.servers.designs import UnknownDesign
    from wismo.servers.settings import server_dataset

    # stdout is the protocol channel: everything human-readable goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="wismo %(levelname)s %(message)s")
    if args.http is not None and not 0 <= args.http <= 65535:
        print(f"wismo serve: --http PORT must be a port number from 0 to 65535, not {args.http}", file=sys.stderr)
        return 2
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

            def announce(url: str) -> None:
                # stderr: with --http stdout is no protocol channel, but it stays clean for whoever pipes it.
                print(f"{args.design} server: Streamable HTTP on {url} (Ctrl-C stops it)", file=sys.stderr, flush=True)

            # The harness (--http-fd) knows where it listens; a person who typed --http does not.
            anyio.run(serve_http, server, args.http, args.host, args.http_fd, None if args.http is None else announce)
    except CannotListen as exc:
        print(f"wismo serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if args.http_fd is None or exc.errno != errno.EBADF:
            raise
        print(f"wismo serve: --http-fd {args.http_fd} is not an open socket of this process", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
