"""The problems of one study file, gathered while its parts are read: one sentence each, naming the design (or the
top level) and the key."""

from __future__ import annotations

from pathlib import Path


class Problems:
    """Gathers the problems of one file while its parts are read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []

    def say(self, where: str, what: str) -> None:
        """One problem: where it is (empty for the file as a whole) and what is wrong."""
        self.problems.append(f"{where}: {what}." if where else f"{what}.")

    def keys(self, where: str, table: dict[str, object], allowed: tuple[str, ...] | dict[str, str]) -> None:
        """A problem for every key of `table` that is not `allowed`."""
        for key in table:
            if key not in allowed:
                self.say(where, f'unknown key "{key}"; the keys are {", ".join(allowed)}')

    def text(self, where: str, table: dict[str, object], key: str, required: bool = True) -> str | None:
        """The non-empty string at `key`, or None (with a problem when it is required or not a string)."""
        value = table.get(key)
        if value is None:
            if required:
                self.say(where, f"{key} is missing")
            return None
        if not isinstance(value, str) or not value.strip():
            self.say(where, f"{key} must be a non-empty string, not {value!r}")
            return None
        return value
