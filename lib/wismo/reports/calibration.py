"""What notebook 02 shows of the calibration against the article's ORD-1004 conversation: its checks and tables."""

from __future__ import annotations

from typing import Any

from wismo.analyses import calibration
from wismo.reports import check

CALIBRATION_TOLERANCE_PERCENT = 5.0


def check_calibration(result: dict[str, Any]) -> str:
    """The calibration claim: under the csharp-mcp profile our rebuilt turns add within 5% of what the article's
    provider-reported requests imply (derived from published)."""
    s = result["calibrationSummary"]
    errors = s["errorPercent"]
    return check(
        all(abs(e) <= CALIBRATION_TOLERANCE_PERCENT for e in errors),
        f"under {s['profile']} each rebuilt turn adds within {CALIBRATION_TOLERANCE_PERCENT:g}% of the article's",
        "; ".join(f"{a:,} vs {d:,} ({e:+.1f}%)" for a, d, e in zip(s["additions"], s["derived"], errors))
        + " tokens, tiktoken-estimated against derived from published",
    )


def check_requests(result: dict[str, Any]) -> str:
    """The claim that one base explains all three requests: with the instructions' size solved from request 1,
    the rebuilt requests 2 and 3 land within 5% of the published ones under csharp-mcp."""
    row = calibration.row(result["calibration"], "csharp-mcp")
    errors = row["requestErrorPercent"][1:]
    return check(
        all(abs(e) <= CALIBRATION_TOLERANCE_PERCENT for e in errors),
        "one instructions size explains all three granular requests under csharp-mcp",
        f"instructions solved from request 1: {row['instructionsTokensSolved']:,} tokens; requests 2 and 3 rebuilt as "
        + ", ".join(
            f"{p:,} vs {r:,} ({e:+.1f}%)"
            for p, r, e in zip(row["predictedRequests"][1:], row["publishedRequests"][1:], errors)
        ),
    )


def calibration_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The calibration rows as a reader's table: per profile and definition method, turns and requests."""
    out = []
    for r in result["calibration"]["rows"]:
        out.append(
            {
                "client profile": r["profile"],
                "definitions counted by": r["definitions"],
                "turn 2 adds (tokens)": r["turnAdditions"][0],
                "turn 3 adds (tokens)": r["turnAdditions"][1],
                "vs article (derived)": " / ".join(f"{e:+.1f}%" for e in r["additionErrorPercent"]),
                "instructions solved (tokens)": r["instructionsTokensSolved"],
                "requests 2, 3 rebuilt": ", ".join(f"{v:,}" for v in r["predictedRequests"][1:]),
                "vs article (provider-reported)": " / ".join(f"{e:+.1f}%" for e in r["requestErrorPercent"][1:]),
            }
        )
    return out


def focused_table(result: dict[str, Any], profile: str = "csharp-mcp") -> list[dict[str, Any]]:
    """The focused conversation reconstructed under a profile, from our first request and from the published one."""
    r = calibration.row(result["calibration"], profile)
    pub = result["calibration"]["published"]
    return [
        {
            "starting from": "our rebuilt first request",
            "request 1 (tokens)": r["focusedFirstRequest"],
            "request 2 (tokens)": r["focusedSecondRequest"],
            "output implied (tokens)": r["focusedOutputImplied"],
        },
        {
            "starting from": f"the published first request ({pub['focusedFirstRequest']['kind']})",
            "request 1 (tokens)": pub["focusedFirstRequest"]["value"],
            "request 2 (tokens)": r["focusedSecondFromPublishedFirst"],
            "output implied (tokens)": r["focusedOutputImpliedFromPublishedFirst"],
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
                "granular definitions (tokens)": g,
                "focused definitions (tokens)": f,
                "difference (tokens)": g - f,
                "article's first-request difference (provider-reported)": published_smaller,
            }
        )
    return out
