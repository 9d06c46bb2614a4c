"""Turn a design's tool specs into a low-level MCP server, and serve it over stdio (servers/http.py: over HTTP)."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from wismo import __version__
from wismo.core.errors import WismoError
from wismo.core.jsonfmt import compact
from wismo.domain import Dataset, LookupFailure
from wismo.mcp.servers.protocol import invalid_request, pin_revision
from wismo.mcp.servers.toolspec import ToolInputError, ToolSpec

log = logging.getLogger("wismo.servers")


def error_result(message: str) -> types.CallToolResult:
    """A tool error the model can read: isError with one text block holding one sentence."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def call(spec: ToolSpec, dataset: Dataset, arguments: dict[str, object] | None) -> types.CallToolResult:
    """Run one tool on its arguments; bad input becomes a tool error, never an exception."""
    if arguments is not None and not isinstance(arguments, dict):
        return error_result(f"{spec.name} takes an object of arguments with {spec.kind.id_key}.")
    value = (arguments or {}).get(spec.kind.id_key)
    try:
        if spec.options:
            record = spec.run(dataset, value, {name: (arguments or {}).get(name) for name in spec.options})
        else:
            record = spec.run(dataset, value)
    except LookupFailure as failure:
        return error_result(failure.message)
    except ToolInputError as failure:
        return error_result(str(failure))
    # Unknown extra arguments are ignored, as the input schema (no additionalProperties) allows.
    return types.CallToolResult(content=[types.TextContent(text=compact(record))])


def build_server(design: str, specs: tuple[ToolSpec, ...], dataset: Dataset) -> Server:
    """An MCP server offering `specs` over `dataset`, pinned to one protocol revision."""
    by_name = {spec.name: spec for spec in specs}
    listing = types.ListToolsResult(tools=[spec.to_mcp() for spec in specs])

    async def on_list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return listing

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            # A protocol error, as the spec asks for an unknown tool; the message lists what exists.
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool {params.name!r}; this server offers {', '.join(by_name)}.",
            )
        try:
            return call(spec, dataset, params.arguments)
        except Exception:  # a bug must not take the server down or leak a traceback to the client
            log.exception("tool %s failed", spec.name)
            return error_result(f"{spec.name} failed inside the server; the failure was logged.")

    server = Server(
        f"wismo-{design}",
        version=__version__,
        instructions=None,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    server.middleware.insert(0, pin_revision)
    return server


async def serve_stdio(server: Server) -> None:
    """Serve one client over this process's stdin and stdout, handshake era only, until stdin closes.

    The SDK's own server loop drives the session. Its transport is our non-threaded one (stdio_fast) when
    stdin and stdout are pipes or sockets, as every MCP client gives them; otherwise, or with
    WISMO_STDIO_TRANSPORT=sdk, the SDK's threaded stdio transport.
    """
    from wismo.mcp.servers import stdio_fast

    if os.environ.get("WISMO_STDIO_TRANSPORT") != "sdk" and stdio_fast.usable():
        transport = stdio_fast.stdio_server()
    else:
        from mcp.server.stdio import stdio_server

        transport = stdio_server()
    async with transport as (read_stream, write_stream), server.lifespan(server) as state:
        await serve_handshake_loop(server, read_stream, write_stream, state)


def _reply_to_unreadable(write_stream: Any) -> Callable[[Exception], Awaitable[None]]:
    """An observer for lines the transport could not read: answer each with a JSON-RPC error (id null)."""
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
    from pydantic import ValidationError

    async def reply(exc: Exception) -> None:
        not_json = isinstance(exc, ValidationError) and any(e.get("type") == "json_invalid" for e in exc.errors())
        code, message = (
            (PARSE_ERROR, "Parse error: the line is not valid JSON.")
            if not_json
            else (INVALID_REQUEST, invalid_request(exc))  # the transport's own sentence (stdio_fast)
            if isinstance(exc, WismoError)
            else (INVALID_REQUEST, "Invalid request: the line is JSON but not a JSON-RPC 2.0 message.")
        )
        await write_stream.send(
            SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message)))
        )

    return reply


async def serve_handshake_loop(server: Server, read_stream: Any, write_stream: Any, state: object) -> None:
    """The SDK's handshake-only serve loop (as mcp.server.runner.serve_loop builds it), with one addition: a
    line that is not a JSON-RPC message gets a JSON-RPC error instead of silence, so no client waits forever."""
    from mcp.server.connection import Connection
    from mcp.server.runner import serve_connection
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    dispatcher = JSONRPCDispatcher(
        read_stream,
        write_stream,
        inline_methods=frozenset({"initialize"}),
        on_stream_exception=_reply_to_unreadable(write_stream),
    )
    connection = Connection.for_loop(dispatcher)
    await serve_connection(
        server,
        dispatcher,
        connection=connection,
        lifespan_state=state,
        init_options=server.create_initialization_options(),
    )
