"""What a page of the scoped design looks like from the outside: the lists it fills, the concise format, and how
pages merge back into the order's whole context. Neutral ground: the scoped server (servers/paging.py) makes the
pages, clients (the comparison, the scripted model, the scale report) merge them; neither imports the other."""

from __future__ import annotations

from typing import Any

from wismo.domain.links import LINKS, ORDER_KEY, Link, paged_lists

DEFAULT_CAP = 2000  # tokens per result, the context-budget case study's default
FORMATS = ("concise", "detailed")
# The lists that are paged, in the order pages fill them: (top-level key, key inside it or None).
LISTS = paged_lists()
# Fields the concise format leaves out: they repeat what the page already says, or are free text.
CONCISE_DROP = {"reservations": ("orderId",), "tracking": ("orderId", "checkedAt", "latestEvent")}


def concise(top: str, element: object) -> object:
    """One element of the list `top` as the concise format shows it (a missing-record stand-in as it is)."""
    drop = CONCISE_DROP.get(top, ())
    if isinstance(element, dict) and not element.get("missing"):
        return {k: v for k, v in element.items() if k not in drop}
    return element


def merge(pages: list[dict[str, Any]], links: tuple[Link, ...] = LINKS) -> dict[str, object]:
    """The context the pages came from: the first page's order and single links, every list concatenated."""
    first = pages[0]
    order = dict(first[ORDER_KEY])
    merged: dict[str, object] = {ORDER_KEY: order}
    for link in links:
        merged[link.into] = [x for p in pages for x in p[link.into]] if link.many else first.get(link.into)
    for _, inner in paged_lists(links):
        if inner is not None:
            order[inner] = [x for p in pages for x in p[ORDER_KEY][inner]]
    return merged


def concise_view(context: dict[str, object], links: tuple[Link, ...] = LINKS) -> dict[str, object]:
    """The focused context as the concise format shows it (what merging concise pages must give)."""
    view: dict[str, object] = {ORDER_KEY: context[ORDER_KEY]}
    for link in links:
        shown = [concise(link.into, r) for r in link.records(context)]
        view[link.into] = shown if link.many else shown[0]
    return view
