"""What notebook 02 shows of the calibration against a study's published conversations (the article's: its ORD-1004
runs): its fit, the spread of the plausible choices, the second design's test, and tables; said as a hypothesis,
never as a confirmation."""

from __future__ import annotations

from typing import Any

from wismo.analyses import calibration

# What the sources say reaches the model, quoted by repository, path and version (read for this report).
SOURCES = (
    "modelcontextprotocol/csharp-sdk v2.2.0, src/ModelContextProtocol.Core/AIContentExtensions.cs: "
    "CallToolResult.ToChatMessage(callId) puts the whole CallToolResult into a FunctionResultContent as a JsonElement "
    "(JsonSerializer.SerializeToElement with McpJsonUtilities.DefaultOptions: compact, default encoder)",
    "dotnet/extensions v10.8.3, src/Libraries/Microsoft.Extensions.AI.OpenAI/OpenAIResponsesChatClient.cs: a result "
    "that is not a string is written with JsonSerializer.Serialize(result, AIJsonUtilities.DefaultOptions), "
    "WriteIndented = true with JavaScriptEncoder.UnsafeRelaxedJsonEscaping (the relaxed encoder since v9.3.0, "
    "commit 11ccd68ee3; v9.0.0 to v9.2.x indented with the default encoder)",
    "dotnet/runtime, System.Text.Json JsonDocument.WriteString: a JsonElement's strings are unescaped, then "
    "escaped again by the writer's encoder, so the original \\u0022 escapes do not survive re-serialization",
    "modelcontextprotocol/csharp-sdk issue #962: one user's tool result printed full of \\u0022; it shows no "
    "request body, so it does not show that text reaching the model",
)


def _cell(rows: list[dict[str, Any]], framing: str, counting: str = "name + arguments") -> dict[str, Any]:
    return next(r for r in rows if r["framing"] == framing and r["counting"] == counting)


def _names(result: dict[str, Any]) -> tuple[str, str | None, str]:
    """The published conversations' designs and case."""
    d = result["calibration"]["designs"]
    return d["first"], d["second"], result["calibration"]["case"]


def fit_statement(result: dict[str, Any]) -> str:
    """The best-fitting framing said as what it is: a fit among plausible choices, with the spread of all of them."""
    s = result["sensitivity"]
    best, spread = s["bestFit"], s["spread"]
    adds = " / ".join(f"{a:,}" for a in best["additions"])
    derived = " / ".join(f"{d:,}" for d in s["rows"][0]["derived"])
    errors = " / ".join(f"{e:+.1f}%" for e in best["errorPercent"])
    verb = "lands" if spread["cellsWithinTolerance"] == 1 else "land"
    ranges = " and ".join(
        f"turn {i} from {low:+.1f}% to {high:+.1f}%"
        for i, (low, high) in enumerate(spread["turnErrorPercent"], start=2)
    )
    return (
        f"**Best fit (a fit, not a confirmation):** results *{best['framing']}*, function calls counted as "
        f"*{best['counting']}*: the turns add {adds} tokens against {derived} derived from published ({errors}; "
        f"tiktoken-estimated). It is the best of {spread['cells']} plausible combinations, chosen because it fits; "
        f"{spread['cellsWithinTolerance']} of them {verb} within ±{spread['tolerancePercent']:g}% on every turn, and "
        f"over all of them {ranges}. What would confirm it: a request body of the client that ran the "
        "conversation, or the provider's count of one such request (the Responses API's input-token count endpoint)."
    )


def hypothesis_statement(result: dict[str, Any]) -> str:
    """The hypothesis and the source that conflicts with it, said plainly."""
    best = result["sensitivity"]["bestFit"]
    first, _, _ = _names(result)
    relaxed = _cell(result["sensitivity"]["rows"], "indented, relaxed escaping")
    errors = " / ".join(f"{e:+.1f}%" for e in relaxed["errorPercent"])
    return (
        f"**Hypothesis:** the published {first} turns are matched by the *{best['framing']}* envelope. Where the "
        "conversation ran through the MCP C# SDK and Microsoft.Extensions.AI, as the article's did, the pinned source "
        f"would send it *indented, with relaxed escaping*, which does not match ({errors}). Which framing reached the "
        "model is not established: no released Microsoft.Extensions.AI.OpenAI we "
        "read sends a JsonElement's raw text unchanged, and versions 9.0.0 to 9.2.x (indented, default escaping) "
        "come nearest among released code paths. Sources: " + "; ".join(SOURCES) + "."
    )


def second_test_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per framing, what the second design's published total leaves for the model's outputs, against a minimal
    answer where one is published."""
    _, second, _ = _names(result)
    rows = []
    for r in result["sensitivity"]["secondTest"]["rows"]:
        row = {
            "result framing": r["framing"],
            f"left for the {second} outputs (tokens, derived from published minus tiktoken-estimated)": (
                "{:,} to {:,}".format(*r["outputRemainder"])
            ),
        }
        if "verdict" in r:
            row |= {"least the outputs take (tokens, tiktoken-estimated)": r["minimalOutputs"], "verdict": r["verdict"]}
        rows.append(row)
    return rows


def conflict_statement(result: dict[str, Any]) -> str:
    """What the second design's conversation says of the framings that fit the first one."""
    s = result["sensitivity"]
    first, second, _ = _names(result)
    sizes = s.get("answerSizes")
    if sizes is None:
        return (
            f"No answer of the {second} conversation is published, so what its total leaves for the model's outputs "
            "is shown, but no framing can be ruled out by it."
        )
    ruled = [r["framing"] for r in s["secondTest"]["rows"] if r["verdict"] == "ruled out"]
    fitting = sorted({r["framing"] for r in s["rows"] if r["maxAbsErrorPercent"] <= s["spread"]["tolerancePercent"]})
    both = [f for f in fitting if f in ruled]
    return (
        f"The published {second} answer alone is {sizes['quotedSummary']:,} tokens, and the least the {second} run's "
        f"outputs can take (its tool call, then the answer with that summary) is {sizes['minimalOutputs']:,} "
        f"(tiktoken-estimated). The {second} figures rule out "
        + (", ".join(f"*{f}*" for f in ruled) or "no framing")
        + ". "
        + (
            f"So the framing that fits the {first} conversation best is one the {second} conversation rules out: "
            "no single framing explains both published conversations, and the calibration stays an open conflict."
            if both
            else "The best-fitting framing survives this test."
        )
    )


def residual_statement(result: dict[str, Any]) -> str:
    """The request-1 residual, and what it could hold, without pretending to split it."""
    s = result["calibrationSummary"]
    first, _, _ = _names(result)
    return (
        f"The **request-1 residual** is {s['instructionsTokensSolved']:,} tokens (derived from published minus "
        f"tiktoken-estimated): what the published first request holds beyond our definitions and question under "
        f"{s['profile']}. It could hold the instructions the conversation ran with (the study's are "
        f"{s['ourInstructionsTokens']:,} tokens), tool descriptions that differ from our servers', and a response "
        f"format; its figures cannot split it. The later {first} requests rebuilt from it add nothing to the check: "
        "their errors are the turns' errors, accumulated."
    )


def sensitivity_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The sensitivity grid (every framing crossed with every way of counting calls) as a reader's table."""
    derived = " / ".join(f"{d:,}" for d in result["sensitivity"]["rows"][0]["derived"])
    turns = " / ".join(f"turn {i}" for i in range(2, len(result["sensitivity"]["rows"][0]["derived"]) + 2))
    return [
        {
            "result framing": r["framing"],
            "function calls counted": r["counting"],
            f"{turns} add (tokens, tiktoken-estimated)": " / ".join(f"{a:,}" for a in r["additions"]),
            f"against {derived} (%, derived from published)": " / ".join(f"{e:+.1f}%" for e in r["errorPercent"]),
            "later requests: cumulative turn error (%)": " / ".join(f"{e:+.1f}%" for e in r["cumulativeErrorPercent"]),
        }
        for r in result["sensitivity"]["rows"]
    ]


def calibration_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The calibration rows as a reader's table: per profile and definition method, turns and requests."""
    out = []
    for r in result["calibration"]["rows"]:
        out.append(
            {
                "client profile": r["profile"],
                "definitions counted by": r["definitions"],
                "turns add (tokens, tiktoken-estimated)": " / ".join(f"{a:,}" for a in r["turnAdditions"]),
                "against the published turns (%, derived from published)": " / ".join(
                    f"{e:+.1f}%" for e in r["additionErrorPercent"]
                ),
                "request-1 residual (tokens, derived from published minus tiktoken-estimated)": r[
                    "instructionsTokensSolved"
                ],
                "later requests rebuilt (tokens, modelled)": r["predictedRequests"][1:],
                "later requests against the published (%, cumulative turn error)": " / ".join(
                    f"{e:+.1f}%" for e in r["requestErrorPercent"][1:]
                ),
            }
        )
    return out


def second_table(result: dict[str, Any], profile: str = calibration.HEAVY) -> list[dict[str, Any]]:
    """The second conversation reconstructed under a profile, from our first request and from the published one."""
    r = calibration.row(result["calibration"], profile)
    pub = result["calibration"]["published"]
    return [
        {
            "starting from": "our rebuilt first request",
            "request 1 (tokens, tiktoken-estimated)": r["secondFirstRequest"],
            "last request (tokens, modelled)": r["secondLastRequest"],
            "output implied (tokens, derived from published minus modelled)": r["secondOutputImplied"],
        },
        {
            "starting from": f"the published first request ({pub['secondFirstRequest']['kind']})",
            "request 1 (tokens, tiktoken-estimated)": pub["secondFirstRequest"]["value"],
            "last request (tokens, modelled)": r["secondLastFromPublishedFirst"],
            "output implied (tokens, derived from published minus modelled)": r[
                "secondOutputImpliedFromPublishedFirst"
            ],
        },
    ]


def definitions_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Tool definitions of the two published designs counted both ways, and the difference set beside the
    published first-request difference."""
    first, second, _ = _names(result)
    defs = result["definitions"]
    smaller = result["calibration"]["published"]["secondSmallerBy"]
    out = []
    for method in ("cookbook", "harmony"):
        g, f = defs[first][method]["total"], defs[second][method]["total"]
        out.append(
            {
                "counted by": defs[first][method]["method"],
                f"{first} definitions (tokens, tiktoken-estimated)": g,
                f"{second} definitions (tokens, tiktoken-estimated)": f,
                "difference (tokens, tiktoken-estimated)": g - f,
                f"published first-request difference (tokens, {smaller['kind']})": smaller["value"],
            }
        )
    return out


def saving_by_profile(shares: list[dict[str, Any]], which: Any, published: Any) -> dict[str, Any]:
    """The published case's input saving of the second design under bare text (python) and under the heavy framing,
    with the median saving the provider's figures gave beside it (published)."""
    by = {r["design"]: r for r in shares}
    g, f = by[which.first], by[which.second]
    heavy = f"input, {calibration.HEAVY} framing"

    def saving(column: str) -> float:
        return round((g[column] - f[column]) / g[column] * 100, 1)

    return {
        "order": which.case,
        "first": which.first,
        "second": which.second,
        "python": saving("input, bare text"),
        calibration.HEAVY: saving(heavy),
        "publishedMedian": published.median_saving_percent,
    }
