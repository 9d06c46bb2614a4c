"""The registry of tool designs: each design declared once, everything else derived from it.

A design names its server module (the tool specs it serves), its colour in every chart, how an investigation
follows its links (which tool is called first, which tools follow the identifiers that call returned, whether
pages are followed by cursor), and whether its tools/list is pinned in data/contracts/tools.json. The granular
design's follow-up calls are derived from the order's link graph (domain/links.py) and its server's tool specs
(each serves one record kind). The CLI's choices, the plots' colours, the run format's design names, the
comparison, the token accounting, the scale report and the scripted model's rules all read this module.

More designs can be registered without editing wismo: WISMO_DESIGNS names Python files (separated by the
path separator), each defining DESIGN = Design(...). Server processes started by the harness see the same
variable, so a registered design can be served, compared and counted like the built-in ones.

It imports the built-in tool specs (cheap: the MCP types load only when a server lists its tools), no client and
no server process code.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wismo.core.errors import InputError
from wismo.core.investigation import Cursor, FollowUp, Investigation
from wismo.domain.ids import ORDER
from wismo.domain.links import LINKS, Link, kinds
from wismo.domain.pages import merge
from wismo.mcp.servers import granular
from wismo.mcp.servers.toolspec import ToolSpec

ENV = "WISMO_DESIGNS"


@dataclass(frozen=True)
class Design:
    """One tool design: its name, one line on what it is, where its tools are declared, and how it is used."""

    name: str
    summary: str
    color: str
    investigation: Investigation
    # A module path whose TOOLS are the design's tool specs, or a callable returning them (for registered files).
    server: str | Callable[[], tuple[object, ...]]
    article: bool = False  # one of the two designs of "Where is my order?"
    contract: bool = True  # its tools/list is pinned in data/contracts/tools.json
    scale: bool = True  # driven by the scale report over generated large orders
    compared: bool = True  # part of the deterministic comparison (its evidence must equal the reference's)
    extra: dict[str, object] = field(default_factory=dict)

    def tools(self) -> tuple[Any, ...]:
        """The design's tool specs (imports the server module on first use)."""
        if callable(self.server):
            return tuple(self.server())
        return tuple(importlib.import_module(self.server).TOOLS)


class DesignError(InputError):
    """A design that cannot be declared as asked; the message says what is missing."""


def following_links(tools: tuple[ToolSpec, ...], links: tuple[Link, ...] = LINKS) -> Investigation:
    """The investigation of a design with one tool per record kind: the order's tool first, then for each link of
    the order's graph the tool serving the linked kind, given the kind's identifier."""
    by_kind = {tool.kind: tool for tool in tools}
    missing = [kind.name for kind in kinds(links) if kind not in by_kind]
    if missing:
        raise DesignError(f"the tools {', '.join(t.name for t in tools)} serve no {' and no '.join(missing)} records")
    follow = tuple(FollowUp.passing(link.key, by_kind[link.kind].name, link.kind.id_key, link.into) for link in links)
    return Investigation(entry=by_kind[ORDER].name, links=follow)


GRANULAR = Design(
    name="granular",
    summary="four record tools; the model follows the order's links to the payment, reservations and tracking",
    color="#0072B2",  # Okabe-Ito blue
    investigation=following_links(granular.TOOLS),
    server="wismo.mcp.servers.granular",
    article=True,
)
FOCUSED = Design(
    name="focused",
    summary="one context tool; application code follows the links and returns every record at once",
    color="#E69F00",  # Okabe-Ito orange
    investigation=Investigation(entry="get_order_support_context"),
    server="wismo.mcp.servers.focused",
    article=True,
)
SCOPED = Design(
    name="scoped",
    summary="the focused context in pages under a token cap, with a cursor and a statement of what was left out",
    color="#009E73",  # Okabe-Ito green
    investigation=Investigation(entry="get_order_support_context", cursor=Cursor(), merge_pages=merge),
    server="wismo.mcp.servers.scoped",
    compared=False,  # its pages carry a concise view by default; the scale report checks they merge back
)
BUILT_IN = (GRANULAR, FOCUSED, SCOPED)
REFERENCE = GRANULAR.name  # the comparison rebuilds every other design's evidence from this one's records
ONE_CALL = FOCUSED.name  # the design that answers with one call: the article's focused design
PAGED = SCOPED.name  # the design that answers in pages by cursor


class UnknownDesign(InputError):
    """A design name that is not registered; the message lists the designs that are."""


def _load_file(path: str) -> Design:
    """The DESIGN declared by a Python file named in WISMO_DESIGNS."""
    file = Path(path)
    spec = importlib.util.spec_from_file_location(f"wismo_design_{file.stem}", file)
    if spec is None or spec.loader is None or not file.is_file():
        raise UnknownDesign(f"{ENV} names {path}, which is not a readable Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    design = getattr(module, "DESIGN", None)
    if not isinstance(design, Design):
        raise UnknownDesign(f"{path} (named in {ENV}) defines no DESIGN = Design(...)")
    return design


_loaded: dict[str, Design] = {}


def registered() -> dict[str, Design]:
    """Every design by name: the built-in ones, then those WISMO_DESIGNS names, in that order."""
    out = {d.name: d for d in BUILT_IN}
    for path in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        if path not in _loaded:
            _loaded[path] = _load_file(path)
        design = _loaded[path]
        if design.name in out and out[design.name] is not design:
            raise UnknownDesign(f"{path} registers design {design.name!r}, which already exists")
        out[design.name] = design
    return out


def names(**flags: bool) -> tuple[str, ...]:
    """Registered design names, optionally only those whose flags match (for example compared=True)."""
    return tuple(d.name for d in registered().values() if all(getattr(d, k) == v for k, v in flags.items()))


def get(name: str) -> Design:
    """A design by name; raises UnknownDesign naming the designs that exist."""
    try:
        return registered()[name]
    except KeyError:
        raise UnknownDesign(f"unknown design {name!r}; choose one of {', '.join(registered())}") from None


def article() -> tuple[str, str]:
    """The two designs of the article, in its order (granular, focused)."""
    granular, focused = names(article=True)
    return granular, focused


def colors() -> dict[str, str]:
    """Every design's colour, the same in every chart."""
    return {d.name: d.color for d in registered().values()}


def for_tools(tool_names: set[str]) -> Design | None:
    """The design whose investigation these tools serve (how a stateless model tells which design it was given):
    of those whose entry tool is offered, the one calling the most of them, the first registered on a tie
    (focused and scoped call the same tool; a scoped page announces its own next cursor)."""
    fitting = [d for d in registered().values() if d.investigation.entry in tool_names]
    return max(fitting, key=lambda d: len(d.investigation.tools() & tool_names), default=None)


def env() -> dict[str, str]:
    """The variables a server process needs to see the same registry (empty for the built-in designs only)."""
    value = os.environ.get(ENV)
    return {ENV: value} if value else {}
