"""Where each design breaks as orders grow: real results over MCP for generated orders of N lines, their
tokens, and the cumulative-context model applied to the turns the scripted investigation takes."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

import anyio

from wismo.accounting import cost, tokens
from wismo.accounting.tokens import conversation
from wismo.core.errors import ClaimFailed, first_leaf
from wismo.core.walk import Call
from wismo.domain.generate import case_fields, order_id
from wismo.mcp.client import pool
from wismo.mcp.client.connection import connect
from wismo.mcp.client.investigation import investigate
from wismo.mcp.servers import designs
from wismo.reports.analyses import measurements

if TYPE_CHECKING:  # a type only: the agent loop is imported where sessions are run
    from wismo.runs.agent.loop import Budgets


class MeasurementSource(TypedDict):
    """Where the generated orders' turns came from (generated_turns): the build's shared measurement, or here."""

    sharedBuildMeasurement: bool
    ordersMeasuredHere: int


def served_prompt(lines: int) -> conversation.Prompt:
    """What a conversation about the generated order of `lines` lines opens with: wismo's instructions and the
    order-support question (the generated orders are wismo's own cases, asked as the article's are)."""
    from wismo.domain import prompts

    return conversation.Prompt(prompts.INSTRUCTIONS, prompts.question(order_id(lines)))


async def investigated(conn: Any, design: str, lines: int) -> list[list[Call]]:
    """The tool turns of a design wismo serves investigating the generated order of `lines` lines (`conn`: a
    connection, or anything with its call())."""
    return await investigate(conn, designs.get(design).investigation, case_fields(lines))


def scale_designs() -> tuple[str, ...]:
    """The designs the scale report drives: every registered design marked for it."""
    return designs.names(scale=True)


def account(
    design: str, n: int, tools: list[dict[str, object]], turns: list[list[Call]], encoding_name: str
) -> dict[str, Any]:
    """Bytes and tokens of the results, and the session the cost model predicts for these turns."""
    base = conversation.first_request(served_prompt(n), tools, encoding_name).total
    result_tokens, result_bytes = [], 0
    for turn in turns:
        # The cap applies to the result text itself, without the message framing the request adds.
        result_tokens += [tokens.count_text(c["output"], encoding_name) for c in turn]
        result_bytes += sum(len(c["output"].encode("utf-8")) for c in turn)
    session = cost.session(base, conversation.turn_additions(turns, encoding_name))
    return {
        "design": design,
        "lines": n,
        "orderId": order_id(n),
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


async def each_design(work: Callable[[str], Awaitable[object]], chosen: Iterable[str] | None = None) -> dict[str, Any]:
    """work(design) for every chosen design (default: every scale design) at once, each driving its own server; the
    results by design. A failure is raised as itself, not wrapped in a group, and stops the others."""
    results: dict[str, Any] = {}
    failure: BaseException | None = None

    async def one(design: str) -> None:
        results[design] = await work(design)

    try:
        async with anyio.create_task_group() as group:
            for design in scale_designs() if chosen is None else chosen:
                group.start_soon(one, design)
    except BaseExceptionGroup as exc:
        failure = first_leaf(exc)
    if failure is not None:
        # Raised outside the except block: no context chain back into the task group.
        raise failure
    return results


Turns = dict[str, dict[int, measurements.Measured]]  # design -> order size -> its tools/list and tool turns


async def _drive(
    plan: dict[str, list[int]],
    cap: int | None,
    keep: bool,
    done: Callable[[str, int, measurements.Measured], None],
    progress: Any = None,
) -> Turns:
    """Every design's investigation of the orders the plan gives it, designs at once, each on a server serving just
    those orders; done(design, size, measured) after each order. `keep` leaves the servers in the pool."""

    async def drive(design: str) -> dict[int, measurements.Measured]:
        sizes = plan.get(design) or []
        if not sizes:
            return {}
        env = server_env(sizes, cap)
        opened = pool.server(design, sizes, cap, env) if keep else connect(design, env=env, timeout_s=120)
        found = {}
        async with opened as conn:
            tools = await conn.list_tools()
            for n in sizes:
                found[n] = measurements.Measured(tools, await investigated(conn, design, n))
                done(design, n, found[n])
                if progress is not None:
                    progress.update(1)
        return found

    # The designs' servers are separate processes: driven at once, the slowest design sets the time.
    return await each_design(drive)


Key = tuple[str, int]  # (design, order size)


def _claim(
    where: Path, names: dict[Key, str]
) -> tuple[dict[Key, measurements.Measured], dict[Key, measurements.Lock], list[Key]]:
    """Per entry: read it if stored, else lock it to measure it here, else (locked by another notebook) note it to
    wait for. Returns what was read, the locks taken and what to wait for."""
    found, held, theirs = {}, {}, []
    for k, name in names.items():
        entry = measurements.read(where, name)
        if entry is None:
            lock = measurements.Lock(where, name)
            if not lock.take(wait=False):
                lock.release()
                theirs.append(k)
                continue
            # Read again once locked: another notebook may have written it between the look and the lock.
            entry = measurements.read(where, name)
            if entry is None:
                held[k] = lock
                continue
            lock.release()
        found[k] = entry
    return found, held, theirs


async def generated_turns(
    sizes: list[int], cap: int | None = None, progress: Any = None, keep: bool = False
) -> tuple[Turns, MeasurementSource]:
    """Every scale design's tools/list and tool turns for each generated order size, measured over MCP, and where
    they came from. Inside a build (WISMO_MEASUREMENTS) an entry another notebook measured is read, one being
    measured is waited for, and every entry measured here is stored; alone, everything is measured here. `keep`
    leaves this notebook's servers running in the pool (for budgeted_sessions)."""
    sizes = list(dict.fromkeys(sizes))
    where = measurements.folder()
    if where is None:
        plan = dict.fromkeys(scale_designs(), sizes)
        measured = await _drive(plan, cap, keep, lambda *_: None, progress)
        return measured, {"sharedBuildMeasurement": False, "ordersMeasuredHere": len(sizes) * len(plan)}
    digest = measurements.source_digest()
    facts = {(d, n): measurements.facts(d, n, cap, digest) for d in scale_designs() for n in sizes}
    names = {k: measurements.key(f) for k, f in facts.items()}
    found, held, theirs = _claim(where, names)

    def store(design: str, n: int, measured: measurements.Measured) -> None:
        measurements.write(where, names[(design, n)], facts[(design, n)], measured)
        held.pop((design, n)).release()  # a notebook waiting for this entry may go on now

    try:
        if progress is not None and found:
            progress.update(len(found))
        # Ours first, with no lock of another's awaited meanwhile: two notebooks never wait on each other.
        plan = {d: [n for n in sizes if (d, n) in held] for d in scale_designs()}
        here = sum(map(len, plan.values()))
        mine = await _drive(plan, cap, keep, store, progress)
        found |= {(d, n): m for d, by in mine.items() for n, m in by.items()}
        for k in theirs:
            held[k] = lock = measurements.Lock(where, names[k])
            await anyio.to_thread.run_sync(lock.take, True)
            entry = measurements.read(where, names[k])
            if entry is None:  # its measurer failed before storing it: measured here after all
                entry = (await _drive({k[0]: [k[1]]}, cap, False, store, progress))[k[0]][k[1]]
                here += 1
            else:
                held.pop(k).release()
                if progress is not None:
                    progress.update(1)
            found[k] = entry
    finally:
        for lock in held.values():
            lock.release()
    measured = {d: {n: found[(d, n)] for n in sizes} for d in scale_designs()}
    return measured, {"sharedBuildMeasurement": True, "ordersMeasuredHere": here}


def summarise(
    measured: Turns, sizes: list[int], encoding_name: str = tokens.DEFAULT_ENCODING
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The accounting rows of measured turns, and per N whether merging the scoped pages gives back the focused
    answer (in the concise view the pages use)."""
    from wismo.domain.pages import concise_view, merge

    rows = [
        account(design, n, measured[design][n].tools, measured[design][n].turns, encoding_name)
        for design in scale_designs()
        for n in sizes
    ]
    texts = {
        (design, n): [c["output"] for t in measured[design][n].turns for c in t]
        for design in scale_designs()
        for n in sizes
    }
    checks = []
    paged = [d for d in scale_designs() if designs.get(d).investigation.cursor]
    if designs.ONE_CALL in scale_designs():
        for design in paged:
            for n in sizes:
                focused = json.loads(texts[(designs.ONE_CALL, n)][0])
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


async def measure(
    sizes: list[int], encoding_name: str = tokens.DEFAULT_ENCODING, cap: int | None = None, progress: object = None
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Drive every design over MCP for each generated order size; return the accounting rows, and per N
    whether merging the scoped pages gives back the focused answer (in the concise view the pages use).
    The servers that measured stay running on this event loop for budgeted_sessions() (see client/pool.py)."""
    measured, _ = await generated_turns(sizes, cap, progress, keep=True)
    return summarise(measured, sizes, encoding_name)


async def budgeted_sessions(sizes: list[int], budgets: Budgets, cap: int | None = None) -> list[dict[str, object]]:
    """The scripted agent loop on every design under the case study's orchestrator rules: what each session
    read before its budget, and how it ended (tokens tiktoken-estimated). Uses the servers measure() left running
    when they serve these orders, and stops them."""
    from wismo.runs.agent.loop import run_case
    from wismo.runs.agent.scripted import ScriptedBackend

    backend = ScriptedBackend()

    async def drive(design: str) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = []
        async with pool.server(design, sizes, cap, server_env(sizes, cap)) as conn:
            tools = await conn.list_tools()
            for n in sizes:
                how = designs.get(design).investigation
                trace = await run_case(
                    backend.following(how, case_fields(n)),
                    conn,
                    tools,
                    order_id(n),
                    served_prompt(n),
                    budgets,
                    cache_repeats=True,
                )
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
    largest = max(r["largestResultTokens"] for r in rows if r["design"] == designs.PAGED)
    if largest > cap:
        detail = f"a scoped result carried {largest} tokens, over the cap of {cap}"
        raise ClaimFailed(f"no scoped result exceeds the cap of {cap} tokens", detail, detail)
    return cast("int", largest)


def check_reconstruction(checks: list[dict[str, object]]) -> None:
    """Raise ClaimFailed naming every size whose scoped pages did not merge back to the focused answer."""
    bad = [c["lines"] for c in checks if not c["pages merge to the focused answer"]]
    if bad:
        detail = f"scoped pages did not reconstruct the focused answer for orders of {bad} lines"
        raise ClaimFailed("the scoped pages merge back to the focused answer at every size", detail, detail)
