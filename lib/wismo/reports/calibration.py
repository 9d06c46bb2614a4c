"""What notebook 02 shows of the calibration against the article's ORD-1004 conversation: its fit, the spread of the
plausible choices, the focused test, and tables; said as a hypothesis, never as a confirmation."""

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


def fit_statement(result: dict[str, Any]) -> str:
    """The best-fitting framing said as what it is: a fit among plausible choices, with the spread of all of them."""
    s = result["sensitivity"]
    best, spread = s["bestFit"], s["spread"]
    adds = " / ".join(f"{a:,}" for a in best["additions"])
    derived = " / ".join(f"{d:,}" for d in s["rows"][0]["derived"])
    errors = " / ".join(f"{e:+.1f}%" for e in best["errorPercent"])
    t2, t3 = spread["turn2ErrorPercent"], spread["turn3ErrorPercent"]
    verb = "lands" if spread["cellsWithinTolerance"] == 1 else "land"
    return (
        f"**Best fit (a fit, not a confirmation):** results *{best['framing']}*, function calls counted as "
        f"*{best['counting']}*: the two turns add {adds} tokens against {derived} derived from published ({errors}; "
        f"tiktoken-estimated). It is the best of {spread['cells']} plausible combinations, chosen because it fits; "
        f"{spread['cellsWithinTolerance']} of them {verb} within ±{spread['tolerancePercent']:g}% on both turns, and "
        f"over all of them turn 2 ranges from {t2[0]:+.1f}% to {t2[1]:+.1f}% and turn 3 from {t3[0]:+.1f}% to "
        f"{t3[1]:+.1f}%. What would confirm it: a request body of the article's runner, or the provider's count of "
        "one such request (the Responses API's input-token count endpoint)."
    )


def hypothesis_statement(result: dict[str, Any]) -> str:
    """The hypothesis and the source that conflicts with it, said plainly."""
    best = result["sensitivity"]["bestFit"]
    relaxed = _cell(result["sensitivity"]["rows"], "indented, relaxed escaping")
    errors = " / ".join(f"{e:+.1f}%" for e in relaxed["errorPercent"])
    return (
        f"**Hypothesis:** the published granular turns are matched by the *{best['framing']}* envelope. The pinned "
        "Microsoft.Extensions.AI source would send it *indented, with relaxed escaping*, which does not match "
        f"({errors}). Which one reached the model is not established: no released Microsoft.Extensions.AI.OpenAI we "
        "read sends a JsonElement's raw text unchanged, and versions 9.0.0 to 9.2.x (indented, default escaping) "
        "come nearest among released code paths. Sources: " + "; ".join(SOURCES) + "."
    )


def focused_test_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per framing, what the published focused total leaves for the model's outputs, against a minimal answer."""
    return [
        {
            "result framing": r["framing"],
            "left for the two outputs (tokens, derived from published minus tiktoken-estimated)": "{:,} to {:,}".format(
                *r["outputRemainder"]
            ),
            "least the outputs take (tokens, tiktoken-estimated)": r["minimalOutputs"],
            "verdict": r["verdict"],
        }
        for r in result["sensitivity"]["focusedTest"]["rows"]
    ]


def conflict_statement(result: dict[str, Any]) -> str:
    """What the focused conversation says of the framings that fit the granular one."""
    s = result["sensitivity"]
    sizes = s["answerSizes"]
    ruled = [r["framing"] for r in s["focusedTest"]["rows"] if r["verdict"] == "ruled out"]
    fitting = sorted({r["framing"] for r in s["rows"] if r["maxAbsErrorPercent"] <= s["spread"]["tolerancePercent"]})
    both = [f for f in fitting if f in ruled]
    return (
        f"The article's quoted summary alone is {sizes['quotedSummary']:,} tokens, and the least the focused run's "
        f"two outputs can take (its tool call, then the five expected fields with that summary) is "
        f"{sizes['minimalOutputs']:,} (tiktoken-estimated). The focused figures rule out "
        + (", ".join(f"*{f}*" for f in ruled) or "no framing")
        + ". "
        + (
            "So the framing that fits the granular conversation best is the one the focused conversation rules out: "
            "no single framing explains both published conversations, and the calibration stays an open conflict."
            if both
            else "The best-fitting framing survives this test."
        )
    )


def residual_statement(result: dict[str, Any]) -> str:
    """The request-1 residual, and what it could hold, without pretending to split it."""
    s = result["calibrationSummary"]
    return (
        f"The **request-1 residual** is {s['instructionsTokensSolved']:,} tokens (derived from published minus "
        f"tiktoken-estimated): what the article's first request holds beyond our definitions and question under "
        f"{s['profile']}. It could hold the article's instructions (ours are {s['ourInstructionsTokens']:,} tokens), "
        "the three granular descriptions it does not publish, and a response-format schema; its figures cannot "
        "split it. Requests 2 and 3 rebuilt from it add nothing to the check: their errors are the turns' errors, "
        "accumulated."
    )


def sensitivity_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The sensitivity grid (every framing crossed with every way of counting calls) as a reader's table."""
    derived = " / ".join(f"{d:,}" for d in result["sensitivity"]["rows"][0]["derived"])
    return [
        {
            "result framing": r["framing"],
            "function calls counted": r["counting"],
            "turn 2 / turn 3 add (tokens, tiktoken-estimated)": " / ".join(f"{a:,}" for a in r["additions"]),
            f"against {derived} (%, derived from published)": " / ".join(f"{e:+.1f}%" for e in r["errorPercent"]),
            "requests 2 / 3: cumulative turn error (%)": " / ".join(f"{e:+.1f}%" for e in r["cumulativeErrorPercent"]),
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
                "turn 2 adds (tokens, tiktoken-estimated)": r["turnAdditions"][0],
                "turn 3 adds (tokens, tiktoken-estimated)": r["turnAdditions"][1],
                "against the article's turns (%, derived from published)": " / ".join(
                    f"{e:+.1f}%" for e in r["additionErrorPercent"]
                ),
                "request-1 residual (tokens, derived from published minus tiktoken-estimated)": r[
                    "instructionsTokensSolved"
                ],
                "requests 2 and 3 rebuilt (tokens, modelled)": r["predictedRequests"][1:],
                "requests 2 and 3 against the article (%, cumulative turn error)": " / ".join(
                    f"{e:+.1f}%" for e in r["requestErrorPercent"][1:]
                ),
            }
        )
    return out


def focused_table(result: dict[str, Any], profile: str = "csharp-raw-element") -> list[dict[str, Any]]:
    """The focused conversation reconstructed under a profile, from our first request and from the published one."""
    r = calibration.row(result["calibration"], profile)
    pub = result["calibration"]["published"]
    return [
        {
            "starting from": "our rebuilt first request",
            "request 1 (tokens, tiktoken-estimated)": r["focusedFirstRequest"],
            "request 2 (tokens, modelled)": r["focusedSecondRequest"],
            "output implied (tokens, derived from published minus modelled)": r["focusedOutputImplied"],
        },
        {
            "starting from": f"the published first request ({pub['focusedFirstRequest']['kind']})",
            "request 1 (tokens, tiktoken-estimated)": pub["focusedFirstRequest"]["value"],
            "request 2 (tokens, modelled)": r["focusedSecondFromPublishedFirst"],
            "output implied (tokens, derived from published minus modelled)": r[
                "focusedOutputImpliedFromPublishedFirst"
            ],
        },
    ]


def definitions_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Tool definitions of each design counted both ways, and the difference set beside the article's 141."""
    defs = result["definitions"]
    published_smaller = result["calibration"]["published"]["focusedSmallerBy"]["value"]
    out = []
    for method in ("cookbook", "harmony"):
        g, f = defs["granular"][method]["total"], defs["focused"][method]["total"]
        out.append(
            {
                "counted by": defs["granular"][method]["method"],
                "granular definitions (tokens, tiktoken-estimated)": g,
                "focused definitions (tokens, tiktoken-estimated)": f,
                "difference (tokens, tiktoken-estimated)": g - f,
                "article's first-request difference (tokens, provider-reported)": published_smaller,
            }
        )
    return out


def saving_by_profile(shares: list[dict[str, Any]], article: dict[str, Any]) -> dict[str, Any]:
    """ORD-1004's focused input saving under bare text (python) and under the csharp-raw-element framing, with the
    article's median saving beside it (published)."""
    by = {r["design"]: r for r in shares}
    g, f = by["granular"], by["focused"]

    def saving(column: str) -> float:
        return round((g[column] - f[column]) / g[column] * 100, 1)

    return {
        "order": calibration.ORDER,
        "python": saving("input, bare text"),
        "csharp-raw-element": saving("input, csharp-raw-element framing"),
        "articleMedian": article["medians"]["focusedFewerTokensPercent"],
    }
