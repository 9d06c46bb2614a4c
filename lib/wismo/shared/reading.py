"""How a step of an investigation reads a tool's result: its text parsed as JSON (else the text), the text as it is,
the result's structuredContent, or the matches of a regular expression in the text.

>>> Reading(pattern=r"^\\[FILE\\] (.+)$").value("[FILE] a.txt\\n[DIR] sub\\n[FILE] b.md")
['a.txt', 'b.md']
>>> Reading(pattern=r"^(?P<kind>\\w+) (?P<name>\\S+)$").value("file a\\ndir b")
[{'kind': 'file', 'name': 'a'}, {'kind': 'dir', 'name': 'b'}]
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from wismo.core.errors import WismoError

READS = ("json", "text", "structured")


class PatternInvalid(WismoError, ValueError):
    """A regular expression that does not compile: `pattern`, and `reason` (the re module's own words)."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"{pattern!r} does not compile as a regular expression ({reason})")
        self.pattern = pattern
        self.reason = reason


class NoStructuredContent(WismoError, ValueError):
    """A result read with read = "structured" that carries no structuredContent: `design`, `step` and `tool`."""

    def __init__(self, step: str, tool: str, design: str = "") -> None:
        where = f'design "{design}": ' if design else ""
        super().__init__(
            f'{where}{step} has read = "structured", but the result of {tool} carries no structuredContent; '
            'read its text instead (read = "json", read = "text" or a pattern)'
        )
        self.design = design
        self.step = step
        self.tool = tool

    def of(self, design: str) -> NoStructuredContent:
        """The same problem, naming the design it happened in."""
        return NoStructuredContent(self.step, self.tool, design)


@functools.lru_cache(maxsize=256)
def compiled(pattern: str) -> re.Pattern[str]:
    """The pattern compiled with re.MULTILINE (so ^ and $ match at every line); PatternInvalid when it fails."""
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise PatternInvalid(pattern, str(exc)) from None


def matches(pattern: str, text: str) -> list[Any]:
    """Every match of the pattern in the text: with named groups an object of those groups per match, with one
    group that group's string, with none the whole match, with several unnamed groups the list of them."""
    regex = compiled(pattern)
    found = regex.finditer(text)
    if regex.groupindex:
        return [{name: m.group(name) for name in regex.groupindex} for m in found]
    if regex.groups == 0:
        return [m.group(0) for m in found]
    if regex.groups == 1:
        return [m.group(1) for m in found]
    return [list(m.groups()) for m in found]


def parsed(text: str) -> Any:
    """A tool's text as JSON, or the text itself when it is not JSON (a server may answer in words)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class Reading:
    """How one step reads its result: `read` ("json", "text" or "structured"), or the matches of `pattern`."""

    read: str = "json"
    pattern: str | None = None

    def value(self, text: str, structured: dict[str, Any] | None = None) -> Any:
        """The step's value for a result's text and structuredContent (None when it carries none: the protocol makes
        it an object); NoStructuredContent when read = "structured" finds none (the caller names step and tool)."""
        if self.pattern is not None:
            return matches(self.pattern, text)
        if self.read == "text":
            return text
        if self.read == "structured":
            if structured is None:
                raise NoStructuredContent("", "")
            return structured
        return parsed(text)

    @property
    def declared(self) -> dict[str, str]:
        """The reading as the study file writes it (empty for the default)."""
        if self.pattern is not None:
            return {"pattern": self.pattern}
        return {} if self.read == "json" else {"read": self.read}


JSON = Reading()
