"""The scoped design: the focused context under a token cap per result, a concise default format, a cursor to
the next page, and a statement inside every page of what was left out and how to ask for it (the context-budget
case study)."""

from __future__ import annotations

import os

from wismo.domain import ORDER, Dataset, support_context
from wismo.domain.pages import DEFAULT_CAP, FORMATS
from wismo.mcp.servers.paging import CursorError, page
from wismo.mcp.servers.toolspec import ToolSpec


def _cap() -> int:
    """The cap in tokens: WISMO_SCOPED_CAP if set, else the case study's 2,000."""
    return int(os.environ.get("WISMO_SCOPED_CAP") or DEFAULT_CAP)


# The last few orders' contexts: every page of a big order would otherwise rebuild the whole context.
# Safe because the dataset is read-only once loaded.
_CONTEXTS: dict[tuple[int, str], dict[str, object]] = {}
_CONTEXTS_KEPT = 4


def _context(dataset: Dataset, order_id: object) -> dict[str, object]:
    """The order's support context, remembered for the next page."""
    if not isinstance(order_id, str):
        return support_context(dataset, order_id)  # raises the argument's error
    key = (id(dataset), order_id)
    if key not in _CONTEXTS:
        if len(_CONTEXTS) >= _CONTEXTS_KEPT:
            _CONTEXTS.pop(next(iter(_CONTEXTS)))
        _CONTEXTS[key] = support_context(dataset, order_id)
    return _CONTEXTS[key]


def scoped_context(dataset: Dataset, order_id: object, options: dict[str, object]) -> dict[str, object]:
    """One page of the order's support context."""
    fmt = options.get("format") or "concise"
    cursor = options.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise CursorError("cursor must be the string a previous page gave as next.")
    if not isinstance(fmt, str):
        raise CursorError(f"format must be one of {', '.join(FORMATS)}.")
    return page(_context(dataset, order_id), cursor, fmt, _cap())


TOOLS = (
    ToolSpec(
        name="get_order_support_context",
        description=(
            "Get the evidence for a question about one order, a page at a time: the order (status, promised "
            "delivery date, items), its payment, its warehouse reservations and carrier tracking records, each with "
            "its own timestamps. Each page stays under a fixed token cap; its 'page' block says what was left out "
            "and gives the cursor for the next page. Unavailable carrier data stays an explicit record, and a linked "
            "record that cannot be found is returned with missing true. Order status may lag carrier updates."
        ),
        kind=ORDER,
        argument_description="The order ID, for example ORD-1001.",
        run=scoped_context,
        options={
            "cursor": {
                "description": "The 'next' cursor of the previous page; leave it out for the first page.",
                "type": "string",
            },
            "format": {
                "description": "concise (default) or detailed (every field of every record).",
                "type": "string",
                "enum": list(FORMATS),
            },
        },
    ),
)
