"""The MCP server designs (granular, focused, scoped, and any registered in servers.designs), one module each."""

from __future__ import annotations

from wismo.mcp.servers import designs
from wismo.mcp.servers.toolspec import ToolSpec


def design_tools(design: str) -> tuple[ToolSpec, ...]:
    """The tool specs of a registered design by name; raises designs.UnknownDesign naming those that exist."""
    return designs.get(design).tools()
