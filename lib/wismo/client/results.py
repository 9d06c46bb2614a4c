"""A tools/call result as wismo reads it: the text of each text-like block, and the bytes of the blocks it counts but
never reads (images, audio, binary resources)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from mcp_types import EmbeddedResource, TextContent, TextResourceContents

from wismo.core.jsonfmt import utf8_len


@dataclass
class ToolResult:
    """A tools/call result: its text (the one text block, or every text block joined by a line), its error flag and
    its structuredContent (None when the result carries none); where it holds several blocks, `blocks` is the text of
    each text-like block in order (embedded text resources too), and `binary` the decoded bytes of its images, audio
    and binary resources, which are counted, never read."""

    text: str
    is_error: bool
    structured: dict[str, Any] | None = None
    blocks: tuple[str, ...] = ()
    binary: int = 0

    @property
    def bytes(self) -> int:
        """UTF-8 bytes of the text inside the result, with its binary blocks' bytes (envelopes excluded, as in the
        article)."""
        return utf8_len(self.text) + self.binary


def blocks(content: list[Any]) -> tuple[list[str], int]:
    """The text of each text-like block of a result (text, an embedded text resource) and the decoded bytes of the
    rest (images, audio, binary resources; a resource link carries neither)."""
    texts, binary = [], 0
    for block in content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            texts.append(block.resource.text)
        else:
            data = getattr(block, "data", None) or getattr(getattr(block, "resource", None), "blob", None)
            binary += len(base64.b64decode(data, validate=False)) if isinstance(data, str) else 0
    return texts, binary
