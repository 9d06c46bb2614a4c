"""What a page of the scoped design looks like from the outside: the lists it fills, the concise format, and how
pages merge back into the order's whole context. Neutral ground: the scoped server (servers/paging.py) makes the
pages, clients (the comparison, the scripted model, the scale report) merge them; neither imports the other."""

from __future__ import annotations

from typing import Any

DEFAULT_CAP = 2000  # tokens per result, the context-budget case study's default
FORMATS = ("concise", "detailed")
# The lists that are paged, in the order pages fill them: (top-level key, key inside it or None).
LISTS = (
    ("order", "items"),
    ("order", "reservationIds"),
    ("order", "trackingIds"),
    ("reservations", None),
    ("tracking", None),
)
# Fields the concise format leaves out: they repeat what the page already says, or are free text.
CONCISE_DROP = {"reservations": ("orderId",), "tracking": ("orderId", "checkedAt", "latestEvent")}


def concise(top: str, element: Any) -> Any:
    """One element of the list `top` as the concise format shows it (a missing-record stand-in as it is)."""
    drop = CONCISE_DROP.get(top, ())
    if isinstance(element, dict) and not element.get("missing"):
        return {k: v for k, v in element.items() if k not in drop}
    return element


def merge(pages: list[dict[str, Any]]) -> dict[str, Any]:
    """The context the pages came from: the first page's order and payment, every list concatenated."""
    first = pages[0]
    order = {k: v for k, v in first["order"].items()}
    merged: dict[str, Any] = {"order": order, "payment": first.get("payment"), "reservations": [], "tracking": []}
    for _, inner in LISTS[:3]:
        order[inner] = [x for p in pages for x in p["order"][inner]]
    merged["reservations"] = [x for p in pages for x in p["reservations"]]
    merged["tracking"] = [x for p in pages for x in p["tracking"]]
    return merged


def concise_view(context: dict[str, Any]) -> dict[str, Any]:
    """The focused context as the concise format shows it (what merging concise pages must give)."""
    return {
        "order": context["order"],
        "payment": concise("payment", context["payment"]),
        "reservations": [concise("reservations", r) for r in context["reservations"]],
        "tracking": [concise("tracking", t) for t in context["tracking"]],
    }
