"""A tiny MCP server that answers as many real servers do: a result of several content blocks (one text block per
record, an embedded text resource, an image), a result of resource links to the records (served as resources), and
a tool that answers the same records as one JSON text block."""

import base64
import json

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents

LOANS = {"M-1": [{"loanId": "L-1", "title": "Dune"}, {"loanId": "L-2", "title": "Emma"}]}
NOTE = {"memberId": "M-1", "note": "two loans"}
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 24).decode("ascii")  # 32 bytes, never read

server = MCPServer("blocks")


@server.tool()
def get_loans(memberId: str) -> CallToolResult:
    """A member's loans, one text block each, then a note as an embedded resource, then a picture."""
    blocks = [TextContent(type="text", text=json.dumps(loan)) for loan in LOANS.get(memberId, [])]
    note = TextResourceContents(uri=f"note://{memberId}", text=json.dumps(NOTE), mimeType="application/json")
    blocks += [
        EmbeddedResource(type="resource", resource=note),
        ImageContent(type="image", data=PIXEL, mimeType="image/png"),
    ]
    return CallToolResult(content=blocks)


@server.tool()
def get_loan_links(memberId: str) -> CallToolResult:
    """A member's loans as links to read (loan://L-1), then the note as text (M-9: a link to a loan that is not)."""
    ids = [loan["loanId"] for loan in LOANS.get(memberId, [])] + (["L-99"] if memberId == "M-9" else [])
    links = [ResourceLink(type="resource_link", uri=f"loan://{i}", name=i, mimeType="application/json") for i in ids]
    return CallToolResult(content=[*links, TextContent(type="text", text=json.dumps(NOTE))])


@server.resource("loan://{loanId}", mime_type="application/json")
def loan(loanId: str) -> str:
    """One loan, as JSON."""
    found = [x for loans in LOANS.values() for x in loans if x["loanId"] == loanId]
    if not found:
        raise ValueError(f"There is no loan {loanId}.")
    return json.dumps(found[0])


@server.tool()
def get_loans_json(memberId: str) -> CallToolResult:
    """The same records as one JSON text block."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps([*LOANS.get(memberId, []), NOTE]))])


if __name__ == "__main__":
    server.run()
