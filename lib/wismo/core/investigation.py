"""The shape of a design's investigation, declared once for the client, the servers and the scripted model: the
entry call, then links to follow in its value or pages by cursor, and how each step reads its result."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from wismo.core import templates
from wismo.core.jsonfmt import canonical
from wismo.core.reading import JSON, NoStructuredContent, Reading


@dataclass(frozen=True)
class FollowUp:
    """A link: what the entry's value holds that a follow-up tool takes. `key` is a JMESPath expression evaluated on
    the entry's value; a list it finds is followed element by element (one call each, or one call with the whole
    list with `batch`), nulls skipped. `arguments` are templates filled from the case's fields and `{item}`, the
    value followed. `into` is where the evidence keeps the results (a list when the expression found a list);
    `reading` is how each result is read."""

    key: str
    tool: str
    arguments: dict[str, Any]
    into: str
    batch: bool = False
    reading: Reading = JSON

    @classmethod
    def passing(cls, key: str, tool: str, argument: str, into: str, batch: bool = False) -> FollowUp:
        """The link that passes the value followed as one argument (a study file's `argument = "x"`)."""
        return cls(key, tool, {argument: "{" + templates.ITEM + "}"}, into, batch)

    def call_arguments(self, item: object, values: dict[str, object]) -> dict[str, object]:
        """The arguments of the call that follows `item` for a case with these field values."""
        return cast("dict[str, object]", templates.fill(self.arguments, {**values, templates.ITEM: item}))

    @property
    def item_arguments(self) -> tuple[str, ...]:
        """The arguments that take the value followed as it is (a list under batch)."""
        whole = "{" + templates.ITEM + "}"
        return tuple(name for name, template in self.arguments.items() if template == whole)


@dataclass(frozen=True)
class Cursor:
    """How a paged design names its next page: a JMESPath expression finding the cursor in a page (null on the last
    page), and the argument that asks for it."""

    next: str = "page.next"
    argument: str = "cursor"


@dataclass(frozen=True)
class Investigation:
    """How a model (or a script) gathers the evidence for one case with this design's tools.

    Turn 1 calls `entry` with `arguments`, templates filled from the case ("{orderId}"), and reads its result as
    `reading` says. With `links`, turn 2 calls every linked tool at once, one call per value each link finds in the
    entry's value (one call per list with batch). With `cursor`, every later turn asks `entry` for the page the
    previous page names, until it names none.
    """

    entry: str
    links: tuple[FollowUp, ...] = ()
    cursor: Cursor | None = None
    arguments: dict[str, object] = field(default_factory=lambda: {"orderId": "{orderId}"})
    into: str = "order"  # where the entry result sits in the evidence; empty: the linked results merge into it
    merge_pages: Callable[[list[Any]], object] | None = None  # a paged design's own merge (else the generic one)
    reading: Reading = JSON  # how the entry's result (every page of it) is read

    def following_resources(self) -> set[str]:
        """The tools whose results' resource links a step asks to read (follow_resources = true)."""
        return {tool for _, tool, reading in self.steps() if reading.follow_resources}

    def tools(self) -> set[str]:
        """Every tool name the investigation calls."""
        return {self.entry, *(link.tool for link in self.links)}

    def entry_arguments(self, values: dict[str, object]) -> dict[str, object]:
        """The entry call's arguments for one case (its fields fill the templates)."""
        return cast("dict[str, object]", templates.fill(self.arguments, values))

    def steps(self) -> list[tuple[str, str, Reading]]:
        """Every step as (its name in a sentence, its tool, its reading): the entry, then each link."""
        return [("entry", self.entry, self.reading)] + [
            (f"links[{i}]", link.tool, link.reading) for i, link in enumerate(self.links, start=1)
        ]

    def value_of(self, call: Mapping[str, Any], link: FollowUp | None = None) -> object:
        """What one call established, read as its step says (the entry's reading, or the link's); None for an error.
        NoStructuredContent names the step and the tool when read = "structured" meets a result without one."""
        if call["isError"]:
            return None
        reading = self.reading if link is None else link.reading
        try:
            return reading.value(call["output"], call.get("structured"), call.get("blocks"))
        except NoStructuredContent:
            step = "entry" if link is None else f"links[{self.links.index(link) + 1}]"
            raise NoStructuredContent(step, call["name"]) from None

    def next_page(self, page: object, values: dict[str, object]) -> dict[str, object] | None:
        """The arguments of the call for the page after `page`, or None when it is the last (or no page at all)."""
        if self.cursor is None:
            return None
        cursor = templates.read(page, self.cursor.next)
        if cursor is None or cursor == "" or isinstance(cursor, (list, dict)):
            return None
        return {**self.entry_arguments(values), self.cursor.argument: cursor}

    def targets(self, value: object, link: FollowUp) -> tuple[list[object], bool]:
        """The values one link follows in the entry's value, and whether its expression found a list (many
        records): the list's elements but its nulls, or the one value found, or nothing."""
        found = templates.read(value, link.key)
        many = isinstance(found, list)
        values = found if many else [found]
        return [v for v in values if v is not None], many

    def followed(self, value: object, link: FollowUp) -> list[object]:
        """What each call of one link passes as `{item}`: every value found, or under batch the whole list (each
        value once, in the order first met) in one call, or no call when nothing was found."""
        values, _ = self.targets(value, link)
        if link.batch:
            return [_unique(values)] if values else []
        return values

    def linked_calls(self, value: object, values: dict[str, object]) -> list[tuple[str, dict[str, object]]]:
        """The follow-up calls for the entry's value and a case's fields: (tool, arguments), in link order."""
        return [
            (link.tool, link.call_arguments(item, values)) for link in self.links for item in self.followed(value, link)
        ]


def _unique(values: list[object]) -> list[object]:
    """Each value once, in the order first met (values may be objects, so they are told apart by their JSON)."""
    seen: dict[str, object] = {}
    for v in values:
        seen.setdefault(canonical(v), v)
    return list(seen.values())
