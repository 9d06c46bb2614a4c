"""How a step of an investigation reads a tool's result: its text parsed as JSON (else the text), the text as it is,
the result's structuredContent, or the matches of a regular expression in the text.

>>> Reading(pattern=r"^\\[FILE\\] (.+)$").value("[FILE] a.txt\\n[DIR] sub\\n[FILE] b.md")
['a.txt', 'b.md']
>>> Reading(pattern=r"^(?P<kind>\\w+) (?P<name>\\S+)$").value("file a\\ndir b")
[{'kind': 'file', 'name': 'a'}, {'kind': 'dir', 'name': 'b'}]
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from wismo.core.errors import InputError

READS = ("json", "text", "structured", "python")
# What a pattern's named group may be read as besides a string: a study file's `types = { id = "int" }`.
TYPES = ("str", "int", "float", "bool", "json")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


class PatternInvalid(InputError):
    """A regular expression that does not compile: `pattern`, and `reason` (the re module's own words)."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"{pattern!r} does not compile as a regular expression ({reason})")
        self.pattern = pattern
        self.reason = reason


class NoStructuredContent(InputError):
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


def matches(pattern: str, text: str) -> list[object]:
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


def literal(text: str) -> object:
    """A tool's text as a Python literal (a dict, list, tuple, set, string, number, bool or None), read with
    ast.literal_eval, never evaluated as code, as JSON would hold it (tuples and sets as lists); the text itself when
    it is no literal.

    >>> literal("[{'id': 107, 'title': 'Dune', 'returned': False, 'due': None}]")
    [{'id': 107, 'title': 'Dune', 'returned': False, 'due': None}]
    >>> literal("__import__('os').getcwd()")
    "__import__('os').getcwd()"
    """
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return _as_json(value)


def _as_json(value: object) -> object:
    """A literal's value as JSON holds one: tuples as lists, sets in a sorted order, bytes and complex as text."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str | int | float | bool) else k: _as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return [_as_json(v) for v in sorted(value, key=repr)]
    if isinstance(value, bytes | complex):
        return repr(value)
    return value


def typed(value: str | None, kind: str) -> object:
    """A pattern's group as the type a study declares for it (TYPES); the string itself where it does not read as
    that type, so a difference shows rather than a guess.

    >>> typed("107", "int"), typed("2.5", "float"), typed("False", "bool"), typed('["a"]', "json"), typed("x", "int")
    (107, 2.5, False, ['a'], 'x')
    """
    if value is None or kind == "str":
        return value
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            word = value.strip().lower()
            return True if word in _TRUE else False if word in _FALSE else value
        if kind == "json":
            return json.loads(value)
    except ValueError:
        return value
    return value


def parsed(text: str) -> object:
    """A tool's text as JSON, or the text itself when it is not JSON (a server may answer in words)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class Reading:
    """How one step reads its result: `read` ("json", "text", "structured" or "python"), or the matches of `pattern`,
    its named groups read as `types` declares them (group name, type; the rest stay strings); with
    `follow_resources`, the contents of the result's resource links are read as its blocks."""

    read: str = "json"
    pattern: str | None = None
    types: tuple[tuple[str, str], ...] = ()
    block: int | None = None  # of a result of several blocks, the one to read (0-based); None: each, as a list
    follow_resources: bool = False  # read each resource link of the result (resources/read) in its place

    def value(self, text: str, structured: dict[str, object] | None = None, blocks: list[str] | None = None) -> object:
        """The step's value for a result's text and structuredContent (None when it carries none: the protocol makes
        it an object); for a result of several text blocks (`blocks`), each read so, as a list in order, or the one
        `block` picks (None when there is no such block); NoStructuredContent when read = "structured" finds none
        (the caller names step and tool)."""
        if blocks and self.read != "structured":
            if self.block is not None:
                return self.value(blocks[self.block]) if self.block < len(blocks) else None
            return [self.value(b) for b in blocks]
        if self.pattern is not None:
            found = matches(self.pattern, text)
            if not self.types:
                return found
            kinds = dict(self.types)
            return [
                {k: typed(v, kinds.get(k, "str")) for k, v in m.items()} if isinstance(m, dict) else m for m in found
            ]
        if self.read == "python":
            return literal(text)
        if self.read == "text":
            return text
        if self.read == "structured":
            if structured is None:
                raise NoStructuredContent("", "")
            return structured
        return parsed(text)

    @property
    def declared(self) -> dict[str, Any]:
        """The reading as the study file writes it (empty for the default)."""
        picked = {"block": self.block} if self.block is not None else {}
        picked |= {"follow_resources": True} if self.follow_resources else {}
        if self.pattern is not None:
            return {"pattern": self.pattern, **({"types": dict(self.types)} if self.types else {}), **picked}
        return ({} if self.read == "json" else {"read": self.read}) | picked


JSON = Reading()
