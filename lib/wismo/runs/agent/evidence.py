"""What a transcript's tool results say: the records it holds and the identifiers it could not read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wismo.domain.ids import ORDER, PAYMENT, RESERVATION, TRACKING
from wismo.domain.links import LINKS, ORDER_KEY, Link, context_keys, kind_of, kinds


@dataclass
class Evidence:
    """Records by kind (the order and each kind it links to), gathered from function_call_output items, plus
    identifiers whose lookup failed."""

    links: tuple[Link, ...] = LINKS
    records: dict[str, list[dict[str, object]]] = field(default_factory=dict)  # by kind name, in the graph's order
    unreadable: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for kind in kinds(self.links):
            self.records.setdefault(kind.name, [])

    @property
    def orders(self) -> list[dict[str, Any]]:
        """The order records."""
        return self.records[ORDER.name]

    @property
    def payments(self) -> list[dict[str, object]]:
        """The payment records."""
        return self.records[PAYMENT.name]

    @property
    def reservations(self) -> list[dict[str, object]]:
        """The warehouse reservation records."""
        return self.records[RESERVATION.name]

    @property
    def tracking(self) -> list[dict[str, Any]]:
        """The carrier tracking records."""
        return self.records[TRACKING.name]

    def add(self, record: object) -> None:
        """File one decoded record (or a support context, or a missing-record stand-in) under its kind."""
        if not isinstance(record, dict):
            return
        if set(context_keys(self.links)) <= set(record):
            self.add(record[ORDER_KEY])
            for link in self.links:
                for item in link.records(record):
                    self.add(item)
            return
        if record.get("missing"):
            ident = next((v for k, v in record.items() if k.endswith("Id")), None)
            if isinstance(ident, str):
                self.unreadable.append(ident)
            return
        kind = kind_of(record, self.links)
        if kind is not None:
            self.records[kind.name].append(record)

    def texts(self) -> list[str]:
        """Every string value in every record: what a claim in a summary may legitimately quote."""
        out: list[str] = []

        def walk(value: object) -> None:
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        walk(list(self.records.values()))
        return out


def from_items(items: list[dict[str, Any]]) -> Evidence:
    """Evidence from a conversation's items: JSON outputs are records, other outputs mark their call's ID unreadable."""
    evidence = Evidence()
    calls = {i["call_id"]: i for i in items if i.get("type") == "function_call"}
    pages = []
    for item in items:
        if item.get("type") != "function_call_output":
            continue
        try:
            record = json.loads(item["output"])
            if isinstance(record, dict) and "page" in record:
                pages.append(record)  # scoped pages are merged back into one context below
            else:
                evidence.add(record)
        except (ValueError, TypeError):
            call = calls.get(item["call_id"])
            arguments = json.loads(call["arguments"]) if call else {}
            evidence.unreadable.extend(v for k, v in arguments.items() if isinstance(v, str) and k.endswith("Id"))
    if pages:
        from wismo.domain.pages import merge

        evidence.add(merge(pages))
    return evidence
