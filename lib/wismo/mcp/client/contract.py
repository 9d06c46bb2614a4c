"""The pinned contract of every design: its tools/list (names, descriptions, schemas, annotations, order) and
the protocol revision, kept in data/contracts/tools.json and compared with what the servers say over MCP."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any, TypedDict, cast

from wismo.core.jsonfmt import stable, write_stable
from wismo.core.paths import DATA
from wismo.core.revision import PINNED_REVISION
from wismo.mcp.client.connection import connect
from wismo.mcp.servers import designs

CONTRACT = DATA / "contracts" / "tools.json"
SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


class Contract(TypedDict):
    """The contract of every design: the protocol revision and each design's tools/list, in wire form."""

    protocolRevision: str | None
    designs: dict[str, list[dict[str, object]]]


async def current(transport: str = "stdio") -> Contract:
    """What every design's server reports right now over MCP, with the revision the handshake settled on."""
    listed = {}
    for design in designs.names(contract=True):
        async with connect(design, transport) as conn:
            listed[design] = await conn.list_tools()
            revision = conn.session.protocol_version
    return {"protocolRevision": revision, "designs": listed}


def pinned() -> dict[str, object]:
    """The contract as pinned in the repository."""
    return cast("dict[str, object]", json.loads(CONTRACT.read_text(encoding="utf-8")))


def drift(pinned_contract: Mapping[str, object], now: Mapping[str, object]) -> str:
    """A unified diff from the pinned contract to the current one; empty when nothing drifted."""
    lines = difflib.unified_diff(
        stable(pinned_contract).splitlines(),
        stable(now).splitlines(),
        fromfile="data/contracts/tools.json (pinned)",
        tofile="servers now",
        lineterm="",
    )
    return "\n".join(lines)


def wire_name_problems(tools: list[dict[str, Any]], allowed: set[str] | None = None) -> list[str]:
    """Tool names that are not snake_case or repeat; with `allowed`, names a client allows that the server lacks."""
    names = [t["name"] for t in tools]
    problems = [f"tool name {n!r} is not snake_case" for n in names if not SNAKE_CASE.fullmatch(n)]
    problems += [f"tool name {n!r} appears {names.count(n)} times" for n in sorted(set(names)) if names.count(n) > 1]
    if allowed is not None:
        problems += [f"the client allows {n!r}, which the server does not report" for n in sorted(allowed - set(names))]
    return problems


def update(now: Mapping[str, object]) -> None:
    """Pin the current contract (a deliberate act: `wismo contract --update`)."""
    if now["protocolRevision"] != PINNED_REVISION:
        raise ValueError(f"refusing to pin revision {now['protocolRevision']}; the project pins {PINNED_REVISION}")
    write_stable(CONTRACT, now)
