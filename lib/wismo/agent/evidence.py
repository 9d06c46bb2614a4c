"""What a transcript's tool results say: the records it holds and the identifiers it could not read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Evidence:
    """Records by kind, gathered from function_call_output items, plus identifiers whose lookup failed."""

    orders: list[dict[str, Any]] = field(default_factory=list)
    payments: list[dict[str, Any]] = field(default_factory=list)
    reservations: list[dict[str, Any]] = field(default_factory=list)
    tracking: list[dict[str, Any]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def add(self, record: Any) -> None:
        """File one decoded record (or a support context, or a missing-record stand-in) under its kind."""
        if not isinstance(record, dict):
            return
        if {"order", "payment", "reservations", "tracking"} <= set(record):
            self.add(record["order"])
            self.add(record["payment"])
            for item in record["reservations"] + record["tracking"]:
                self.add(item)
            return
        if record.get("missing"):
            ident = next((v for k, v in record.items() if k.endswith("Id")), None)
            if isinstance(ident, str):
                self.unreadable.append(ident)
            return
        for key, bucket in (
            ("trackingId", self.tracking),
            ("reservationId", self.reservations),
            ("paymentId", self.payments),
            ("orderId", self.orders),
        ):
            if key in record and (key != "paymentId" or "amount" in record) and (key != "orderId" or "items" in record):
                bucket.append(record)
                return

    def texts(self) -> list[str]:
        """Every string value in every record: what a claim in a summary may legitimately quote."""
        out: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        walk([self.orders, self.payments, self.reservations, self.tracking])
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
