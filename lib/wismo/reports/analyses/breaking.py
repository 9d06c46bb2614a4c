"""Where each design breaks, found by a search on order size rather than read off a sweep's grid.

For each design: the first order size (item lines) at which some model call carries more than the context window,
and the first at which the whole session processes more than the budget, if the model reads everything. The
search runs the servers' own tool code in this process (the same functions a server runs, over a dataset holding
just that generated order), because a server serves only the sizes it was started with; the boundary it finds,
the size just below and the size itself, is then confirmed over MCP against real server processes. A generated
order of N+1 lines is the order of N lines plus one (domain/generate.py), so every measure grows with N and the
size the search finds is the first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from mcp_types import TextContent

from wismo.accounting import tokens
from wismo.core.environ import temporary_env
from wismo.core.errors import ClaimFailed
from wismo.domain import load
from wismo.mcp.client.connection import connect
from wismo.mcp.client.results import ToolResult
from wismo.mcp.servers import designs
from wismo.reports.analyses.sweep import account, each_design, investigated, server_env

HOW = (
    "search on order size (interpolation inside the sweep's bracket, halving where it gains too little), with the "
    "servers' own tool code in process; the boundary (N-1 below, N over) confirmed over MCP"
)


def _cap(cap: int | None) -> AbstractContextManager[None]:
    """The scoped cap as a server would read it from its environment, for the duration of an in-process search."""
    return temporary_env(WISMO_SCOPED_CAP=None if cap is None else str(cap))


class InProcess:
    """A design's tools answering in this process exactly as its server answers over MCP (servers.app.call)."""

    def __init__(self, design: str, lines: int) -> None:
        from wismo.mcp.servers.app import call

        self._call = call
        self.specs = {s.name: s for s in designs.get(design).tools()}
        self.dataset = load(large=[lines])

    def list_tools(self) -> list[dict[str, object]]:
        """The tools/list entries, as the wire gives them."""
        return [s.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True) for s in self.specs.values()]

    async def call(self, name: str, arguments: dict[str, object], follow_resources: bool = False) -> ToolResult:
        """One tool call: its single text block and error flag (wismo's servers answer no resource link to
        follow)."""
        result = self._call(self.specs[name], self.dataset, arguments)
        block = result.content[0]
        if not isinstance(block, TextContent):  # wismo's servers answer with one text block, as over MCP
            raise TypeError(f"{name} answered with a {block.type} block, not text")
        return ToolResult(block.text, bool(result.is_error))


@dataclass(frozen=True)
class Criterion:
    """What breaking means: a name, the figure of an accounting row (scale.account) it reads, and the limit that
    figure must not exceed."""

    name: str
    limit: int
    figure: Callable[[dict[str, Any]], int]

    def broken(self, row: dict[str, object]) -> bool:
        """Whether the row breaks this criterion."""
        return self.figure(row) > self.limit


def criteria(window: int, budget: int) -> tuple[Criterion, Criterion]:
    """Over the window (some call's input) and over the budget (the session's total input)."""
    return (
        Criterion("first N over the window", window, lambda r: max(r["inputs"])),
        Criterion("first N over the budget", budget, lambda r: r["totalInput"]),
    )


async def _row_in_process(design: str, n: int, encoding: str, cap: int | None) -> dict[str, object]:
    with _cap(cap):
        conn = InProcess(design, n)
        turns = await investigated(conn, design, n)  # duck-typed: a connection's call()
    return account(design, n, conn.list_tools(), turns, encoding)


async def first_over(
    figure_at: Callable[[int], Awaitable[int]], limit: int, low: tuple[int, int | None], top: tuple[int, int | None]
) -> int:
    """The smallest N in (low, top] whose figure exceeds `limit`, given (N, figure) at a `low` that does not and a
    `top` that does (a figure not yet known is None) and a figure that never falls as N grows.

    Each probe is where the straight line between the bracket's figures crosses the limit: the figures grow almost
    linearly with N, so a probe usually lands on the boundary or beside it. Where two such probes have not halved
    the bracket, the next is its midpoint, so the search takes at most three probes for every halving bisection
    would make."""
    (lo, lo_value), (hi, hi_value) = low, top
    mark, tries = hi - lo, 0  # the bracket's width when it last halved, and the probes since
    while hi - lo > 1:
        if tries >= 2 or lo_value is None or hi_value is None or hi_value <= lo_value:
            probe = (lo + hi) // 2
        else:
            # The first integer past the crossing, inside the bracket.
            crossing = lo + (limit - lo_value) * (hi - lo) // (hi_value - lo_value) + 1
            probe = min(max(crossing, lo + 1), hi - 1)
        value = await figure_at(probe)
        if value > limit:
            hi, hi_value = probe, value
        else:
            lo, lo_value = probe, value
        tries += 1
        if hi - lo <= (mark + 1) // 2:  # halved, rounding up as a midpoint does on an odd width
            mark, tries = hi - lo, 0
    return hi


async def first_size(
    design: str,
    criterion: Criterion,
    low: int,
    top: int,
    encoding: str,
    cap: int | None,
    figures: tuple[int | None, int | None] = (None, None),
) -> int:
    """The smallest N in (low, top] whose session breaks the criterion, given that `low` does not break it and `top`
    does (the bracket the measured sweep gives, with its figures where known), each probe an order investigated in
    process (first_over)."""

    async def figure_at(n: int) -> int:
        return criterion.figure(await _row_in_process(design, n, encoding, cap))

    return await first_over(figure_at, criterion.limit, (low, figures[0]), (top, figures[1]))


def bracket(
    rows: list[dict[str, Any]], design: str, criterion: Criterion
) -> tuple[dict[str, Any] | None, dict[str, Any]] | None:
    """From the sweep measured over MCP, the rows either side of the boundary: the largest size that does not break
    (None: no smaller size was measured) and the first size that does; None when none breaks."""
    mine = sorted((r for r in rows if r["design"] == design), key=lambda r: r["lines"])
    for below, above in zip([None, *mine], mine):
        if criterion.broken(above):
            return below, above
    return None


def _straddling(n: int) -> tuple[int, ...]:
    """The sizes that confirm a boundary at N: N-1 below and N over (N alone when it is 1)."""
    return (n - 1, n) if n > 1 else (n,)


async def confirm(
    design: str, boundaries: list[tuple[int, Criterion]], encoding: str, cap: int | None
) -> list[dict[str, object]]:
    """A design's boundaries over MCP, on one server serving orders of N-1 and N lines for each (each size measured
    once): N must break its criterion, N-1 not."""
    sizes = sorted({s for n, _ in boundaries for s in _straddling(n)})
    async with connect(design, env=server_env(sizes, cap), timeout_s=120) as conn:
        tools = await conn.list_tools()
        rows = {s: account(design, s, tools, await investigated(conn, design, s), encoding) for s in sizes}
    checks = []
    for n, criterion in boundaries:
        broken = [criterion.broken(rows[s]) for s in _straddling(n)]
        confirmed = broken[-1] and not any(broken[:-1])
        checks.append({"design": design, "criterion": criterion.name, "N": n, "confirmed over MCP": confirmed})
    return checks


async def _confirm_all(
    found: dict[tuple[str, str], tuple[int, Criterion]], encoding: str, cap: int | None
) -> dict[tuple[str, str], Any]:
    """confirm() of every design's boundaries, designs at once (each starts its own server process, so their starts
    overlap), by (design, criterion); a failure is raised as itself, not wrapped in a group."""
    by_design: dict[str, list[tuple[int, Criterion]]] = {}
    for (design, _), boundary in found.items():
        by_design.setdefault(design, []).append(boundary)
    checks = await each_design(lambda design: confirm(design, by_design[design], encoding, cap), by_design)
    return {(design, c["criterion"]): c for design, done in checks.items() for c in done}


async def breaking_points(
    rows: list[dict[str, Any]],
    window: int,
    budget: int,
    encoding: str = tokens.DEFAULT_ENCODING,
    cap: int | None = None,
) -> list[dict[str, Any]]:
    """Per design of the sweep `rows` (scale.measure): the first N over the window and over the budget, each found
    by a search inside the bracket the sweep measured and confirmed over MCP (None when no size of the sweep breaks
    it); raises ClaimFailed naming a boundary that MCP does not confirm."""
    out, found = [], {}
    for design in dict.fromkeys(r["design"] for r in rows):
        row: dict[str, object] = {"design": design, "how": HOW}
        for criterion in criteria(window, budget):
            around = bracket(rows, design, criterion)
            n: int | None = None
            if around is not None:
                below, above = around
                n = above["lines"]
                if below is not None:
                    figures = (criterion.figure(below), criterion.figure(above))
                    n = await first_size(design, criterion, below["lines"], n, encoding, cap, figures)
            row[criterion.name] = n
            if n is not None:
                found[(design, criterion.name)] = (n, criterion)
        row["largest single result (tokens)"] = max(r["largestResultTokens"] for r in rows if r["design"] == design)
        out.append(row)
    confirmed = await _confirm_all(found, encoding, cap)
    for (design, _), (n, criterion) in found.items():
        check = confirmed[(design, criterion.name)]
        if not check["confirmed over MCP"]:
            detail = (
                f"{design}: the search found {criterion.name} = {n}, but over MCP {n - 1} and {n} "
                "do not straddle the limit"
            )
            raise ClaimFailed(f"MCP confirms each boundary the search finds ({criterion.name})", detail, detail)
    return out
