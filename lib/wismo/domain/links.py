"""The order's link graph, declared once: which records an order links to, under which key, and where the focused
context keeps them. The dataset's check, the focused context, the scoped pages' lists, the evidence a transcript
holds and the granular design's follow-up calls are all derived from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wismo.domain.ids import ORDER, PAYMENT, RESERVATION, TRACKING, Kind

ORDER_KEY = "order"  # where the focused context keeps the order itself
ITEMS = "items"  # the order's own lines (SKU and quantity): paged with the links, and what tells an order apart


@dataclass(frozen=True)
class Link:
    """One link of the order: order[key] holds the identifier of a `kind` record (a list of them when `many`);
    the focused context keeps the records found under `into`."""

    key: str
    kind: Kind
    many: bool
    into: str

    def ids(self, order: dict[str, Any]) -> list[Any]:
        """The identifiers the order holds under this link, as a list (of one for a single link)."""
        value = order[self.key]
        return list(value) if self.many else [value]

    def records(self, context: dict[str, Any]) -> list[object]:
        """The records a context keeps for this link, as a list (of one for a single link)."""
        value = context[self.into]
        return list(value) if self.many else [value]


LINKS = (
    Link("paymentId", PAYMENT, many=False, into="payment"),
    Link("reservationIds", RESERVATION, many=True, into="reservations"),
    Link("trackingIds", TRACKING, many=True, into="tracking"),
)


def kinds(links: tuple[Link, ...] = LINKS) -> tuple[Kind, ...]:
    """Every record kind an order's evidence can hold: the order, then each linked kind in link order."""
    return (ORDER, *(link.kind for link in links))


def context_keys(links: tuple[Link, ...] = LINKS) -> tuple[str, ...]:
    """The focused context's keys in its order: the order, then where each link's records are kept."""
    return (ORDER_KEY, *(link.into for link in links))


def paged_lists(links: tuple[Link, ...] = LINKS) -> tuple[tuple[str, str | None], ...]:
    """The lists a scoped page fills, in order, as (context key, key inside it or None): the order's items and
    list links, then the records of each list link."""
    many = [link for link in links if link.many]
    return ((ORDER_KEY, ITEMS), *((ORDER_KEY, link.key) for link in many), *((link.into, None) for link in many))


def kind_of(record: dict[str, object], links: tuple[Link, ...] = LINKS) -> Kind | None:
    """The kind of a whole record by its identifier key, the linked kinds first (they also hold the orderId they
    point back to); a linked record an order links by its own identifier key is told from the order by the order's
    items."""
    link_keys = {link.key for link in links}
    for kind in reversed(kinds(links)):
        if kind.id_key not in record:
            continue
        if kind is ORDER:
            return kind if ITEMS in record else None
        if kind.id_key not in link_keys or ITEMS not in record:
            return kind
    return None
