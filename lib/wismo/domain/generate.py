"""Synthetic large orders: N item lines with reservations and shipments, deterministic from a seed.

Served by the same servers when WISMO_LARGE_ORDERS lists the sizes (for example "1,10,100,1000,10000");
never written into data/fixtures.
"""

from __future__ import annotations

import random
from typing import Any

from wismo.core.clock import CLOCK
from wismo.core.errors import InputError

# ORD-9 followed by the line count, zero-padded: ORD-900001 has one line, ORD-910000 ten thousand.
MAX_LINES = 99_999


def order_id(lines: int) -> str:
    """The identifier of the generated order with `lines` item lines."""
    if not 1 <= lines <= MAX_LINES:
        raise InputError(f"a generated order has 1 to {MAX_LINES} lines, not {lines}")
    return f"ORD-9{lines:05d}"


def case_fields(lines: int) -> dict[str, str]:
    """The fields an investigation of the generated order of `lines` lines is filled from (its order ID)."""
    from wismo.domain.ids import ORDER

    return {ORDER.id_key: order_id(lines)}


def generate(lines: int, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Records of one order with `lines` lines, by source: about 60% of lines shipped, some tracking
    unavailable, some linked records missing (about 1% of reservations and shipments).

    Each line is drawn from its own seeded stream, so the order of N+1 lines is the order of N lines plus one: its
    results, and so its tokens, only grow with N, and a breaking size found by searching is the first one."""
    oid = order_id(lines)
    number = oid.removeprefix("ORD-")
    items: list[dict[str, Any]] = []
    reservations, tracking, reservation_ids, tracking_ids = [], [], [], []
    for i in range(1, lines + 1):
        rng = random.Random(f"{seed}:line:{i}")
        sku, quantity = f"SKU-{i:05d}", rng.randint(1, 5)
        items.append({"sku": sku, "quantity": quantity})
        rid = f"RSV-{number}-{i:05d}"
        reservation_ids.append(rid)
        shipped = rng.random() < 0.6
        status = "fulfilled" if shipped else rng.choice(["reserved", "reserved", "backordered"])
        restock = "2026-10-20" if status == "backordered" and rng.random() < 0.5 else None
        if rng.random() >= 0.01:  # about 1% of linked reservations have no record
            reservations.append(
                {
                    "reservationId": rid,
                    "orderId": oid,
                    "sku": sku,
                    "quantity": quantity,
                    "status": status,
                    "expectedRestockDate": restock,
                    "updatedAt": "2026-10-05T09:00:00+00:00",
                }
            )
        if shipped:
            tid = f"TRK-{number}-{i:05d}"
            tracking_ids.append(tid)
            if rng.random() < 0.01:
                continue  # a shipment whose carrier record is missing altogether
            if rng.random() < 0.05:
                tracking.append(
                    {
                        "trackingId": tid,
                        "orderId": oid,
                        "sku": sku,
                        "quantity": quantity,
                        "availability": "unavailable",
                        "status": None,
                        "latestEvent": None,
                        "estimatedDeliveryDate": None,
                        "updatedAt": None,
                        "checkedAt": CLOCK,
                    }
                )
            else:
                delivered = rng.random() < 0.5
                tracking.append(
                    {
                        "trackingId": tid,
                        "orderId": oid,
                        "sku": sku,
                        "quantity": quantity,
                        "availability": "available",
                        "status": "delivered" if delivered else "in_transit",
                        "latestEvent": "Delivered" if delivered else "In transit to the destination hub",
                        "estimatedDeliveryDate": "2026-10-07" if delivered else "2026-10-11",
                        "updatedAt": "2026-10-07T10:00:00+00:00",
                        "checkedAt": CLOCK,
                    }
                )
    order = {
        "orderId": oid,
        "status": "partially_shipped",
        "promisedDeliveryDate": "2026-10-10",
        "updatedAt": "2026-10-06T12:00:00+00:00",
        "items": items,
        "paymentId": f"PAY-{number}",
        "reservationIds": reservation_ids,
        "trackingIds": tracking_ids,
    }
    payment = {
        "paymentId": f"PAY-{number}",
        "orderId": oid,
        "status": "captured",
        "amount": f"{sum(q for q in (x['quantity'] for x in items)) * 25}.00",
        "currency": "EUR",
        "updatedAt": "2026-10-01T09:00:00+00:00",
    }
    return {"orders": [order], "payments": [payment], "reservations": reservations, "tracking": tracking}


def sizes_from(text: str | None) -> list[int]:
    """Parse a WISMO_LARGE_ORDERS value ("1,10,100") into line counts; empty for None or ''."""
    if not text:
        return []
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"WISMO_LARGE_ORDERS must be comma-separated line counts, not {text!r}") from None
    for n in sizes:
        order_id(n)
    return sizes
