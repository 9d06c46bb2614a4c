"""A small MCP server for `wismo tokens`, its tests and benchmark 7: nested schemas (arrays of objects, enums,
anyOf, $defs/$ref), server instructions, one prompt and one resource; `--tools N` offers N generated tools instead
(the 100-tool benchmark); `--http PORT` serves Streamable HTTP on 127.0.0.1 instead of stdio.
Run as `python -m wismo.bench.toolserver [--tools N] [--http PORT]`, or by path.

Built on the SDK's low-level server, so every schema is exactly the JSON written here.
"""

from __future__ import annotations

import argparse

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

INSTRUCTIONS = "Plan deliveries with plan_route; echo and split return the text they are given, for sampling results."

ADDRESS = {
    "type": "object",
    "description": "A postal address.",
    "properties": {
        "street": {"type": "string", "description": "Street and number."},
        "city": {"type": "string", "description": "City name."},
        "country": {"type": "string", "enum": ["DE", "FR", "NL"]},
    },
    "required": ["city"],
}

PLAN_ROUTE = {
    "type": "object",
    "$defs": {"Address": ADDRESS},
    "properties": {
        "routeId": {"type": "string", "description": "The route ID, for example RT-7."},
        "mode": {"type": "string", "enum": ["van", "bike", "foot"], "description": "How the courier travels."},
        "stops": {
            "type": "array",
            "description": "The stops, in order.",
            "items": {
                "type": "object",
                "properties": {
                    "orderId": {"type": "string", "description": "The order delivered at this stop."},
                    "window": {"type": "string", "enum": ["morning", "afternoon", "evening"]},
                    "parcels": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "description": "Parcel weights in grams.",
                    },
                },
                "required": ["orderId"],
            },
        },
        "driver": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "The driver, if assigned."},
        "depot": {"$ref": "#/$defs/Address"},
        "priority": {"type": "integer", "default": 3, "description": "1 is the most urgent."},
    },
    "required": ["routeId", "stops"],
}

TEXT_ONLY = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "object text."}},
    "required": ["text"],
}

TOOLS = [
    types.Tool(
        name="plan_route",
        description="Plan one delivery route: its stops, mode, driver and depot.",
        input_schema=PLAN_ROUTE,
    ),
    types.Tool(name="echo", description="Return the text it is given, as one text block.", input_schema=TEXT_ONLY),
    types.Tool(
        name="split", description="Return the text it is given in two text blocks, halved.", input_schema=TEXT_ONLY
    ),
    types.Tool(name="ping", description="Answer pong.", input_schema={"type": "object", "properties": {}}),
]

PROMPT = types.Prompt(
    name="summarize_route",
    description="Summarize one route for the courier.",
    arguments=[types.PromptArgument(name="routeId", description="The route to summarize.", required=True)],
)
RESOURCE = types.Resource(
    name="depots", uri="file:///depots.json", description="Every depot and its address.", mime_type="application/json"
)


def generated_tools(count: int) -> list[types.Tool]:
    """`count` tools of a realistic size: a described ID, an enum, an array of objects; their words vary by index."""
    kinds = ("order", "parcel", "invoice", "customer", "courier")
    tools = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        schema = {
            "type": "object",
            "properties": {
                f"{kind}Id": {
                    "type": "string",
                    "description": f"The {kind} ID, for example {kind[:3].upper()}-{1000 + i}.",
                },
                "detail": {"type": "string", "enum": ["summary", "full"], "description": "How much to return."},
                "filters": {
                    "type": "array",
                    "description": "Conditions the records must meet.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "field": {"type": "string", "description": "A field of the record."},
                            "equals": {"type": "string", "description": "The value it must have."},
                        },
                    },
                },
            },
            "required": [f"{kind}Id"],
        }
        tools.append(
            types.Tool(
                name=f"get_{kind}_{i:03d}",
                description=f"Look up one {kind} (variant {i}) and return its record as JSON.",
                input_schema=schema,
            )
        )
    return tools


def build(tools: list[types.Tool]) -> Server:
    """The server offering `tools`, the instructions, the prompt and the resource."""
    names = {t.name for t in tools}

    async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool {params.name!r}.")
        text = str((params.arguments or {}).get("text", "pong" if params.name == "ping" else "{}"))
        if params.name == "split":
            half = len(text) // 2
            return types.CallToolResult(
                content=[types.TextContent(text=text[:half]), types.TextContent(text=text[half:])]
            )
        return types.CallToolResult(content=[types.TextContent(text=text)])

    async def list_prompts(ctx: object, params: object) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[PROMPT])

    async def list_resources(ctx: object, params: object) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[RESOURCE])

    return Server(
        "wismo-toolserver",
        version="1.0",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_list_resources=list_resources,
    )


async def serve(server: Server, http_port: int | None) -> None:
    """Serve over stdio until stdin closes, or over Streamable HTTP until stopped."""
    if http_port is None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    import uvicorn

    config = uvicorn.Config(
        server.streamable_http_app(json_response=True), host="127.0.0.1", port=http_port, log_level="warning"
    )
    await uvicorn.Server(config).serve()


def main(argv: list[str] | None = None) -> int:
    """Serve the fixed tools, or `--tools N` generated ones, until stdin closes or the process is stopped."""
    p = argparse.ArgumentParser(prog="python -m wismo.bench.toolserver", description=__doc__.splitlines()[0])
    p.add_argument("--tools", type=int, default=None, help="offer this many generated tools instead")
    p.add_argument("--http", type=int, default=None, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = p.parse_args(argv)
    try:
        anyio.run(serve, build(TOOLS if args.tools is None else generated_tools(args.tools)), args.http)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
