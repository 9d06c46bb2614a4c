"""The order-support domain: records, identifiers, the link graph, the answer contract, questions, large orders."""

from wismo.core.clock import CLOCK
from wismo.domain.context import linked, missing_record, support_context
from wismo.domain.dataset import Dataset, DatasetError, load
from wismo.domain.ids import (
    KINDS,
    ORDER,
    PAYMENT,
    RESERVATION,
    TRACKING,
    InvalidIdentifier,
    Kind,
    LookupFailure,
    RecordNotFound,
)

__all__ = [
    "CLOCK",
    "Dataset",
    "DatasetError",
    "load",
    "linked",
    "missing_record",
    "support_context",
    "KINDS",
    "ORDER",
    "PAYMENT",
    "RESERVATION",
    "TRACKING",
    "InvalidIdentifier",
    "Kind",
    "LookupFailure",
    "RecordNotFound",
]
