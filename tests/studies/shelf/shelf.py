"""A lending library's loans over MCP, answered as servers nobody here wrote answer (the design chosen by the first
argument): `rows` as JSON rows, `literal` as a Python literal (as mcp-server-sqlite's read_query does), `lines` as
lines of text. Every row carries the time it was read (a clock, as mcp-server-time's results do), so no two answers
are the same text. SHELF_FAULT=swap-due exchanges the first two loans' due dates in the literal and lines designs."""

import datetime
import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

LOANS = {
    "M-1": [
        {"id": 107, "title": "The Left Hand of Darkness", "due": "2026-12-09", "returned": False},
        {"id": 112, "title": "A Pattern Language", "due": "2026-12-02", "returned": True},
    ],
    "M-2": [
        {"id": 113, "title": "Middlemarch", "due": "2026-12-20", "returned": False},
        {"id": 114, "title": "Piranesi", "due": "2026-12-03", "returned": False},
        {"id": 115, "title": "Gödel, Escher, Bach", "due": "2026-11-28", "returned": True},
    ],
    "M-3": [],
}

server = MCPServer("shelf")
design = sys.argv[1] if len(sys.argv) > 1 else "rows"


def loans(member_id: str, faulty: bool) -> list[dict] | str:
    """The member's loans, each with the time it was read; a sentence when there is no such member."""
    if member_id not in LOANS:
        return f"There is no member {member_id}."
    now = datetime.datetime.now(datetime.UTC).isoformat()
    rows = [dict(loan, checkedAt=now) for loan in LOANS[member_id]]
    if faulty and os.environ.get("SHELF_FAULT") == "swap-due" and len(rows) > 1:
        rows[0]["due"], rows[1]["due"] = rows[1]["due"], rows[0]["due"]
    return rows


def answer(text: str, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


if design == "rows":

    @server.tool()
    def get_loans(memberId: str) -> CallToolResult:
        """A member's loans as JSON rows: id, title, due date, whether returned, and when it was read."""
        rows = loans(memberId, faulty=False)
        return answer(rows, True) if isinstance(rows, str) else answer(json.dumps(rows, ensure_ascii=False))

elif design == "literal":

    @server.tool()
    def read_loans(memberId: str) -> CallToolResult:
        """A member's loans as the rows of a query: a list of dicts."""
        rows = loans(memberId, faulty=True)
        return answer(rows, True) if isinstance(rows, str) else answer(str(rows))

else:

    @server.tool()
    def list_loans(memberId: str) -> CallToolResult:
        """A member's loans, a line each."""
        rows = loans(memberId, faulty=True)
        if isinstance(rows, str):
            return answer(rows, True)
        if not rows:
            return answer(f"{memberId} has nothing on loan.")
        return answer(
            "\n".join(
                f"#{r['id']} {r['title']} | due {r['due']} | returned: {'yes' if r['returned'] else 'no'} | "
                f"checked {r['checkedAt']}"
                for r in rows
            )
        )


if __name__ == "__main__":
    server.run()
