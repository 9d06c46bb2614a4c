"""`wismo serve DESIGN`: serve one design over stdio, or Streamable HTTP, until the client closes it."""

from __future__ import annotations

import argparse
import errno
import logging
import sys
from typing import Any

from wismo.cli.parsing import subparser
from wismo.core.errors import InputError

NAME = "serve"
SUMMARY = "serve one design over stdio (any MCP client can start this)"
EXAMPLE = "wismo serve focused --http 8000"


def add(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Declare `wismo serve` and its options."""
    from wismo.mcp.servers import designs
    from wismo.mcp.servers.settings import DEFAULT_IDLE_TIMEOUT_S, DEFAULT_MAX_SESSIONS

    p = subparser(subparsers, NAME, SUMMARY, EXAMPLE)
    # Not argparse choices: an unknown design gets the registry's own sentence, which the harness quotes.
    p.add_argument(
        "design", help=f"one of the registered designs: {', '.join(designs.names())} (wismo.mcp.servers.designs)"
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
        "--max-sessions",
        type=int,
        metavar="N",
        help=f"with --http: keep at most N sessions; at the cap the session idle longest is closed for a new client "
        f"(default {DEFAULT_MAX_SESSIONS})",
    )
    p.add_argument(
        "--session-idle-timeout",
        type=float,
        metavar="SECONDS",
        help=f"with --http: close a session after SECONDS with no request in flight "
        f"(default {DEFAULT_IDLE_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--http-fd",
        type=int,
        metavar="FD",
        help="serve Streamable HTTP on a socket the parent process already listens on (what the harness does)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Serve one design over stdio until the client closes stdin (or over HTTP until stopped)."""
    ready = _built(args)
    if isinstance(ready, int):
        return ready
    server, limits = ready
    try:
        if not _over_http(args):
            import anyio

            from wismo.mcp.servers.app import serve_stdio

            anyio.run(serve_stdio, server)
        else:
            return _serve_http(args, server, limits)
    except OSError as exc:
        if args.http_fd is None or exc.errno != errno.EBADF:
            raise
        raise InputError(f"--http-fd {args.http_fd} is not an open socket of this process") from None
    except KeyboardInterrupt:
        pass
    return 0


def _over_http(args: argparse.Namespace) -> bool:
    """Whether the options ask for Streamable HTTP (a port or a listening socket) rather than stdio."""
    return args.http is not None or args.http_fd is not None


def _built(args: argparse.Namespace) -> tuple[Any, Any] | int:
    """The server to serve and its HTTP limits, or the exit code of an option or a dataset it cannot use (said in one
    sentence on stderr)."""
    from wismo.mcp.servers import design_tools
    from wismo.mcp.servers.app import build_server
    from wismo.mcp.servers.settings import server_dataset

    # stdout is the protocol channel: everything human-readable goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="wismo %(levelname)s %(message)s")
    if args.http is not None and not 0 <= args.http <= 65535:
        raise InputError(f"--http PORT must be a port number from 0 to 65535, not {args.http}")
    given = [name for name in ("max_sessions", "session_idle_timeout") if getattr(args, name) is not None]
    if given and not _over_http(args):
        option = "--" + given[0].replace("_", "-")
        raise InputError(f"{option} applies to Streamable HTTP only; add --http PORT")
    limits = _limits(args)
    server = build_server(args.design, design_tools(args.design), server_dataset())
    return server, limits


def _serve_http(args: argparse.Namespace, server: Any, limits: Any) -> int:
    """Serve Streamable HTTP until stopped; 2, in one sentence, when it cannot listen."""
    import anyio

    # Here, not in run(): serving stdio imports nothing of HTTP.
    from wismo.mcp.servers.http import serve_http

    def announce(url: str) -> None:
        # stderr: with --http stdout is no protocol channel, but it stays clean for whoever pipes it.
        print(f"{args.design} server: Streamable HTTP on {url} (Ctrl-C stops it)", file=sys.stderr, flush=True)

    # The harness (--http-fd) knows where it listens; a person who typed --http does not.
    anyio.run(serve_http, server, args.http, args.host, args.http_fd, None if args.http is None else announce, limits)
    return 0


def _limits(args: argparse.Namespace) -> object:
    """The session limits the options ask for (defaults where not given); SessionLimitInvalid names a bad one."""
    from wismo.mcp.servers.settings import SessionLimitInvalid, SessionLimits

    defaults = SessionLimits()
    try:
        return SessionLimits(
            max_sessions=defaults.max_sessions if args.max_sessions is None else args.max_sessions,
            idle_timeout_s=defaults.idle_timeout_s if args.session_idle_timeout is None else args.session_idle_timeout,
        )
    except SessionLimitInvalid as exc:
        option = {"max_sessions": "--max-sessions N", "idle_timeout_s": "--session-idle-timeout SECONDS"}[exc.name]
        raise InputError(f"{option} must be {exc.allowed}, not {exc.value:g}") from None
