"""The normal call a well-behaved client makes between hostile cases, on either transport, and how its answer is
read: the design's entry tool for one order, answered with that order's record."""

from __future__ import annotations

from typing import Any

from wismo.client.raw import tools_call
from wismo.servers import designs

ORDER = "ORD-1004"  # the partial delivery: the largest context of the six cases


def normal_call(design: str, request_id: int | str = 7, order: str = ORDER) -> dict[str, Any]:
    """The tools/call a normal client makes first: the design's entry tool for `order`."""
    investigation = designs.get(design).investigation
    return tools_call(investigation.entry, investigation.entry_arguments({"orderId": order}), request_id)


def order_id_of(record: Any) -> Any:
    """The order ID a lookup answered with: at the top (granular) or in its order (focused, scoped)."""
    if not isinstance(record, dict):
        return None
    inner = record.get("order")
    return record.get("orderId", inner.get("orderId") if isinstance(inner, dict) else None)
