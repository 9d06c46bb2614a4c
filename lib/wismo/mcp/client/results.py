"""What comes back from a server as wismo reads and records it: a tools/call result (the text of each text-like block,
and the bytes of the blocks it counts but never reads: images, audio, binary resources), and each interaction."""

from __future__ import annotations

import base64
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_types import BlobResourceContents, EmbeddedResource, ResourceLink, TextContent, TextResourceContents

from wismo.core.errors import WismoError
from wismo.core.jsonfmt import utf8_len


@dataclass
class Interaction:
    """One MCP request and what came back: the text's UTF-8 bytes, the error flag and the wall time."""

    method: str
    tool: str | None
    arguments: dict[str, object] | None
    is_error: bool
    text_bytes: int
    elapsed_ms: float


def ms_since(started: float) -> float:
    """Milliseconds since a perf_counter reading."""
    return (time.perf_counter() - started) * 1000


@dataclass
class ToolResult:
    """A tools/call result: its text (the one text block, or every text block joined by a line), its error flag and
    its structuredContent (None when the result carries none); where it holds several blocks, `blocks` is the text of
    each text-like block in order (embedded text resources too), and `binary` the decoded bytes of its images, audio
    and binary resources, which are counted, never read."""

    text: str
    is_error: bool
    structured: dict[str, object] | None = None
    blocks: tuple[str, ...] = ()
    binary: int = 0
    reads: int = 0  # resource links read (resources/read) in their places

    @property
    def bytes(self) -> int:
        """UTF-8 bytes of the text inside the result, with its binary blocks' bytes (envelopes excluded, as in the
        article)."""
        return utf8_len(self.text) + self.binary


@dataclass
class Blocks:
    """The blocks of a result as wismo reads them: the text of each text-like block in order, the decoded bytes of
    the rest, and each resource link as (the place among the texts it stands at, its URI)."""

    texts: list[str]
    binary: int
    links: list[tuple[int, str]]

    def count(self, contents: list[object]) -> None:
        """Add a resource's contents (resources/read) in the place of its link: texts read, blobs counted."""
        for c in contents:
            if isinstance(c, TextResourceContents):
                self.texts.append(c.text)
            elif isinstance(c, BlobResourceContents):
                self.binary += len(base64.b64decode(c.blob, validate=False))


def blocks(content: list[object]) -> Blocks:
    """The text of each text-like block of a result (text, an embedded text resource), the decoded bytes of the
    rest (images, audio, binary resources) and its resource links, which carry neither until followed."""
    found = Blocks([], 0, [])
    for block in content:
        if isinstance(block, TextContent):
            found.texts.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            found.texts.append(block.resource.text)
        elif isinstance(block, ResourceLink):
            found.links.append((len(found.texts), str(block.uri)))
        else:
            data = getattr(block, "data", None) or getattr(getattr(block, "resource", None), "blob", None)
            found.binary += len(base64.b64decode(data, validate=False)) if isinstance(data, str) else 0
    return found


async def followed(found: Blocks, read: Callable[[str], Awaitable[list[object]]]) -> Blocks:
    """The blocks with each resource link's contents (`read`, resources/read) in its place."""
    out = Blocks([], found.binary, [])
    for i in range(len(found.texts) + 1):
        for _, uri in (link for link in found.links if link[0] == i):
            out.count(await read(uri))
        out.texts += found.texts[i : i + 1]
    return out


class ResourceUnread(WismoError, RuntimeError):
    """A resource link the server would not read: its `uri`, and the server's own `message`."""

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(f"resources/read {uri} was refused: {message}")
        self.uri, self.message = uri, message
