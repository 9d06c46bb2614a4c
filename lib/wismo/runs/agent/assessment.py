"""The scripted model's answer: the output contract filled in from the evidence by explicit rules.

Never reads data/fixtures/expectations.json: every field comes from the records the tools returned.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from wismo.runs.agent.evidence import Evidence


def _delivered(evidence: Evidence) -> list[object]:
    """SKUs with an available carrier observation of delivery (it outranks an older order status)."""
    return [
        t["sku"] for t in evidence.tracking if t.get("availability") == "available" and t.get("status") == "delivered"
    ]


def _lookup(values: list[object]) -> Callable[[object], bool]:
    """Whether a value is among `values`, through a set (an order of 10,000 lines made list scans quadratic); a value
    a set cannot hold (a server's list or object where a string belongs) is looked for in the list, as before."""
    hashable = {v for v in values if isinstance(v, Hashable)}

    def among(value: object) -> bool:
        return value in hashable if isinstance(value, Hashable) else value in values

    return among


def assess(evidence: Evidence) -> dict[str, object]:
    """The five structured fields and a customer summary, derived from the evidence alone."""
    order = evidence.orders[0] if evidence.orders else None
    skus = [i["sku"] for i in order["items"]] if order else []
    seen_delivered = _lookup(_delivered(evidence))
    delivered = [s for s in skus if seen_delivered(s)]
    outstanding = [s for s in skus if not seen_delivered(s)]
    open_skus = _lookup(outstanding)

    reasons = []
    if any(p.get("status") != "captured" for p in evidence.payments):
        reasons.append("payment_not_captured")
    if any(r.get("status") == "backordered" and open_skus(r.get("sku")) for r in evidence.reservations):
        reasons.append("stock_shortage")
    if any(t.get("availability") == "available" and t.get("status") == "delayed" for t in evidence.tracking):
        reasons.append("carrier_delay")

    # An estimate only when every outstanding SKU has an available carrier estimate: never borrowed across items.
    estimates = {
        t["sku"]: t.get("estimatedDeliveryDate")
        for t in evidence.tracking
        if t.get("availability") == "available" and t.get("status") != "delivered" and isinstance(t["sku"], Hashable)
    }
    known = [e for s in outstanding if isinstance(s, Hashable) and (e := estimates.get(s))]
    estimate = max(known) if outstanding and len(known) == len(outstanding) else None

    missing = [t["trackingId"] for t in evidence.tracking if t.get("availability") == "unavailable"]
    already = _lookup(missing)
    missing += [i for i in evidence.unreadable if not already(i)]

    answer = {
        "deliveredSkus": delivered,
        "outstandingSkus": outstanding,
        "delayReasons": reasons,
        "deliveryEstimate": estimate,
        "missingEvidence": missing,
    }
    answer["customerSummary"] = summary(order["orderId"] if order else None, answer)
    return answer


REASON_TEXT = {
    "payment_not_captured": "the payment has not been captured yet",
    "stock_shortage": "it is waiting for stock",
    "carrier_delay": "the carrier reports a delay",
}


def _listed(values: list[object]) -> str:
    """Identifiers as a sentence lists them; one a server gave as a list or an object is written as Python shows it."""
    return ", ".join(v if isinstance(v, str) else str(v) for v in values)


def summary(order_id: str | None, a: dict[str, Any]) -> str:
    """A short customer-facing summary that says only what the fields say."""
    if order_id is None:
        return "I could not find that order, so I cannot tell you its status."
    parts = []
    if a["deliveredSkus"]:
        parts.append(f"From your order {order_id}, {_listed(a['deliveredSkus'])} has been delivered.")
    if a["outstandingSkus"]:
        line = f"{_listed(a['outstandingSkus'])} has not been confirmed as delivered"
        if a["delayReasons"]:
            line += " because " + " and ".join(REASON_TEXT[r] for r in a["delayReasons"])
        parts.append(line + ".")
        if a["deliveryEstimate"]:
            parts.append(f"The current estimate for delivery is {a['deliveryEstimate']}.")
        else:
            parts.append("There is no delivery estimate available at this time.")
    if a["missingEvidence"]:
        parts.append(f"I could not retrieve {_listed(a['missingEvidence'])}, so I cannot confirm where that part is.")
    if not a["outstandingSkus"] and not a["missingEvidence"]:
        parts.append("Everything in the order has arrived.")
    return " ".join(parts)
