"""The problems of one study file, gathered while its parts are read: one sentence each, naming the design (or the
top level) and the key; and the one reading of a text value that the schema has checked."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


class Problems:
    """Gathers the problems of one file while its parts are read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []

    def say(self, where: str, what: str) -> None:
        """One problem: where it is (empty for the file as a whole) and what is wrong."""
        self.problems.append(f"{where}: {what}." if where else f"{what}.")


def text(table: Mapping[str, object], key: str) -> str | None:
    """The non-empty string at `key`, or None (the schema says when it is missing or not a string)."""
    value = table.get(key)
    return value if isinstance(value, str) and value.strip() else None
