"""`python -m wismo.bench.stock_server DESIGN`: a design's tools served as a team would write them with the MCP SDK
alone, its high-level MCPServer over the SDK's own stdio transport, answering from the same dataset; the server
`wismo serve` is measured beside (benchmark 3)."""

import inspect
import sys
from typing import Any


def stock(design: str) -> Any:
    """An MCPServer offering `design`'s tools (names, descriptions, string arguments), each answering as wismo's."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

    from wismo.domain import load
    from wismo.mcp.servers import design_tools
    from wismo.mcp.servers.app import call

    dataset = load()
    server = MCPServer(f"stock-{design}")
    for spec in design_tools(design):
        names = list(spec.input_schema().get("properties", {}))

        def answer(_spec: Any = spec, **arguments: object) -> CallToolResult:
            return call(_spec, dataset, arguments)

        answer.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=str) for n in names],
            return_annotation=CallToolResult,
        )
        answer.__annotations__ = dict.fromkeys(names, str) | {"return": CallToolResult}
        server.add_tool(answer, name=spec.name, description=spec.description)
    return server


if __name__ == "__main__":
    stock(sys.argv[1]).run()
