"""Where each design breaks as orders grow: real results over MCP for generated orders of N lines, their
tokens, and the cumulative-context model applied to the turns the scripted investigation takes."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from wismo import cost, tokens
from wismo.client import pool
from wismo.client.investigation import investigate
from wismo.core.errors import ClaimFailed, first_leaf
from wismo.domain.generate import order_id
from wismo.servers import designs
from wismo.tokens import conversation


def scale_designs() -> tuple[str, ...]:
    """The designs the scale report drives: every registered design marked for it."""
    return designs.names(scale=True)


def account(
    design: str, n: int, tools: list[dict[str, Any]], turns: list[list[dict[str, Any]]], encoding_name: str
) -> dict[str, Any]:
    """Bytes and tokens of the results, and the session the cost model predicts for these turns."""
    oid = order_id(n)
    base = conversation.first_request(oid, tools, encoding_name).total
    result_tokens, result_bytes = [], 0
    for turn in turns:
        # The cap applies to the result text itself, without the message framing the request adds.
        result_tokens += [tokens.count_text(c["output"], encoding_name) for c in turn]
        result_bytes += sum(len(c["output"].encode("utf-8")) for c in turn)
    session = cost.session(base, conversation.turn_additions(turns, encoding_name))
    return {
        "design": design,
        "lines": n,
        "orderId": oid,
        "modelTurns": len(turns) + 1,
        "toolCalls": sum(len(t) for t in turns),
        "resultBytes": result_bytes,
        "resultTokens": sum(result_tokens),
        "largestResultTokens": max(result_tokens),
        "base": base,
        "inputs": list(session.inputs),
        "totalInput": session.total,
        "finalInput": session.final,
    }


def server_env(sizes: list[int], cap: int | None = None) -> dict[str, str]:
    """The environment that makes a server serve the generated orders (and the scoped cap)."""
    env = {"WISMO_LARGE_ORDERS": ",".join(str(n) for n in sizes)}
    if cap is not None:
        env["WISMO_SCOPED_CAP"] = str(cap)
    return env


async def each_design(work: Callable[[str], Awaitable[Any]]) -> dict[str, Any]:
    """work(design) for every scale design at once (each drives its own server); the results by design. A failure
    is raised as itself, not wrapped in a group, and stops the others."""
    results: dict[str, Any] = {}
    failure: BaseException | None = None

    async def one(design: str) -> None:
        results[design] = await work(design)

    try:
        async with anyio.create_task_group() as group:
            for design in scale_designs():
                group.start_soon(one, design)
    except BaseExceptionGroup as exc:
        failure = first_leaf(exc)
    if failure is not None:
        # Raised outside the except block: no context chain back into the task group.
        raise failure
    return results


async def measure(
    sizes: list[int], encoding_name: str = tokens.DEFAULT_ENCODING, cap: int | None = None, progress: Any = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Drive every design over MCP for each generated order size; return the accounting rows, and per N
    whether merging the scoped pages gives back the focused answer (in the concise view the pages use).
    The servers stay running on this event loop for budgeted_sessions() (see server_pool)."""
    from wismo.domain.pages import concise_view, merge

    env = server_env(sizes, cap)

    async def drive(design: str) -> list[tuple[dict[str, Any], list[str]]]:
        found = []
        # Kept running afterwards: the budgeted sessions that follow in the report use the same servers.
        async with pool.server(design, sizes, cap, env) as conn:
            tools = await conn.list_tools()
            for n in sizes:
                turns = await investigate(conn, design, order_id(n))
                found.append((account(design, n, tools, turns, encoding_name), [c["output"] for t in turns for c in t]))
                if progress is not None:
                    progress.update(1)
        return found

    # The designs' servers are separate processes: driven at once, the slowest design sets the time.
    by_design = await each_design(drive)
    rows = [row for design in scale_designs() for row, _ in by_design[design]]
    texts = {(design, n): outputs for design in scale_designs() for n, (_, outputs) in zip(sizes, by_design[design])}
    checks = []
    paged = [d for d in scale_designs() if designs.get(d).investigation.cursor]
    if "focused" in scale_designs():
        for design in paged:
            for n in sizes:
                focused = json.loads(texts[("focused", n)][0])
                merged = merge([json.loads(t) for t in texts[(design, n)]])
                checks.append(
                    {
                        "design": design,
                        "lines": n,
                        "pages": len(texts[(design, n)]),
                        "pages merge to the focused answer": merged == concise_view(focused),
                    }
                )
    return rows, checks


async def budgeted_sessions(sizes: list[int], budgets: Any, cap: int | None = None) -> list[dict[str, Any]]:
    """The scripted agent loop on every design under the case study's orchestrator rules: what each session
    read before its budget, and how it ended (tokens tiktoken-estimated). Uses the servers measure() left running
    when they serve these orders, and stops them."""
    from wismo.agent.loop import run_case
    from wismo.agent.scripted import ScriptedBackend

    backend = ScriptedBackend()

    async def drive(design: str) -> list[dict[str, Any]]:
        rows = []
        async with pool.server(design, sizes, cap, server_env(sizes, cap)) as conn:
            tools = await conn.list_tools()
            for n in sizes:
                trace = await run_case(backend, conn, tools, order_id(n), budgets, cache_repeats=True)
                rows.append(
                    {
                        "design": design,
                        "lines": n,
                        "outcome": trace["outcome"],
                        "turns": trace["totals"]["turns"],
                        "toolCalls": trace["totals"]["toolCalls"],
                        "inputTokens": trace["totals"]["inputTokens"],
                        "answered": trace["answer"] is not None,
                        "note": trace["answerText"] if trace["outcome"] != "answered" else "",
                    }
                )
        return rows

    try:
        by_design = await each_design(drive)
    finally:
        # The report's last step on these servers.
        await pool.stop_all()
    return [row for design in scale_designs() for row in by_design[design]]


def check_cap(rows: list[dict[str, Any]], cap: int) -> int:
    """The scoped design's largest single result; raises ClaimFailed if any result is over the cap."""
    largest = max(r["largestResultTokens"] for r in rows if r["design"] == "scoped")
    if largest > cap:
        detail = f"a scoped result carried {largest} tokens, over the cap of {cap}"
        raise ClaimFailed(f"no scoped result exceeds the cap of {cap} tokens", detail, detail)
    return largest


def check_reconstruction(checks: list[dict[str, Any]]) -> None:
    """Raise ClaimFailed naming every size whose scoped pages did not merge back to the focused answer."""
    bad = [c["lines"] for c in checks if not c["pages merge to the focused answer"]]
    if bad:
        detail = f"scoped pages did not reconstruct the focused answer for orders of {bad} lines"
        raise ClaimFailed("the scoped pages merge back to the focused answer at every size", detail, detail)
