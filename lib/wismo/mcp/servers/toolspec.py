"""A tool as both designs declare it: one identifier argument, one lookup, one JSON text result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wismo.core.errors import InputError
from wismo.domain import Kind

if TYPE_CHECKING:
    import mcp_types as types


class ToolInputError(InputError):
    """Bad input a design's own code found (beyond the identifier checks); the message is the one sentence a
    client sees. The shared server code catches this, never a particular design's error."""


@dataclass(frozen=True)
class ToolSpec:
    """A read-only tool taking one identifier of `kind` and returning `run(dataset, id)` as JSON text."""

    name: str
    description: str
    kind: Kind
    argument_description: str
    run: Callable[..., object]
    # Optional arguments beyond the identifier (name -> JSON Schema); run() then takes them as a third argument.
    options: dict[str, dict[str, object]] = field(default_factory=dict)

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, in the article's key order."""
        return {
            "type": "object",
            "properties": {
                self.kind.id_key: {"description": self.argument_description, "type": "string"},
                **self.options,
            },
            "required": [self.kind.id_key],
        }

    def to_mcp(self) -> types.Tool:
        """The tools/list entry: name, description, input schema and read-only, closed-world hints."""
        import mcp_types as types  # here, not at the top: the design registry reads the specs without MCP

        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema(),
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        )
