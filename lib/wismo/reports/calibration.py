"""What notebook 02 shows of the calibration against a study's published conversations (the article's: its ORD-1004
runs): its fit, the spread of the plausible choices, the second design's test, and tables; said as a hypothesis,
never as a confirmation."""

from __future__ import annotations

from typing import Any

from wismo.accounting.cost.saving import amount
from wismo.core.textgrid import plural
from wismo.reports.analyses import calibration
from wismo.reports.analyses.sensitivity import Row

# What the sources say reaches the model, by repository, path and version as released (read for this report).
SOURCES = (
    "modelcontextprotocol/csharp-sdk v2.2.0, src/ModelContextProtocol.Core/AIContentExtensions.cs: "
    "CallToolResult.ToChatMessage(callId) puts the whole CallToolResult into a FunctionResultContent as a "
    "JsonElement (JsonSerializer.SerializeToElement with McpJsonUtilities.DefaultOptions: compact, default "
    "encoder); its Directory.Packages.props builds it against Microsoft.Extensions.AI 10.8.3",
    "dotnet/extensions, src/Libraries/Microsoft.Extensions.AI.OpenAI: the Responses client "
    "(OpenAIResponseChatClient.cs, added in commit 3d617896f1) first appears in tag v9.4.0, and the package's "
    "CHANGELOG.md gives its first release as 9.4.0-preview.1.25207.5; at every tag from v9.4.0 to v10.9.0 "
    "(OpenAIResponsesChatClient.cs from v9.10.0) it writes a result that is not a string with "
    "JsonSerializer.Serialize(result, AIJsonUtilities.DefaultOptions), which "
    "src/Libraries/Microsoft.Extensions.AI.Abstractions/Utilities/AIJsonUtilities.Defaults.cs makes indented with "
    "JavaScriptEncoder.UnsafeRelaxedJsonEscaping",
    "dotnet/extensions, the same Defaults.cs before commit 11ccd68ee3: indented with the default encoder; the "
    "relaxed encoder arrives with that commit (tag v9.3.0, first package 9.3.0-preview.1.25114.11); the packages "
    "before it are 9.0.0-preview.9.24507.7 to 9.1.0-preview.1.25064.3 (tags v9.0.0 to v9.2.0; there is no 9.2.x "
    "package), and none of them has a Responses client",
    "dotnet/runtime, System.Text.Json JsonDocument.WriteString: a JsonElement's strings are unescaped, then escaped"
    " again by the writer's encoder, so the original \\u0022 escapes do not survive re-serialization",
    "modelcontextprotocol/csharp-sdk issue #962: one user's tool result printed full of \\u0022; it shows no request"
    " body, so it does not show that text reaching the model",
)
# The framing no package with a Responses client writes (SOURCES, third entry): kept in the table to show what the
# default escaper alone does, never as a stack a Responses conversation can have run on.
WITHOUT_RESPONSES = "indented, default escaping"


def _cell(rows: list[Row], framing: str, counting: str = "name + arguments") -> Row:
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
    """The hypothesis and the source that conflicts with it, said plainly, from the packages as released."""
    best = result["sensitivity"]["bestFit"]
    first, _, _ = _names(result)
    relaxed = _cell(result["sensitivity"]["rows"], "indented, relaxed escaping")
    errors = " / ".join(f"{e:+.1f}%" for e in relaxed["errorPercent"])
    return (
        f"**Hypothesis:** the published {first} turns are matched by the *{best['framing']}* envelope. A conversation "
        "over the Responses API through the MCP C# SDK and Microsoft.Extensions.AI, as the article's was, goes through "
        "Microsoft.Extensions.AI.OpenAI's Responses client, first released in 9.4.0-preview.1.25207.5; every release "
        f"of it sends the envelope *indented, with relaxed escaping*, which does not match ({errors}). The "
        f"*{WITHOUT_RESPONSES}* framing was written only by packages before 9.3.0-preview.1.25114.11, none of which "
        "has a Responses client, so it cannot have been that stack: it stays in the table to show what the default "
        "escaper alone does. No release we read sends a JsonElement's raw text unchanged, so which framing reached "
        "the model is not established. Sources: " + "; ".join(SOURCES) + "."
    )


def countings_statement(result: dict[str, Any]) -> str:
    """The four ways of counting the model's function calls, a sentence each, and the call ids the table counts."""
    s = result["sensitivity"]
    ids = s["callIds"]
    low, high = ids["tokensEach"]
    size = f"{low:,} tokens" if low == high else f"{low:,} to {high:,} tokens"
    lines = [f"- *{c['name']}*: {c['meaning']}." for c in s["countings"]]
    return (
        "How the provider counts the model's function calls is not published; the table counts them four ways:\n\n"
        + "\n".join(lines)
        + f"\n\nUnder *with call_id*, each call's id is counted at the size of {ids['source']}, "
        + (f"`{ids['id']}`: " if ids["id"] else "")
        + f"{ids['characters']} characters, {size} each ({ids['kind']})."
    )


def escapes_statement(result: dict[str, Any]) -> str:
    """Every character of the study's results that the default encoder escapes, with its escape and where it occurs."""
    found = result["sensitivity"]["defaultEscapes"]["found"]
    if not found:
        return "System.Text.Json's default encoder finds nothing to escape in the study's results."
    said = [
        f"`{f['character']}` as `{f['escaped']}` ({f['occurrences']:,} times; first in `{f['firstSeenIn']}`)"
        for f in found
    ]
    return (
        "The two default-escaping framings write the results through System.Text.Json's default encoder, which "
        "escapes these characters that occur in the study's results (every design and case, counted in this run): "
        + "; ".join(said)
        + ". Each escape is six characters where the character was one, which is most of what those framings add."
    )


def second_test_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per framing, what the second design's published total leaves for the model's outputs, its verdict against
    the plausible output range and the verdict's margin beside the tolerance the fits are judged by."""
    _, second, _ = _names(result)
    test = result["sensitivity"]["secondTest"]
    tolerance = test["tolerancePercent"]
    rows = []
    for r in test["rows"]:
        row = {
            "result framing": r["framing"],
            f"left for the {second} outputs (tokens, derived from published minus tiktoken-estimated)": (
                "{:,} to {:,}".format(*r["outputRemainder"])
            ),
        }
        if "verdict" in r:
            row |= {
                "verdict": r["verdict"],
                "margin (tokens)": r["marginTokens"],
                f"margin (% of the rebuilt turns; fits are judged at ±{tolerance:g}%)": (
                    f"{r['marginPercent']:.1f}%" + (" (inside the tolerance)" if r["withinTolerance"] else "")
                ),
            }
        rows.append(row)
    return rows


def bounds_statement(result: dict[str, Any]) -> str:
    """How the plausible range of the second conversation's outputs is derived, bound by bound."""
    first, second, _ = _names(result)
    s = result["sensitivity"]
    b, sizes = s["secondTest"]["bounds"], s.get("answerSizes")
    parts = []
    if b["lower"] is not None and sizes is not None:
        parts.append(
            f"**Lower bound, {b['lower']:,} tokens** (tiktoken-estimated): the least the {second} outputs can take, "
            f"its tool call and then the answer with the published summary ({sizes['quotedSummary']:,} tokens alone)."
        )
    if b["upper"] is not None:
        parts.append(
            f"**Upper bound, {b['upper']:,} tokens:** the {first} conversation's own output, {b['firstOutput']:,} "
            f"(derived from published: its total minus its requests), less its tool calls as the model wrote them, "
            f"{b['firstCallsWritten']:,} (name and arguments, tiktoken-estimated), plus the {second} conversation's, "
            f"{b['secondCallsWritten']:,}: the same case answered once more, with the {second} design's calls. A "
            "model may write more, so this bound is plausible, not certain."
        )
    if not parts:
        return f"Neither bound can be derived: the study publishes no {second} answer and no {first} output."
    return " ".join(parts)


def conflict_statement(result: dict[str, Any]) -> str:
    """What the second design's conversation says of the framings that fit the first one: each verdict with its
    margin, and whether the best fit survives."""
    s = result["sensitivity"]
    first, second, _ = _names(result)
    test = s["secondTest"]
    if not test["judged"]:
        return (
            f"No answer of the {second} conversation and no output of the {first} one are published, so what its "
            "total leaves for the model's outputs is shown, but no framing can be judged by it."
        )
    tolerance = test["tolerancePercent"]
    said = []
    for r in test["rows"]:
        firm = (
            f", inside the ±{tolerance:g}% the fits are judged by, so not a firm verdict"
            if r["withinTolerance"]
            else ""
        )
        how = "by" if r["verdict"].startswith("fails") else "with room of"
        said.append(
            f"*{r['framing']}* {r['verdict']} {how} {r['marginTokens']:,} tokens ({r['marginPercent']:.1f}% of its "
            f"rebuilt turns{firm})"
        )
    best = next(r for r in test["rows"] if r["framing"] == s["bestFit"]["framing"])
    fitting = [r["framing"] for r in test["rows"] if r["verdict"].startswith("fits")]
    if best["verdict"].startswith("fits"):
        end = f"The framing that fits the {first} conversation best survives this test."
    elif not fitting:
        end = (
            f"No framing fits both bounds, and the one that fits the {first} conversation best fails "
            f"the {second} test"
            + (" by a margin inside the tolerance" if best["withinTolerance"] else "")
            + ": no single framing explains both published conversations, and the calibration stays an open conflict."
        )
    else:
        end = (
            f"The framing that fits the {first} conversation best fails the {second} test, and "
            + ", ".join(f"*{f}*" for f in fitting)
            + f" fits the {second} bounds but not the {first} turns: no single framing explains both published "
            "conversations."
        )
    return "; ".join(said) + ". " + end


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


def sensitivity_table(result: dict[str, Any]) -> list[dict[str, object]]:
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


def calibration_table(result: dict[str, Any]) -> list[dict[str, object]]:
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


def savings_table(result: dict[str, Any]) -> list[dict[str, object]]:
    """The second design's saving, ours under each profile beside the study's own: on the published case, then as
    the median across the cases."""
    b = result["savingAgainstPublished"]
    cases = len({r[result["study"]["key"]] for r in result["ratios"]})
    theirs = b.get("publishedCaseSaving"), b.get("publishedMedian")
    rows = (
        (f"{b['case']}, the published case", b["caseSaving"], theirs[0], "1 − {1:,} / {0:,}"),
        (f"median across the {plural(cases, 'case')}", b["medianSaving"], theirs[1], "its runs' median tokens"),
    )
    return [
        {
            f"saving of the {b['second']} design": what,
            **{f"{n} profile (input, modelled)": " ".join(amount(ours[n])) for n in b["profiles"]},
            "the study's own": " ".join(amount(own["value"])) if own else "not published",
            "the study's figure is": f"{own['kind']}: {how.format(*own.get('totals', ()))}, input and output"
            if own
            else "—",
        }
        for what, ours, own, how in rows
    ]


def savings_statement(result: dict[str, Any]) -> str:
    """How each of our savings in savings_table is computed, and what differs from the study's own figure."""
    b = result["savingAgainstPublished"]
    first, second, case = b["first"], b["second"], b["case"]
    starts = " and ".join(f"{d} {b['firstRequests'][d]:,} ({b['firstRequestKinds'][d]})" for d in (first, second))
    inputs = "; ".join(
        f"{n}: {first} {b['caseInputs'][n][first]:,}, {second} {b['caseInputs'][n][second]:,} tokens"
        for n in b["profiles"]
    )
    return (
        f"On {case}, each conversation starts from its published first request ({starts}), so the part of it we "
        "cannot rebuild (the request-1 residual) is in both, and adds our servers' turns rebuilt under each profile: "
        f"input in all, {inputs} (tiktoken-estimated turns, modelled). The median row is each case's saving as "
        "section 3 computes it, under each profile, and its median (the python value is the report's headline). "
        "Ours count input only; the study's count every request's input and output, and its median is the saving "
        "of its runs' median conversations, so the two differ by the outputs' share as well as by the framing."
    )


def framing_share_statement(result: dict[str, Any]) -> str:
    """Why the framing-share table's bare-text totals differ from section 3's for the same case: there every request
    carries the request-1 residual in place of the study's instructions (said with the numbers; nothing where the
    study publishes no conversation to solve the residual from)."""
    if "calibrationSummary" not in result:
        return ""
    s, key = result["calibrationSummary"], result["study"]["key"]
    case = result["savingAgainstPublished"]["case"] if "savingAgainstPublished" in result else result["focusCase"]
    ours = {r["design"]: r for r in result["ourServers"] if r[key] == case}
    per = s["instructionsTokensSolved"] - s["ourInstructionsTokens"]
    said = []
    for r in result["framingShare"]:
        section3 = ours[r["design"]]
        diff, calls = r["input, bare text"] - section3["total"], section3["modelCalls"]
        why = (
            f"{per:+,} × {calls} requests"
            if diff == per * calls
            else f"of which {per * calls:+,} is {per:+,} × {calls}"
        )
        said.append(f"{r['design']} {r['input, bare text']:,} against {section3['total']:,} ({diff:+,}: {why})")
    return (
        f"These bare-text totals for {case} are not section 3's: "
        + "; ".join(said)
        + f". Here every request carries the request-1 residual ({s['instructionsTokensSolved']:,} tokens, solved "
        f"from the published first request) in place of the study's instructions ({s['ourInstructionsTokens']:,}), "
        f"{per:+,} tokens a request, so the framing's share is stated against the conversation as it was published."
    )
