"""A study's [designs.NAME] tables: how each design's server is reached (a design wismo serves, a stdio command or
a Streamable HTTP URL) and how its investigation follows links or pages."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wismo.core import processes, reading, templates
from wismo.core.investigation import Cursor, FollowUp, Investigation
from wismo.core.reading import Reading
from wismo.mcp.client.address import Address
from wismo.mcp.servers import designs as registry
from wismo.studies.problems import Problems, text

PLACEHOLDER = re.compile(r"<[^<>]+>")  # a value left for the team to fill in, such as "<your focused tool>"
PYTHON = "{python}"  # in a command: the interpreter wismo runs on (its virtual environment's)
FOLDER = "{folder}"  # in a command or an env value: the study file's folder, as an absolute path
# Colour-blind-safe (Okabe-Ito) colours for designs that declare none: the registry's blue and orange first, never
# the case study's pink and green (render/charts.py CASE_STUDY_COLORS), so no study design looks like broad or scoped.
PALETTE = ("#0072B2", "#E69F00", "#56B4E9", "#D55E00", "#F0E442", "#000000")


@dataclass(frozen=True)
class StudyDesign:
    """One design of a study: where its server is and how its investigation gathers the evidence."""

    name: str
    investigation: Investigation
    color: str
    address: Address
    ignore: tuple[str, ...] = ()  # object keys left out of matching and of the hostile pass's comparison


def read_design(r: Problems, folder: Path, name: str, spec: object, index: int) -> StudyDesign | None:
    """One [designs.NAME] table as a StudyDesign, or None (the problems said)."""
    where = f'design "{name}"'
    if not isinstance(spec, dict):
        return None  # the schema said
    before = len(r.problems)
    left = _placeholders(spec)
    if left:
        r.say(where, f"is a placeholder left to fill in: {'; '.join(left)}")
        return None
    ways = [k for k in ("serve", "command", "url") if k in spec]
    if len(ways) != 1:
        r.say(
            where,
            "give exactly one of serve (a design wismo serves), command (a stdio server) or url (Streamable HTTP)"
            + (f"; it gives {' and '.join(ways)}" if ways else ""),
        )
    # Values the schema found wrong are said already; here they are only left out.
    env = spec.get("env", {})
    env = env if isinstance(env, dict) and all(isinstance(v, str) for v in env.values()) else {}
    ignore = ignored(spec.get("ignore"))
    color = spec.get("color") if isinstance(spec.get("color"), str) else None
    serve, url, how = None, None, None
    command: tuple[str, ...] = ()
    if "serve" in spec:
        serve = spec["serve"]
        if serve not in registry.names():
            r.say(where, f'serve names "{serve}", which wismo does not serve; it serves {", ".join(registry.names())}')
            return None
        for key in ("entry", "links", "cursor"):
            if key in spec:
                r.say(where, f"{key} comes from wismo's own declaration of {serve}; leave it out")
        how = registry.get(serve).investigation
        color = color or registry.get(serve).color
    else:
        if "command" in spec:
            declared = spec["command"]
            if not isinstance(declared, list) or not all(isinstance(x, str) for x in declared):
                declared = []
            command = tuple(processes.interpreter() if x == PYTHON else _placed(x, folder) for x in declared)
        if "url" in spec:
            url = spec["url"] if isinstance(spec["url"], str) else None
        how = _investigation(r, where, spec)
    if len(r.problems) > before or how is None:
        return None
    return StudyDesign(
        name=name,
        investigation=how,
        color=color or "",  # filled in by the study once every design's colour is known
        address=Address(serve, command, url, {k: _placed(v, folder) for k, v in env.items()}, str(folder)),
        ignore=ignore,
    )


def ignored(declared: object) -> tuple[str, ...]:
    """An `ignore` list: the object keys (a clock's `checkedAt`, say) to leave out wherever they occur."""
    if not isinstance(declared, list) or not all(isinstance(k, str) and k for k in declared):
        return ()  # none declared, or not a list of keys (the schema said)
    return tuple(dict.fromkeys(declared))


def _placeholders(spec: dict[str, object]) -> list[str]:
    """Each placeholder a design's command, url or entry tool still holds ("key: <what to give>")."""
    found = []
    for key in ("command", "url"):
        values = spec.get(key)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str) and PLACEHOLDER.fullmatch(value):
                found.append(f"{key} {value}")
    entry = spec.get("entry")
    tool = entry.get("tool") if isinstance(entry, dict) else None
    if isinstance(tool, str) and PLACEHOLDER.fullmatch(tool):
        found.append(f"entry.tool {tool}")
    return found


def _placed(value: str, folder: Path) -> str:
    """A command word or env value with {folder} replaced by the study file's folder (absolute): servers that resolve
    relative paths against their own install folder still find the study's files."""
    return value.replace(FOLDER, str(folder.resolve()))


def _investigation(r: Problems, where: str, spec: dict[str, object]) -> Investigation | None:
    """entry, links and cursor as an Investigation."""
    entry = spec.get("entry")
    if entry is None:
        r.say(where, 'entry is missing: give the first call, entry = { tool = "...", arguments = { ... } }')
    if not isinstance(entry, dict):
        return None
    tool = text(entry, "tool")
    arguments = entry.get("arguments", {})
    if not isinstance(arguments, dict):
        arguments = {}
    elif templates.ITEM in templates.fields_named(arguments):
        r.say(where, "entry.arguments names {item}, which only a link's arguments take (the value the link follows)")
    into = entry.get("into", "") if isinstance(entry.get("into", ""), str) else ""
    how_read = _reading(r, where, "entry", entry)
    links = []
    raw_links = spec.get("links", [])
    if not isinstance(raw_links, list) or not all(isinstance(x, dict) for x in raw_links):
        raw_links = []
    for i, raw in enumerate(raw_links, start=1):
        link = _link(r, where, f"links[{i}]", raw)
        if link is not None:
            links.append(link)
            if link.into and not into:
                r.say(
                    where,
                    f'links[{i}].into is "{link.into}" but entry has no into: give the entry one too (where its value '
                    "is kept), or leave every into out to merge the results into one value",
                )
    cursor = None
    if "cursor" in spec:
        raw = spec["cursor"]
        if isinstance(raw, dict):
            cursor = Cursor(text(raw, "next") or "page.next", text(raw, "argument") or "cursor")
            _expression(r, where, "cursor.next", cursor.next)
        if links:
            r.say(where, "give links or cursor, not both")
    if not tool:
        return None
    return Investigation(
        entry=tool, links=tuple(links), cursor=cursor, arguments=arguments, into=into, reading=how_read
    )


def _link(r: Problems, where: str, at: str, raw: dict[str, Any]) -> FollowUp | None:
    """One table of `links` as a FollowUp, or None (the problems said)."""
    before = len(r.problems)
    key, tool = text(raw, "from"), text(raw, "tool")
    if key:
        _expression(r, where, f"{at}.from", key)
    into, batch = raw.get("into", ""), raw.get("batch", False)
    if not isinstance(into, str) or not isinstance(batch, bool):
        return None  # the schema said
    item = "{" + templates.ITEM + "}"
    if ("argument" in raw) == ("arguments" in raw):
        r.say(
            where,
            f"{at} gives {'both argument and' if 'argument' in raw else 'neither argument nor'} arguments: give "
            f'argument = "name" (the value followed passed as that argument) or arguments = {{ name = "{item}", ... }}',
        )
        arguments = None
    elif "argument" in raw:
        name = text(raw, "argument")
        arguments = {name: item} if name else None
    else:
        arguments = raw["arguments"]
        if not isinstance(arguments, dict) or not arguments:
            arguments = None  # the schema said
        elif templates.ITEM not in templates.fields_named(arguments):
            r.say(where, f"{at}.arguments never names {item}, the value the link follows: pass it as one argument")
    how_read = _reading(r, where, at, raw)
    if len(r.problems) > before or not (key and tool and arguments):
        return None
    return FollowUp(key, tool, arguments, into, batch, how_read)


def _reading(r: Problems, where: str, at: str, step: dict[str, object]) -> Reading:
    """How a step reads its result: `read` or `pattern` (not both), a pattern's `types`, checked."""
    read, pattern, types, block = step.get("read"), step.get("pattern"), step.get("types"), step.get("block")
    # Wrong types here are the schema's to say; they are only left out.
    if block is not None and (isinstance(block, bool) or not isinstance(block, int) or block < 0):
        block = None
    follow = step.get("follow_resources", False)
    follow = follow if isinstance(follow, bool) else False
    if types is not None and pattern is None:
        r.say(where, f"{at}.types names the types of a pattern's named groups: give it with a pattern")
        return Reading()
    if read is not None and pattern is not None:
        r.say(where, f"{at} gives both read and pattern: a pattern always reads the text, so give one")
        return Reading()
    if pattern is not None:
        if not isinstance(pattern, str) or not pattern:
            return Reading()
        try:
            reading.compiled(pattern)
        except reading.PatternInvalid as exc:
            r.say(where, f"{at}.pattern {exc}")
            return Reading()
        declared = _types(r, where, at, pattern, types)
        return Reading(pattern=pattern, types=declared, block=block, follow_resources=follow)
    if read is not None and read not in reading.READS:
        return Reading()
    return Reading(read or "json", block=block, follow_resources=follow)


def _types(r: Problems, where: str, at: str, pattern: str, types: object) -> tuple[tuple[str, str], ...]:
    """A pattern's `types`: each a named group of the pattern (its kinds are the schema's to check)."""
    if not isinstance(types, dict):
        return ()
    groups = reading.compiled(pattern).groupindex
    out = []
    for name, kind in types.items():
        if name not in groups:
            named = ", ".join(groups) or "none"
            r.say(where, f"{at}.types names {name!r}, which is no named group of the pattern (it names {named})")
        elif kind in reading.TYPES:
            out.append((name, kind))
    return tuple(out)


def _expression(r: Problems, where: str, key: str, expression: str) -> None:
    """A problem when a JMESPath expression does not parse."""
    try:
        templates.compiled(expression)
    except templates.ExpressionInvalid as exc:
        r.say(where, f"{key} {exc}")


def served(name: str) -> StudyDesign:
    """A design wismo serves, as a study entry (its registry declaration: investigation, colour, server)."""
    design = registry.get(name)
    return StudyDesign(name=name, investigation=design.investigation, color=design.color, address=Address(serve=name))
