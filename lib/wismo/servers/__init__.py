"""The MCP server designs: granular (four record tools) and focused (one context tool)."""

from __future__ import annotations

from . import focused, granular
from .tools import ToolSpec

DESIGNS: dict[str, tuple[ToolSpec, ...]] = {"granular": granular.TOOLS, "focused": focused.TOOLS}


def design_tools(design: str) -> tuple[ToolSpec, ...]:
    """The tool specs of a design by name; raises ValueError naming the designs that exist."""
    try:
        return DESIGNS[design]
    except KeyError:
        raise ValueError(f"unknown design {design!r}; choose one of {', '.join(DESIGNS)}") from None
