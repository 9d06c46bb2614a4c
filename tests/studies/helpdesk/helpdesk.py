"""A tiny helpdesk over MCP, in two designs: `granular` (a tool per record) or `focused` (one context tool)."""

import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

TICKETS = {
    "T-1001": {"ticketId": "T-1001", "state": "escalated", "customerId": "C-1", "commentIds": ["M-1", "M-2", "M-3"]},
    "T-1002": {"ticketId": "T-1002", "state": "open", "customerId": "C-2", "commentIds": []},
}
CUSTOMERS = {"C-1": {"customerId": "C-1", "plan": "enterprise"}, "C-2": {"customerId": "C-2", "plan": "free"}}
COMMENTS = {f"M-{i}": {"commentId": f"M-{i}", "text": t} for i, t in enumerate(["Down again", "Looking", "Fixed?"], 1)}
if os.environ.get("HELPDESK_FAULT") == "drop-comment":  # a planted fault: the focused context loses a comment
    TICKETS["T-1001"] = {**TICKETS["T-1001"], "commentIds": ["M-1", "M-2"]}


def answer(record) -> CallToolResult:
    """The record as JSON text, or the same one-sentence error from every tool (so both designs refuse alike)."""
    if isinstance(record, str):
        return CallToolResult(content=[TextContent(type="text", text=record)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(record))])


def find(table: dict, kind: str, key: str):
    return table.get(key, f"There is no {kind} {key}.")


server = MCPServer("helpdesk")
if sys.argv[1:] == ["granular"]:

    @server.tool()
    def get_ticket(ticketId: str) -> CallToolResult:
        """A ticket: its state, its customer's ID and its comments' IDs."""
        return answer(find(TICKETS, "ticket", ticketId))

    @server.tool()
    def get_customer(customerId: str) -> CallToolResult:
        """A customer and their plan."""
        return answer(find(CUSTOMERS, "customer", customerId))

    @server.tool()
    def get_comment(commentId: str) -> CallToolResult:
        """One comment of a ticket."""
        return answer(find(COMMENTS, "comment", commentId))

else:

    @server.tool()
    def get_ticket_context(ticketId: str) -> CallToolResult:
        """A ticket with its customer and every comment."""
        ticket = find(TICKETS, "ticket", ticketId)
        if isinstance(ticket, str):
            return answer(ticket)
        comments = [COMMENTS[c] for c in ticket["commentIds"]]
        return answer({"ticket": ticket, "customer": CUSTOMERS[ticket["customerId"]], "comments": comments})


server.run()
