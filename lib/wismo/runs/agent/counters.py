"""The counters of one conversation's trace, each derivable from its requests and calls (wallMs excepted)."""

from __future__ import annotations

from collections.abc import Sequence

from wismo.runs.records import RequestRecord, ToolCallRecord, Totals


def totals(
    requests: Sequence[RequestRecord], tool_calls: Sequence[ToolCallRecord], wall_ms: float | None = None
) -> Totals:
    """Counters of one trace, each derivable from its requests and calls (wallMs excepted: it is measured)."""
    out: Totals = {
        "turns": len(requests),
        "toolCalls": len(tool_calls),
        "inputTokens": sum(r["usage"]["inputTokens"] for r in requests),
        "outputTokens": sum(r["usage"]["outputTokens"] for r in requests),
        "cachedInputTokens": sum(r["usage"]["cachedInputTokens"] for r in requests),
        "modelElapsedMs": round(sum(r["elapsedMs"] for r in requests), 3),
        "toolElapsedMs": round(sum(c["elapsedMs"] for c in tool_calls), 3),
        "resultBytes": sum(c["resultBytes"] for c in tool_calls),
    }
    if any("modelledElapsedMs" in r for r in requests):
        out["modelledElapsedMs"] = round(sum(r.get("modelledElapsedMs", 0) for r in requests), 3)
    if wall_ms is not None:
        out["wallMs"] = round(wall_ms, 3)
    return out
