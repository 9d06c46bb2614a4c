"""A small lending library over MCP, in three designs (the design chosen by the first argument): `granular` (a tool
per record), `batched` (the member, then every loan in one call and every hold in another) or `focused` (one
account tool). The test suite's study of a domain that is not orders."""

import json
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

MEMBERS = {
    "M-1": {"memberId": "M-1", "name": "Ines Duarte", "loanIds": ["L-11", "L-12"], "holdIds": ["H-21"]},
    "M-2": {"memberId": "M-2", "name": "Tom Varga", "loanIds": [], "holdIds": ["H-22"]},
    "M-3": {"memberId": "M-3", "name": "Asha Rao", "loanIds": ["L-13", "L-14", "L-15"], "holdIds": []},
}
LOANS = {
    "L-11": {"loanId": "L-11", "title": "The Left Hand of Darkness", "due": "2026-12-09", "renewals": 1},
    "L-12": {"loanId": "L-12", "title": "A Pattern Language", "due": "2026-12-02", "renewals": 2},
    "L-13": {"loanId": "L-13", "title": "Middlemarch", "due": "2026-12-20", "renewals": 0},
    "L-14": {"loanId": "L-14", "title": "The Art of Doing Science and Engineering", "due": "2026-12-03", "renewals": 0},
    "L-15": {"loanId": "L-15", "title": "Gödel, Escher, Bach", "due": "2026-11-28", "renewals": 3},
}
HOLDS = {
    "H-21": {"holdId": "H-21", "title": "Piranesi", "position": 2},
    "H-22": {"holdId": "H-22", "title": "The Dispossessed", "position": 1},
}


def answer(record) -> CallToolResult:
    """The record as JSON text, or the same one-sentence error from every tool (so every design refuses alike)."""
    if isinstance(record, str):
        return CallToolResult(content=[TextContent(type="text", text=record)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(record, ensure_ascii=False))])


def find(table: dict, kind: str, key: str):
    return table.get(key, f"There is no {kind} {key}.")


server = MCPServer("library")
design = sys.argv[1] if len(sys.argv) > 1 else "granular"


@server.tool()
def get_member(memberId: str) -> CallToolResult:
    """A member: their name, and the IDs of their loans and holds."""
    return answer(find(MEMBERS, "member", memberId))


if design == "granular":

    @server.tool()
    def get_loan(loanId: str) -> CallToolResult:
        """One loan: the title, its due date and how many times it was renewed."""
        return answer(find(LOANS, "loan", loanId))

    @server.tool()
    def get_hold(holdId: str) -> CallToolResult:
        """One hold: the title and the member's place in the queue."""
        return answer(find(HOLDS, "hold", holdId))

elif design == "batched":

    @server.tool()
    def get_loans(loanIds: list[str]) -> CallToolResult:
        """Several loans at once, as asked."""
        return answer([LOANS.get(i, {"loanId": i, "missing": True}) for i in loanIds])

    @server.tool()
    def get_holds(holdIds: list[str]) -> CallToolResult:
        """Several holds at once, as asked."""
        return answer([HOLDS.get(i, {"holdId": i, "missing": True}) for i in holdIds])

else:

    @server.tool()
    def get_member_account(memberId: str) -> CallToolResult:
        """A member with every loan (title, due date, renewals) and every hold (title, place in the queue)."""
        member = find(MEMBERS, "member", memberId)
        if isinstance(member, str):
            return answer(member)
        loans = [LOANS[i] for i in member["loanIds"]]
        holds = [HOLDS[i] for i in member["holdIds"]]
        return answer({"member": member, "loans": loans, "holds": holds})


server.run()
