"""The focused design's aggregation: one order and every record it links to (the article's GetContext)."""

from __future__ import annotations

from wismo.domain.dataset import Dataset
from wismo.domain.ids import ORDER, Kind, LookupFailure
from wismo.domain.links import LINKS, ORDER_KEY, Link


def missing_record(kind: Kind, ident: object, message: str) -> dict[str, object]:
    """The explicit stand-in for a linked record that could not be read: never silently dropped."""
    return {kind.id_key: ident, "missing": True, "error": message}


def linked(dataset: Dataset, kind: Kind, ident: object) -> dict[str, object]:
    """A linked record, or its missing-record stand-in carrying the same sentence the granular tool returns."""
    try:
        return dataset.get(kind, ident)
    except LookupFailure as failure:
        return missing_record(kind, ident, failure.message)


def support_context(dataset: Dataset, order_id: object, *, links: tuple[Link, ...] = LINKS) -> dict[str, object]:
    """The order with every record it links to (payment, reservations, tracking), in the order the order links them."""
    order = dataset.get(ORDER, order_id)
    context: dict[str, object] = {ORDER_KEY: order}
    for link in links:
        records = [linked(dataset, link.kind, ident) for ident in link.ids(order)]
        context[link.into] = records if link.many else records[0]
    return context
