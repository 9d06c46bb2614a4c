"""The MCP server designs: granular (four record tools), focused (one context tool), scoped (capped pages)."""

from __future__ import annotations

from . import focused, granular, scoped
from .tools import ToolSpec

DESIGNS: dict[str, tuple[ToolSpec, ...]] = {"granular": granular.TOOLS, "focused": focused.TOOLS, "scoped": scoped.TOOLS}
# The two designs of the article; scoped is the case study's answer for large results (beyond the article).
ARTICLE_DESIGNS = ("granular", "focused")


def design_tools(design: str) -> tuple[ToolSpec, ...]:
    """The tool specs of a design by name; raises ValueError naming the designs that exist."""
    try:
        return DESIGNS[design]
    except KeyError:
        raise ValueError(f"unknown design {design!r}; choose one of {', '.join(DESIGNS)}") from None
