"""Where each design breaks, found by bisection on order size rather than read off a sweep's grid.

For each design: the first order size (item lines) at which some model call carries more than the context window,
and the first at which the whole session processes more than the budget, if the model reads everything. The
search runs the servers' own tool code in this process (the same functions a server runs, over a dataset holding
just that generated order), because a server serves only the sizes it was started with; the boundary it finds,
the size just below and the size itself, is then confirmed over MCP against real server processes. A generated
order of N+1 lines is the order of N lines plus one (domain/generate.py), so every measure grows with N and the
size the bisection finds is the first.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp_types import TextContent

from wismo import tokens
from wismo.analyses.sweep import account, investigated, server_env
from wismo.client.connection import ToolResult, connect
from wismo.core.environ import temporary_env
from wismo.core.errors import ClaimFailed
from wismo.domain import load
from wismo.servers import designs

HOW = (
    "bisection on order size, with the servers' own tool code in process; the boundary (N-1 below, N over) "
    "confirmed over MCP"
)


def _cap(cap: int | None) -> AbstractContextManager[None]:
    """The scoped cap as a server would read it from its environment, for the duration of an in-process search."""
    return temporary_env(WISMO_SCOPED_CAP=None if cap is None else str(cap))


class InProcess:
    """A design's tools answering in this process exactly as its server answers over MCP (servers.app.call)."""

    def __init__(self, design: str, lines: int) -> None:
        from wismo.servers.app import call

        self._call = call
        self.specs = {s.name: s for s in designs.get(design).tools()}
        self.dataset = load(large=[lines])

    def list_tools(self) -> list[dict[str, Any]]:
        """The tools/list entries, as the wire gives them."""
        return [s.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True) for s in self.specs.values()]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """One tool call: its single text block and error flag."""
        result = self._call(self.specs[name], self.dataset, arguments)
        block = result.content[0]
        if not isinstance(block, TextContent):  # wismo's servers answer with one text block, as over MCP
            raise TypeError(f"{name} answered with a {block.type} block, not text")
        return ToolResult(block.text, bool(result.is_error))


@dataclass(frozen=True)
class Criterion:
    """What breaking means: a name and a test on an accounting row (scale.account) against a limit."""

    name: str
    limit: int
    test: Callable[[dict[str, Any], int], bool]

    def broken(self, row: dict[str, Any]) -> bool:
        """Whether the row breaks this criterion."""
        return self.test(row, self.limit)


def criteria(window: int, budget: int) -> tuple[Criterion, Criterion]:
    """Over the window (some call's input) and over the budget (the session's total input)."""
    return (
        Criterion("first N over the window", window, lambda r, w: max(r["inputs"]) > w),
        Criterion("first N over the budget", budget, lambda r, b: r["totalInput"] > b),
    )


async def _row_in_process(design: str, n: int, encoding: str, cap: int | None) -> dict[str, Any]:
    with _cap(cap):
        conn = InProcess(design, n)
        turns = await investigated(conn, design, n)  # duck-typed: a connection's call()
    return account(design, n, conn.list_tools(), turns, encoding)


async def first_size(design: str, criterion: Criterion, low: int, top: int, encoding: str, cap: int | None) -> int:
    """The smallest N in (low, top] whose session breaks the criterion, by bisection, given that `low` does not
    break it and `top` does (the bracket the measured sweep gives)."""
    while top - low > 1:
        middle = (low + top) // 2
        if criterion.broken(await _row_in_process(design, middle, encoding, cap)):
            top = middle
        else:
            low = middle
    return top


def bracket(rows: list[dict[str, Any]], design: str, criterion: Criterion) -> tuple[int, int] | None:
    """From the sweep measured over MCP: the largest size that does not break and the first size that does."""
    mine = sorted((r for r in rows if r["design"] == design), key=lambda r: r["lines"])
    for below, above in zip([None, *mine], mine):
        if criterion.broken(above):
            return (below["lines"] if below else 0), above["lines"]
    return None


async def confirm(design: str, n: int, criterion: Criterion, encoding: str, cap: int | None) -> dict[str, Any]:
    """The boundary over MCP: a server serving orders of N-1 and N lines; N must break the criterion, N-1 not."""
    sizes = [n - 1, n] if n > 1 else [n]
    async with connect(design, env=server_env(sizes, cap), timeout_s=120) as conn:
        tools = await conn.list_tools()
        rows = [account(design, s, tools, await investigated(conn, design, s), encoding) for s in sizes]
    broken = [criterion.broken(r) for r in rows]
    return {
        "design": design,
        "criterion": criterion.name,
        "N": n,
        "confirmed over MCP": broken[-1] and not any(broken[:-1]),
    }


async def _confirm_all(found: dict[tuple[str, str], tuple[int, Criterion]], encoding: str, cap: int | None) -> dict:
    """confirm() of every boundary at once (each starts its own server process, so their starts overlap); a failure
    is raised as itself, not wrapped in a group."""
    results: dict[tuple[str, str], dict[str, Any]] = {}
    failure: BaseException | None = None

    async def one(k: tuple[str, str], n: int, criterion: Criterion) -> None:
        results[k] = await confirm(k[0], n, criterion, encoding, cap)

    try:
        async with anyio.create_task_group() as group:
            for k, (n, criterion) in found.items():
                group.start_soon(one, k, n, criterion)
    except BaseExceptionGroup as exc:
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        failure = exc
    if failure is not None:
        raise failure
    return results


async def breaking_points(
    rows: list[dict[str, Any]],
    window: int,
    budget: int,
    encoding: str = tokens.DEFAULT_ENCODING,
    cap: int | None = None,
) -> list[dict[str, Any]]:
    """Per design of the sweep `rows` (scale.measure): the first N over the window and over the budget, each found
    by bisection inside the bracket the sweep measured and confirmed over MCP (None when no size of the sweep breaks
    it); raises ClaimFailed naming a boundary that MCP does not confirm."""
    out, found = [], {}
    for design in dict.fromkeys(r["design"] for r in rows):
        row: dict[str, Any] = {"design": design, "how": HOW}
        for criterion in criteria(window, budget):
            bounds = bracket(rows, design, criterion)
            n = (
                None
                if bounds is None
                else (bounds[1] if bounds[0] == 0 else await first_size(design, criterion, *bounds, encoding, cap))
            )
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
                f"{design}: bisection found {criterion.name} = {n}, but over MCP {n - 1} and {n} "
                "do not straddle the limit"
            )
            raise ClaimFailed(f"MCP confirms each boundary bisection finds ({criterion.name})", detail, detail)
    return out
