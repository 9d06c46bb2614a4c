"""The deterministic comparison: the focused answer against the granular records, followed link by link."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .cases import Case, load_cases
from .domain import CLOCK, PAYMENT, RESERVATION, TRACKING, missing_record
from .domain.ids import MAX_ID_LENGTH
from .harness import Connection, connect
from .jsonfmt import write_stable
from .servers.protocol import PINNED_REVISION

FOCUSED_TOOL = "get_order_support_context"
DEFAULT_OUT = Path("outputs") / "deterministic-comparison.json"


class ComparisonFailed(AssertionError):
    """At least one case differs between the designs; the message names each case and its first difference."""


async def gather_granular(conn: Connection, order_id: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Follow every link from get_order and rebuild the focused shape; or return get_order's error text."""
    order_result = await conn.call("get_order", {"orderId": order_id})
    if order_result.is_error:
        return None, order_result.text
    order = json.loads(order_result.text)

    async def follow(tool: str, kind: Any, ident: Any) -> dict[str, Any]:
        result = await conn.call(tool, {kind.id_key: ident})
        # A failed linked lookup becomes the same explicit stand-in the focused tool uses.
        return missing_record(kind, ident, result.text) if result.is_error else json.loads(result.text)

    return {
        "order": order,
        "payment": await follow("get_payment", PAYMENT, order["paymentId"]),
        "reservations": [await follow("get_reservation", RESERVATION, r) for r in order["reservationIds"]],
        "tracking": [await follow("get_tracking", TRACKING, t) for t in order["trackingIds"]],
    }, None


async def gather_focused(conn: Connection, order_id: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Read the support context in one call; or return its error text."""
    result = await conn.call(FOCUSED_TOOL, {"orderId": order_id})
    return (None, result.text) if result.is_error else (json.loads(result.text), None)


def differences(granular: Any, focused: Any, path: str = "") -> list[dict[str, Any]]:
    """Every place where two JSON values differ, as {path, granular, focused}; empty when equal."""
    if isinstance(granular, dict) and isinstance(focused, dict):
        found = []
        for key in sorted(set(granular) | set(focused)):
            sub = f"{path}.{key}" if path else key
            if key not in granular or key not in focused:
                found.append({"path": sub, "granular": granular.get(key, "<absent>"), "focused": focused.get(key, "<absent>")})
            else:
                found += differences(granular[key], focused[key], sub)
        return found
    if isinstance(granular, list) and isinstance(focused, list) and len(granular) == len(focused):
        return [d for i, (g, f) in enumerate(zip(granular, focused)) for d in differences(g, f, f"{path}[{i}]")]
    # Type matters: 1 and 1.0 or True and 1 are different evidence on the wire.
    if type(granular) is not type(focused) or granular != focused:
        return [{"path": path or "<root>", "granular": granular, "focused": focused}]
    return []


def _shown(arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Arguments as recorded in the output: strings longer than any identifier are shortened and counted."""
    return {k: (f"{v[:12]}… ({len(v)} characters)" if isinstance(v, str) and len(v) > MAX_ID_LENGTH else v)
            for k, v in (arguments or {}).items()}


def _design_side(conn: Connection, first_call: int, error: str | None) -> dict[str, Any]:
    """Calls, bytes and error of one design for one case (the interactions since `first_call`)."""
    calls = conn.tool_calls()[first_call:]
    return {
        "calls": len(calls),
        "bytes": sum(c.text_bytes for c in calls),
        "error": error,
        "toolCalls": [
            {"tool": c.tool, "arguments": _shown(c.arguments), "bytes": c.text_bytes, "isError": c.is_error} for c in calls
        ],
    }


async def compare_case(granular: Connection, focused: Connection, case: Case) -> tuple[dict[str, Any], dict[str, float]]:
    """Drive one case through both designs; return its verdict and, apart, its timings."""
    g_first, f_first = len(granular.tool_calls()), len(focused.tool_calls())
    g_value, g_error = await gather_granular(granular, case.order_id)
    f_value, f_error = await gather_focused(focused, case.order_id)
    if g_error is not None or f_error is not None:
        diffs = [] if g_error == f_error else [{"path": "<error>", "granular": g_error, "focused": f_error}]
        outcome = "both rejected" if not diffs else "rejected differently"
    else:
        diffs = differences(g_value, f_value)
        outcome = "evidence"
    row = {
        "label": case.label,
        "input": case.shown,
        "unfriendly": case.unfriendly,
        "outcome": outcome,
        "equal": not diffs,
        "differences": diffs,
        "granular": _design_side(granular, g_first, g_error),
        "focused": _design_side(focused, f_first, f_error),
    }
    timing = {
        "granular": sum(c.elapsed_ms for c in granular.tool_calls()[g_first:]),
        "focused": sum(c.elapsed_ms for c in focused.tool_calls()[f_first:]),
    }
    return row, timing


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over the cases: how many are equal, bytes and calls per design."""
    orders = [r for r in rows if not r["unfriendly"]]
    return {
        "cases": len(rows),
        "casesEqual": sum(r["equal"] for r in rows),
        "allEqual": all(r["equal"] for r in rows),
        "orders": len(orders),
        "ordersEqual": sum(r["equal"] for r in orders),
        "unfriendly": len(rows) - len(orders),
        "unfriendlyAgreeing": sum(r["equal"] for r in rows if r["unfriendly"]),
        "bytes": {d: sum(r[d]["bytes"] for r in orders) for d in ("granular", "focused")},
        "calls": {d: sum(r[d]["calls"] for r in orders) for d in ("granular", "focused")},
    }


async def run(
    orders: list[str] | None = None,
    transport: str = "stdio",
    unfriendly: bool = True,
    env: dict[str, dict[str, str]] | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Start both servers, compare every case, stop them; `env` adds variables per design (for planted faults).

    `progress`, if given, is told of each case compared (anything with `update(n)`, such as a progress bar).
    """
    env = env or {}
    cases = load_cases(orders, unfriendly)
    async with connect("granular", transport, env.get("granular")) as granular:
        async with connect("focused", transport, env.get("focused")) as focused:
            tools = {"granular": await granular.list_tools(), "focused": await focused.list_tools()}
            rows, timings = [], {}
            for case in cases:
                row, timing = await compare_case(granular, focused, case)
                rows.append(row)
                timings[case.label] = timing
                if progress is not None:
                    progress.update(1)
            start = {"granular": granular.start_ms, "focused": focused.start_ms}
    return {
        "protocolRevision": PINNED_REVISION,
        "transport": transport,
        "clock": CLOCK,
        "tools": tools,
        "cases": rows,
        "summary": summarise(rows),
        # Wall-clock figures live here and only here, so everything else is byte-identical between runs.
        "timings": {"unit": "ms, measured", "serverStart": start, "cases": timings},
    }


def require_equal(result: dict[str, Any]) -> None:
    """Raise ComparisonFailed naming every case whose designs disagree, with its first difference."""
    bad = [r for r in result["cases"] if not r["equal"]]
    if bad:
        lines = [f"{r['label']} ({r['input']}): {r['differences'][0]['path']}: granular {r['differences'][0]['granular']!r} != focused {r['differences'][0]['focused']!r}" for r in bad]
        raise ComparisonFailed(f"{len(bad)} case(s) differ between the designs: " + "; ".join(lines))


def write(result: dict[str, Any], path: str | Path = DEFAULT_OUT) -> Path:
    """Write the comparison as stable JSON (sorted keys, timings under their own key)."""
    return write_stable(path, result)


def without_timings(result: dict[str, Any]) -> dict[str, Any]:
    """The result minus its timing fields: the part that must be byte-identical between runs."""
    return {k: v for k, v in result.items() if k != "timings"}


class TransportsDisagree(AssertionError):
    """The comparison gave different verdicts or bytes over different transports; the message names the cases."""


def parity(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per case: the verdict and bytes over every transport, and whether they are all the same."""
    transports = list(results)
    first = results[transports[0]]
    rows = []
    for i, row in enumerate(first["cases"]):
        others = [results[t]["cases"][i] for t in transports]
        keys = [(r["equal"], r["outcome"], r["granular"]["bytes"], r["focused"]["bytes"], r["granular"]["calls"],
                 r["focused"]["calls"], r["granular"]["error"], r["focused"]["error"]) for r in others]
        entry = {"case": row["label"], "input": row["input"], "same": all(k == keys[0] for k in keys)}
        for t, r in zip(transports, others):
            entry[f"{t}: verdict"] = "equal" if r["equal"] else "DIFFERENT"
            entry[f"{t}: bytes g/f"] = f"{r['granular']['bytes']}/{r['focused']['bytes']}"
        rows.append(entry)
    return rows


def require_parity(results: dict[str, dict[str, Any]]) -> None:
    """Raise TransportsDisagree naming every case whose verdict, bytes, calls or errors differ by transport."""
    bad = [r for r in parity(results) if not r["same"]]
    if bad:
        raise TransportsDisagree(f"{len(bad)} case(s) differ between {', '.join(results)}: " + "; ".join(f"{r['case']} ({r['input']})" for r in bad))
