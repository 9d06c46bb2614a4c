"""The fixed instructions and question every model request starts with (the same for both designs)."""

from __future__ import annotations

import hashlib

from wismo.core.clock import CLOCK
from wismo.domain import answer

# Written for wismo: the article's own instructions text is not published, only what they say about
# precedence and the output contract (wismo.domain.answer declares the contract).
INSTRUCTIONS = f"""You are a support assistant for an online store. Answer the customer's question about one order using only the evidence the tools return. The time now is {CLOCK}.

Rules:
- An available carrier observation of delivery takes precedence over an older order status.
- Unavailable tracking means the carrier could not be reached: say that delivery cannot be confirmed; do not call the shipment delayed or lost.
- Do not borrow a delivery date from one item for another.
- Report only delays the evidence establishes.

Reply with one JSON object and nothing else:
{answer.shape()}
delayReasons use: {", ".join(answer.DELAY_REASONS)}. missingEvidence lists the IDs of records whose current state could not be retrieved."""


def question(order_id: str) -> str:
    """The customer's question about one order, as the article asks it."""
    return f"What is happening with my order {order_id}? What has arrived, and when will the rest arrive?"


def instructions_sha256() -> str:
    """Fingerprint of the instructions, recorded with every run that used them."""
    return hashlib.sha256(INSTRUCTIONS.encode("utf-8")).hexdigest()
