"""The scale report (notebook 04): generated orders of 1 to 10,000 lines through every design over MCP, where each
breaks, and budgeted sessions; its JSON is scale.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wismo.accounting import tokens
from wismo.accounting.tokens import framing
from wismo.core import reference
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import report_dir
from wismo.domain.pages import DEFAULT_CAP
from wismo.mcp.servers.designs import ONE_CALL, PAGED
from wismo.reports import check
from wismo.reports.analyses import breaking, sweep
from wismo.reports.params import Param, defaults
from wismo.reports.params import checked as check_parameters
from wismo.runs.agent.loop import Budgets

OUTPUT = "scale.json"
PARAMETERS = {
    "sizes": Param([1, 10, 100, 1000, 10000], "counts"),  # item lines of the generated orders
    "encoding": Param(tokens.DEFAULT_ENCODING, "text", choices=lambda: tokens.PACKAGED_ENCODINGS),
    "context_window": Param(None, "count", optional=True),  # tokens; None: the case study's 128,000
    "budget": Param(None, "count", optional=True),  # session input-token budget; None: the case study's 75,000
    "cap": Param(None, "count", optional=True),  # scoped result cap in tokens; None: the case study's 2,000
    "budget_sizes": Param([10, 1000], "counts", empty=True),  # orders the budgeted agent sessions are run on
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the scale report"


def checked(params: Mapping[str, object] | None) -> dict[str, Any]:
    """The report's parameters checked against their declarations before any server starts (one sentence)."""
    return check_parameters(params, PARAMETERS, REPORT)


async def build(params: Mapping[str, object] | None = None, progress: object = None) -> dict[str, object]:
    """Drive every design over the generated orders, find where each breaks, run budgeted sessions, write the JSON."""
    p = checked(params)
    case_ref = reference.load("context-budget-case-study")
    window = p["context_window"] or case_ref["assumptions"]["contextWindow"]
    budget = p["budget"] or case_ref["assumptions"]["targetTokens"]
    cap = p["cap"] or DEFAULT_CAP
    # The orders' turns over MCP, read from the build's shared measurement when notebook 02 measured them first.
    measured, source = await sweep.generated_turns(p["sizes"], cap, progress, keep=True)
    rows, checks = sweep.summarise(measured, p["sizes"], p["encoding"])
    breaks = await breaking.breaking_points(rows, window, budget, p["encoding"], p["cap"])
    budgeted = await sweep.budgeted_sessions(
        p["budget_sizes"], Budgets(max_turns=100, max_tool_calls=12, max_input_tokens=budget), cap
    )
    result = {
        "labels": {
            "tokens": "tiktoken-estimated",
            "inputs": "modelled (cumulative-context model on measured turns)",
            # The requests are counted as wismo's own loop frames them (the conversation module's default profile).
            "profile": framing.PYTHON.name,
            "bytes": "measured",
        },
        "source": case_ref["source"],
        "window": window,
        "budget": budget,
        "cap": cap,
        "rows": rows,
        "reconstruction": checks,
        "breakingPoints": breaks,
        "budgetedSessions": budgeted,
        # Where the measured turns came from: a fact about this run, not a figure, so kept out of comparisons.
        "timings": {"generatedOrders": source},
    }
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def check_cap(result: dict[str, Any]) -> str:
    """The cap claim checked: no scoped result exceeds the cap, at any size."""
    largest = sweep.check_cap(result["rows"], result["cap"])
    at = "at its cap" if largest == result["cap"] else "under its cap"
    return (
        f"Checked: the scoped design's largest single result is {largest:,} tokens, {at} of {result['cap']:,}, "
        "at every size (tiktoken-estimated)."
    )


def check_reconstruction(result: dict[str, Any]) -> str:
    """The claim that paging loses nothing: the pages merge back to the focused answer at every size."""
    sweep.check_reconstruction(result["reconstruction"])
    sizes = len(result["reconstruction"])
    return f"Checked: the pages merge back to the focused answer at all {sizes} sizes (measured over MCP)."


def check_session_unbounded(result: dict[str, Any]) -> str:
    """The claim that bounding each result does not bound the session: at the largest size, paging through the
    whole order processes more input than reading it as one focused result."""
    largest = max(r["lines"] for r in result["rows"])
    total = {r["design"]: r["totalInput"] for r in result["rows"] if r["lines"] == largest}
    calls = {r["design"]: r["toolCalls"] for r in result["rows"] if r["lines"] == largest}
    if calls[PAGED] <= calls[ONE_CALL]:
        # Orders that fit one page (a run by hand on small sizes): nothing is paged, so there is nothing to claim.
        return (
            f"Not checked in this run: at {largest:,} lines, its largest size, the {PAGED} design reads the order in "
            f"one page, as the {ONE_CALL} design does; the claim is about orders of more than one page."
        )
    return check(
        total[PAGED] > total[ONE_CALL],
        f"at {largest:,} lines the paged session processes more input than the single {ONE_CALL} result",
        f"{PAGED} {total[PAGED]:,} vs {ONE_CALL} {total[ONE_CALL]:,} input tokens, modelled",
    )


def rows_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per design and order size, what the investigation took and returned, each header with its unit and kind."""
    return [
        {
            "design": r["design"],
            "order lines (count)": r["lines"],
            "tool calls (count, measured over MCP)": r["toolCalls"],
            "model turns (count, scripted investigation)": r["modelTurns"],
            "all tool results (bytes, measured)": r["resultBytes"],
            "all tool results (tokens, tiktoken-estimated)": r["resultTokens"],
            "largest single tool result (tokens, tiktoken-estimated)": r["largestResultTokens"],
            "last model request's input (tokens, modelled)": r["finalInput"],
            "session input, all model requests (tokens, modelled)": r["totalInput"],
        }
        for r in result["rows"]
    ]


def breaking_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Where each design breaks, in words: the limit a model request (which carries the whole history, not one tool
    result) crosses, the session's, and the largest single tool result beside them."""
    return [
        {
            "design": b["design"],
            f"first order size at which one model request exceeds the {result['window']:,}-token window "
            f"(lines, modelled, {result['labels']['profile']} profile)": b["first N over the window"],
            f"first order size at which the session exceeds the {result['budget']:,}-token budget "
            f"(lines, modelled, {result['labels']['profile']} profile)": b["first N over the budget"],
            "largest single tool result at any size (tokens, tiktoken-estimated)": b["largest single result (tokens)"],
            "how it was found": b["how"],
        }
        for b in result["breakingPoints"]
    ]


def breaking_sentence(result: dict[str, Any]) -> str:
    """What the breaking points mean beside the cap: a model request grows with the history, a tool result does not."""
    at = {b["design"]: b["first N over the window"] for b in result["breakingPoints"]}
    scoped = next((b for b in result["breakingPoints"] if b["design"] == PAGED), None)
    if not scoped or at.get(PAGED) is None:
        return "No scoped model request exceeds the window at the sizes measured."
    return (
        f"A model request carries the instructions, the definitions and every earlier tool result, so it can exceed "
        f"the {result['window']:,}-token window while no single tool result does: from {at['scoped']:,} lines a "
        f"scoped session's model request is over the window, although its largest tool result is "
        f"{scoped['largest single result (tokens)']:,} tokens, within its {result['cap']:,}-token cap "
        f"(modelled on tiktoken estimates, requests framed as the {result['labels']['profile']} client profile frames "
        "them)."
    )


def budgeted_table(result: dict[str, Any]) -> list[dict[str, object]]:
    """The budgeted sessions (the scripted agent loop under the orchestrator's limits), headers with unit and kind."""
    return [
        {
            "design": s["design"],
            "order lines (count)": s["lines"],
            "how the session ended": s["outcome"],
            "model turns (count, scripted (no model))": s["turns"],
            "tool calls (count, measured)": s["toolCalls"],
            "input, all model requests (tokens, tiktoken-estimated)": s["inputTokens"],
            "answered": s["answered"],
            "what the session said": s["note"] or "–",
        }
        for s in result["budgetedSessions"]
    ]
