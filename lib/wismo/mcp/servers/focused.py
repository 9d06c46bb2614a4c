"""The focused design: one tool that gathers the order and every linked record in application code."""

from __future__ import annotations

from wismo.domain import ORDER, support_context
from wismo.mcp.servers.toolspec import ToolSpec

TOOLS = (
    ToolSpec(
        name="get_order_support_context",
        description=(
            "Get everything needed to answer a question about one order in a single call: the order (status, "
            "promised delivery date, items), its payment, every warehouse reservation and every carrier "
            "tracking record, each with its own timestamps. Unavailable carrier data stays an explicit record "
            "with availability 'unavailable', and a linked record that cannot be found is returned with "
            "missing true and the reason. Order status may lag carrier updates."
        ),
        kind=ORDER,
        argument_description="The order ID, for example ORD-1001.",
        run=support_context,
    ),
)
