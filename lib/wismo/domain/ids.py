"""Identifier kinds of the four sources, and the checks that turn bad input into one clear sentence."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

from wismo.core.errors import WismoError

# Longer than any real identifier by a wide margin; anything past it is rejected before matching.
MAX_ID_LENGTH = 64


# Why a lookup failed: the closed set of LookupFailure.reason.
REASONS = ("missing", "not-a-string", "empty", "too-long", "malformed", "not-found")


class LookupFailure(WismoError):
    """A lookup that could not return a record: `kind` names the record kind (order, payment...), `identifier` is
    the value given, `reason` one of REASONS; `message` is the one sentence a client sees."""

    def __init__(self, message: str, kind: str, identifier: object, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.identifier = identifier
        self.reason = reason


class InvalidIdentifier(LookupFailure):
    """The argument is missing, not a string, or not shaped like an identifier of its kind."""


class RecordNotFound(LookupFailure):
    """The identifier is well formed but no record of its kind has it."""


@dataclass(frozen=True)
class Kind:
    """One record kind: its name, the key that holds its identifier, and the identifier's shape."""

    name: str
    id_key: str
    pattern: str
    example: str

    def check(self, value: object) -> str:
        """Return `value` if it is a well-formed identifier of this kind, else raise InvalidIdentifier."""
        if value is None:
            raise self._invalid(
                value, "missing", f"{self.id_key} is required; give {self.a_name} ID such as {self.example}."
            )
        if not isinstance(value, str):
            raise self._invalid(
                value, "not-a-string", f"{self.id_key} must be a string such as {self.example}, not {json_type(value)}."
            )
        if value == "":
            raise self._invalid(
                value, "empty", f"{self.id_key} is empty; give {self.a_name} ID such as {self.example}."
            )
        if len(value) > MAX_ID_LENGTH:
            raise self._invalid(
                value,
                "too-long",
                f"{self.id_key} is {len(value)} characters long, too long for {self.a_name} ID such as {self.example}.",
            )
        if not _compiled(self.pattern).fullmatch(value):
            raise self._invalid(
                value,
                "malformed",
                f"{self.id_key} {quote(value)} is not {self.a_name} ID; {self.name} IDs look like {self.example}.",
            )
        return value

    def _invalid(self, value: object, reason: str, message: str) -> InvalidIdentifier:
        """The InvalidIdentifier for `value` of this kind, failed for `reason`."""
        return InvalidIdentifier(message, self.name, value, reason)

    def not_found(self, ident: str) -> RecordNotFound:
        """The RecordNotFound for a well-formed `ident` of this kind that no record has."""
        return RecordNotFound(f"{self.name.capitalize()} {ident} was not found.", self.name, ident, "not-found")

    @property
    def a_name(self) -> str:
        """'an order', 'a payment': the kind's name with its article, for error sentences."""
        return ("an " if self.name[0] in "aeiou" else "a ") + self.name


ORDER = Kind("order", "orderId", r"ORD-[0-9]{4,10}", "ORD-1001")
PAYMENT = Kind("payment", "paymentId", r"PAY-[0-9]{4,10}", "PAY-1001")
RESERVATION = Kind("reservation", "reservationId", r"RSV-[0-9]{4,10}-[A-Z0-9]{1,8}", "RSV-1004-B")
TRACKING = Kind("tracking", "trackingId", r"TRK-[0-9]{4,10}-[A-Z0-9]{1,8}", "TRK-1004-A")
KINDS = (ORDER, PAYMENT, RESERVATION, TRACKING)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """The compiled identifier pattern (compiled once: lookups of big orders check tens of thousands of IDs)."""
    return re.compile(pattern)


def json_type(value: object) -> str:
    """The JSON type name of a decoded value, as a client would call it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def quote(value: str, limit: int = 40) -> str:
    """Quote a client's string for an error message: escaped, and shortened when long."""
    shown = value if len(value) <= limit else value[:limit] + "…"
    # json.dumps escapes quotes and control characters, so the message stays one printable line.
    return json.dumps(shown, ensure_ascii=True)
