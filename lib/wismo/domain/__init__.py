"""Records, identifiers, the fixed clock and the support-context aggregation."""

from ..clock import CLOCK
from .context import linked, missing_record, support_context
from .dataset import Dataset, DatasetError, load
from .ids import KINDS, ORDER, PAYMENT, RESERVATION, TRACKING, InvalidIdentifier, Kind, LookupFailure, RecordNotFound

__all__ = [
    "CLOCK", "Dataset", "DatasetError", "load", "linked", "missing_record", "support_context",
    "KINDS", "ORDER", "PAYMENT", "RESERVATION", "TRACKING", "InvalidIdentifier", "Kind", "LookupFailure",
    "RecordNotFound",
]
