"""A study's [designs.NAME] tables: how each design's server is reached (a design wismo serves, a stdio command or
a Streamable HTTP URL) and how its investigation follows links or pages."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wismo.servers import designs as registry
from wismo.servers.designs import Cursor, FollowUp, Investigation
from wismo.studies.problems import Problems

DESIGN_KEYS = ("serve", "command", "url", "env", "color", "entry", "links", "cursor")
ENTRY_KEYS = ("tool", "arguments", "into")
LINK_KEYS = ("from", "tool", "argument", "into", "batch")
CURSOR_KEYS = ("next", "argument")
COLOR = re.compile(r"#[0-9A-Fa-f]{6}")
PYTHON = "{python}"  # in a command: the interpreter wismo runs on (its virtual environment's)
FOLDER = "{folder}"  # in a command or an env value: the study file's folder, as an absolute path
# Colour-blind-safe (Okabe-Ito) colours for designs that declare none: the registry's blue and orange first, never
# the case study's pink and green (render/charts.py CASE_STUDY_COLORS), so no study design looks like broad or scoped.
PALETTE = ("#0072B2", "#E69F00", "#56B4E9", "#D55E00", "#F0E442", "#000000")


@dataclass(frozen=True)
class StudyDesign:
    """One design of a study: how to reach its server (a design wismo serves, a stdio command, or an HTTP URL) and
    how its investigation gathers the evidence."""

    name: str
    investigation: Investigation
    color: str
    serve: str | None = None
    command: tuple[str, ...] = ()
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    folder: Path = Path(".")

    @property
    def transport(self) -> str | None:
        """The transport the declaration fixes (None for a design wismo serves, which takes either)."""
        return None if self.serve else ("http" if self.url else "stdio")

    @property
    def target(self) -> str:
        """Where the server is, as a sentence names it."""
        return self.url or (f"wismo serve {self.serve}" if self.serve else " ".join(self.command))


def read_design(r: Problems, folder: Path, name: str, spec: Any, index: int) -> StudyDesign | None:
    """One [designs.NAME] table as a StudyDesign, or None (the problems said)."""
    where = f'design "{name}"'
    if not isinstance(spec, dict):
        r.say(where, "must be a table, [designs." + name + "]")
        return None
    before = len(r.problems)
    r.keys(where, spec, DESIGN_KEYS)
    ways = [k for k in ("serve", "command", "url") if k in spec]
    if len(ways) != 1:
        r.say(
            where,
            "give exactly one of serve (a design wismo serves), command (a stdio server) or url (Streamable HTTP)"
            + (f"; it gives {' and '.join(ways)}" if ways else ""),
        )
    env = spec.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        r.say(where, "env must be a table of strings")
        env = {}
    color = spec.get("color")
    if color is not None and not (isinstance(color, str) and COLOR.fullmatch(color)):
        r.say(where, f'color must be "#RRGGBB", not {color!r}')
        color = None
    serve, command, url, how = None, (), None, None
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
            command = spec["command"]
            if not isinstance(command, list) or not command or not all(isinstance(x, str) and x for x in command):
                r.say(where, 'command must be a non-empty list of strings, such as ["{python}", "server.py"]')
                command = ()
            command = tuple(sys.executable if x == PYTHON else _placed(x, folder) for x in command)
        if "url" in spec:
            url = spec["url"]
            if not isinstance(url, str) or not re.match(r"https?://[^\s/]+", url):
                r.say(where, f"url must be an http:// or https:// address, not {url!r}")
        how = _investigation(r, where, spec)
    if len(r.problems) > before or how is None:
        return None
    return StudyDesign(
        name=name,
        investigation=how,
        color=color or "",  # filled in by the study once every design's colour is known
        serve=serve,
        command=tuple(command),
        url=url,
        env={k: _placed(v, folder) for k, v in env.items()},
        folder=folder,
    )


def _placed(value: str, folder: Path) -> str:
    """A command word or env value with {folder} replaced by the study file's folder (absolute): servers that resolve
    relative paths against their own install folder still find the study's files."""
    return value.replace(FOLDER, str(folder.resolve()))


def _investigation(r: Problems, where: str, spec: dict[str, Any]) -> Investigation | None:
    """entry, links and cursor as an Investigation."""
    entry = spec.get("entry")
    if not isinstance(entry, dict):
        r.say(where, 'entry is missing: give the first call, entry = { tool = "...", arguments = { ... } }')
        return None
    r.keys(f"{where} entry", entry, ENTRY_KEYS)
    tool = r.text(where, entry, "tool")
    arguments = entry.get("arguments", {})
    if not isinstance(arguments, dict):
        r.say(where, "entry.arguments must be a table of argument names and templates")
        arguments = {}
    into = entry.get("into", "")
    if not isinstance(into, str):
        r.say(where, "entry.into must be a string")
    links = []
    raw_links = spec.get("links", [])
    if not isinstance(raw_links, list) or not all(isinstance(x, dict) for x in raw_links):
        r.say(where, "links must be a list of tables, each { from, tool, argument, into }")
        raw_links = []
    for i, link in enumerate(raw_links, start=1):
        at = f"{where} links[{i}]"
        r.keys(at, link, LINK_KEYS)
        values = [r.text(at, link, k) for k in ("from", "tool", "argument")]
        link_into = link.get("into", "")
        batch = link.get("batch", False)
        if not isinstance(link_into, str) or not isinstance(batch, bool):
            r.say(at, "into must be a string and batch true or false")
        elif all(values):
            links.append(FollowUp(values[0], values[1], values[2], link_into, batch))
    cursor = None
    if "cursor" in spec:
        raw = spec["cursor"]
        if not isinstance(raw, dict):
            r.say(where, 'cursor must be a table, { next = "page.next", argument = "cursor" }')
        else:
            r.keys(f"{where} cursor", raw, CURSOR_KEYS)
            cursor = Cursor(
                r.text(f"{where} cursor", raw, "next") or "page.next",
                r.text(f"{where} cursor", raw, "argument") or "cursor",
            )
        if links:
            r.say(where, "give links or cursor, not both")
    if not tool:
        return None
    return Investigation(entry=tool, links=tuple(links), cursor=cursor, arguments=arguments, into=into or "")


def served(name: str) -> StudyDesign:
    """A design wismo serves, as a study entry (its registry declaration: investigation, colour, server)."""
    design = registry.get(name)
    return StudyDesign(name=name, investigation=design.investigation, color=design.color, serve=name)
