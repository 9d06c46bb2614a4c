"""The granular design: four tools, each returning one record; the model follows the links."""

from __future__ import annotations

from collections.abc import Callable

from wismo.domain import ORDER, PAYMENT, RESERVATION, TRACKING, Dataset
from wismo.domain.ids import Kind
from wismo.mcp.servers.toolspec import ToolSpec


def _getter(kind: Kind) -> Callable[[Dataset, str], object]:
    """A tool body that returns the one record of `kind` with the given identifier."""
    return lambda dataset, ident: dataset.get(kind, ident)


TOOLS = (
    ToolSpec(
        name="get_order",
        # The article's description, verbatim.
        description=(
            "Get one order's status, promised delivery date, item quantities and linked payment, reservation "
            "and tracking IDs. Follow those IDs with the other tools for payment, warehouse and carrier "
            "evidence. Order status may lag carrier updates."
        ),
        kind=ORDER,
        argument_description="The order ID, for example ORD-1001.",
        run=_getter(ORDER),
    ),
    ToolSpec(
        name="get_payment",
        description=(
            "Get one payment's status (for example captured or pending), amount, currency and last update. "
            "Use the paymentId from get_order."
        ),
        kind=PAYMENT,
        argument_description="The payment ID from the order, for example PAY-1001.",
        run=_getter(PAYMENT),
    ),
    ToolSpec(
        name="get_reservation",
        description=(
            "Get one warehouse reservation: the SKU and quantity it holds, its status (for example reserved, "
            "fulfilled or backordered), the expected restock date if known, and its last update. Use one of "
            "the reservationIds from get_order."
        ),
        kind=RESERVATION,
        argument_description="A reservation ID from the order, for example RSV-1004-B.",
        run=_getter(RESERVATION),
    ),
    ToolSpec(
        name="get_tracking",
        description=(
            "Get the carrier's latest observation of one shipment: SKU and quantity, availability of the "
            "carrier data, status, latest event, estimated delivery date, when the carrier updated it and "
            "when we checked. Use one of the trackingIds from get_order. An unavailable record means the "
            "carrier could not be reached, not that the shipment is lost."
        ),
        kind=TRACKING,
        argument_description="A tracking ID from the order, for example TRK-1004-A.",
        run=_getter(TRACKING),
    ),
)
