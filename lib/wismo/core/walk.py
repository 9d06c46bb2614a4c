"""The one walk of an investigation, turn by turn: the calls of the next turn, given what the earlier turns returned.
The MCP client drives it with real calls (client/investigation.py); the scripted model replays it over the
conversation it was sent (agent/scripted.py). Neither walks on its own.

>>> from wismo.core.investigation import FollowUp, Investigation
>>> how = Investigation("get_ticket", (FollowUp.passing("customerId", "get_customer", "customerId", "customer"),),
...                     arguments={"ticketId": "{ticketId}"}, into="ticket")
>>> turns = walk(how, {"ticketId": "T-1"})
>>> next(turns)
[('get_ticket', {'ticketId': 'T-1'})]
>>> turns.send([result("get_ticket", {"ticketId": "T-1"}, '{"customerId": "C-1"}')])
[('get_customer', {'customerId': 'C-1'})]
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NotRequired, TypedDict

from wismo.core.investigation import Investigation

Wanted = list[tuple[str, dict[str, object]]]  # one turn's calls: (tool, arguments), in the order asked


class Call(TypedDict):
    """One tool call of a turn and what came back: the server's text, its error flag, its structuredContent."""

    name: str
    arguments: dict[str, object]
    output: str
    isError: bool
    structured: dict[str, object] | None
    blocks: NotRequired[list[str]]  # each text block's text, where the result held several blocks
    binary: NotRequired[int]  # the decoded bytes of its images, audio and binary resources, counted, never read
    reads: NotRequired[int]  # the resource links read in their places (resources/read, an interaction each)


def result(
    name: str, arguments: dict[str, object], output: str, is_error: bool = False, structured: Any = None
) -> Call:
    """A call as a turn records it."""
    return {"name": name, "arguments": arguments, "output": output, "isError": is_error, "structured": structured}


def walk(how: Investigation, values: dict[str, object]) -> Generator[Wanted, list[Call], None]:
    """Yields each turn's calls and is sent back their results: the entry call, then every linked call at once
    (when the links find anything), or every further page by cursor, one page per turn; an entry (or page) that
    fails ends the walk."""
    (first,) = yield [(how.entry, how.entry_arguments(values))]
    if first["isError"]:
        return
    value = how.value_of(first)
    if how.links:
        wanted = how.linked_calls(value, values)
        if wanted:
            yield wanted
        return
    while (arguments := how.next_page(value, values)) is not None:
        (page,) = yield [(how.entry, arguments)]
        if page["isError"]:
            return
        value = how.value_of(page)
