"""The scoped design's pages: the focused context cut into results under a token cap, with a cursor to the
next page and, inside every page, a statement of what was left out and how to ask for it.

Following every cursor to the end and merging the pages (wismo.domain.pages.merge, which clients use) gives back the
focused response exactly (in the detailed format). Nothing is dropped without being said.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from wismo.core.jsonfmt import compact
from wismo.domain.ids import quote
from wismo.domain.pages import DEFAULT_CAP, FORMATS, LISTS, concise
from wismo.mcp.servers.toolspec import ToolInputError

LIST_NAMES = ("items", "reservation IDs", "tracking IDs", "reservations", "tracking records")
CURSOR = re.compile(r"p1((?:\.[0-9]{1,6}){5})")


class PagingError(ToolInputError):
    """A page cannot be made as asked; the message says why and what to do instead."""


class CursorError(PagingError):
    """A cursor this server did not issue for this order, or a format it does not have."""


def parse_cursor(cursor: object, lengths: list[int]) -> list[int]:
    """Offsets into the five lists from a cursor (None means the first page)."""
    if cursor is None:
        return [0] * len(LISTS)
    match = CURSOR.fullmatch(cursor) if isinstance(cursor, str) else None
    offsets = [int(x) for x in match.group(1)[1:].split(".")] if match else None
    if offsets is None or any(o > n for o, n in zip(offsets, lengths)):
        raise CursorError(
            "cursor is not one this server issued for this order; leave it out to start from the first page."
        )
    return offsets


def _cursor(offsets: list[int]) -> str:
    return "p1." + ".".join(str(o) for o in offsets)


def _list(context: dict[str, Any], index: int) -> list[object]:
    top, inner = LISTS[index]
    return cast("list[object]", context[top][inner] if inner else context[top])


def page(
    context: dict[str, Any],
    cursor: object = None,
    fmt: str = "concise",
    cap: int = DEFAULT_CAP,
    count: Callable[[str], int] | None = None,
) -> dict[str, object]:
    """One page of `context` starting at `cursor`, whose compact JSON text is at most `cap` tokens."""
    if fmt not in FORMATS:
        # Quoted short: a client's string can be a megabyte long, the error stays one readable sentence.
        raise CursorError(
            f"format must be one of {', '.join(FORMATS)}, not "
            f"{quote(fmt) if isinstance(fmt, str) else type(fmt).__name__}."
        )
    if count is None:
        from wismo.accounting.tokens import count_text

        count = count_text
    lengths = [len(_list(context, i)) for i in range(len(LISTS))]
    start = parse_cursor(cursor, lengths)
    order = context["order"]
    first = not any(start)
    paged = tuple(inner for _, inner in LISTS[:3])  # a tuple, not a set: key order must not vary between runs
    # The first page keeps the order's own key order, with the paged lists emptied for filling.
    body: dict[str, Any] = {
        "order": {k: ([] if k in paged else v) for k, v in order.items()}
        if first
        else {"orderId": order["orderId"], **{k: [] for k in paged}}
    }
    if first:
        body["payment"] = context["payment"] if fmt == "detailed" else concise("payment", context["payment"])
    body["reservations"], body["tracking"] = [], []

    def render(offsets: list[int]) -> dict[str, object]:
        done = all(o == n for o, n in zip(offsets, lengths))
        left = [f"{n - o:,} {name}" for o, n, name in zip(offsets, lengths, LIST_NAMES) if n > o]
        shown = {name: [s, o] for s, o, name in zip(start, offsets, LIST_NAMES)}
        note = (
            "This is the last page: nothing was left out."
            if done
            else f"Left out of this page: {', '.join(left)}. Call get_order_support_context with orderId "
            f'"{order["orderId"]}" and cursor "{_cursor(offsets)}" for the next page.'
        )
        if fmt == "concise":
            note += (
                " The concise format leaves out orderId inside each record and the carrier's checkedAt and "
                'latestEvent; ask with format "detailed" for them.'
            )
        return {
            **body,
            "page": {
                "cursor": cursor,
                "next": None if done else _cursor(offsets),
                "format": fmt,
                "cap": cap,
                "shown": shown,
                "totals": dict(zip(LIST_NAMES, lengths)),
                "leftOut": note,
            },
        }

    # Greedy fill in list order, then trim until the whole text fits: the cap holds exactly, not on average.
    offsets = list(start)
    used = count(compact(render(list(lengths))))  # the envelope with the longest note it can carry
    added: list[int] = []
    for i in range(len(LISTS)):
        top = LISTS[i][0]
        target = body["order"][LISTS[i][1]] if LISTS[i][1] else body[top]
        for element in _list(context, i)[offsets[i] :]:
            shown_element = element if fmt == "detailed" else concise(top, element)
            cost = count(compact(shown_element)) + 1
            if used + cost > cap and added:
                break
            target.append(shown_element)
            offsets[i] += 1
            added.append(i)
            used += cost
        else:
            continue
        break
    result = render(offsets)
    size = count(compact(result))  # each candidate page is made and counted once; the cap check reuses it
    while size > cap and len(added) > 1:
        i = added.pop()
        (body["order"][LISTS[i][1]] if LISTS[i][1] else body[LISTS[i][0]]).pop()
        offsets[i] -= 1
        result = render(offsets)
        size = count(compact(result))
    if size > cap:
        raise PagingError(
            f"the cap of {cap} tokens cannot hold one record with the page's framing ({size} tokens); the cap must be "
            "raised."
        )
    return result
