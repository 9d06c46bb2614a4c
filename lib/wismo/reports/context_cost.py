"""The context-cost report (notebook 02): the case study's cumulative-context model reproduced, then applied to our
servers' real tool definitions and results; its JSON is context-cost.json."""

from __future__ import annotations

from collections.abc import Mapping
from statistics import median
from typing import Any

from wismo import cost, tokens
from wismo.analyses import calibration, sensitivity
from wismo.core import reference
from wismo.core.errors import ClaimFailed
from wismo.core.jsonfmt import write_stable
from wismo.core.kinds import DERIVED, MEASURED, MODELLED, PUBLISHED, TIKTOKEN
from wismo.core.paths import report_dir
from wismo.cost import prices
from wismo.domain import prompts
from wismo.domain.answer import SCORED
from wismo.reports import calibration as shown_calibration
from wismo.reports import check, context_price
from wismo.reports.case_study import case_study, parameters, reproduce
from wismo.reports.params import Param, ParameterError, defaults
from wismo.reports.params import checked as check_parameters
from wismo.runs.scoring import load_expectations
from wismo.studies import recording
from wismo.studies.declaration import Study, UnknownCase, chosen
from wismo.tokens import conversation, definitions, framing


def our_servers(
    recorded: dict[str, Any],
    encoding_name: str = tokens.DEFAULT_ENCODING,
    profile: str = "python",
    key: str = "orderId",
) -> list[dict[str, Any]]:
    """Per case and design: base, per-turn additions, per-call input counted directly and via the model, with
    definitions and results as the client profile sends them; each row names its case under `key`."""
    rows = []
    client = framing.profile(profile)
    asked = recorded.get("prompts", {})
    for design, by_order in recorded["turns"].items():
        tool_list = recorded["tools"][design]
        for order_id, tool_turns in by_order.items():
            conv = conversation.conversation(
                asked.get(order_id, order_id), tool_list, tool_turns, encoding_name, client
            )
            modelled = cost.session(conv.base, conv.additions)
            if modelled.inputs != conv.requests:
                detail = (
                    f"{design} {order_id}: the model gives {modelled.inputs} but counting each request gives "
                    f"{conv.requests}"
                )
                raise ClaimFailed("the session model gives each request's input as counted", detail, detail)
            r = sum(conv.result_tokens) / len(conv.result_tokens) if conv.result_tokens else 0
            rows.append(
                {
                    "resultTokens": list(conv.result_tokens),
                    "profile": profile,
                    "design": design,
                    key: order_id,
                    "modelCalls": modelled.calls,
                    "toolCalls": sum(len(t) for t in tool_turns),
                    "toolDefinitions": tokens.count_tools([client.function(t) for t in tool_list], encoding_name),
                    "base": conv.base,
                    "additions": list(conv.additions),
                    "inputs": list(modelled.inputs),
                    "total": modelled.total,
                    "final": modelled.final,
                    "meanResultTokens": round(r, 1),
                }
            )
    return rows


def ratios(
    rows: list[dict[str, Any]], key: str = "orderId", pair: tuple[str, str] = ("granular", "focused")
) -> list[dict[str, Any]]:
    """Per case: the reference design's total, the other's, their ratio and the other's saving in percent."""
    ref, other = pair
    by = {(r["design"], r[key]): r for r in rows}
    out = []
    for order_id in dict.fromkeys(r[key] for r in rows):
        g, f = by[(ref, order_id)]["total"], by[(other, order_id)]["total"]
        out.append(
            {
                key: order_id,
                f"{ref}Total": g,
                f"{other}Total": f,
                "ratio": round(g / f, 3),
                f"{other}SavingPercent": round((g - f) / g * 100, 1),
            }
        )
    return out


def against_article(
    rows: list[dict[str, Any]], article: dict[str, Any], order_id: str = "ORD-1004"
) -> list[dict[str, Any]]:
    """Our ORD-1004 estimates beside the article's figures, each article figure labelled provider-reported (as
    printed) or derived from published (a sum or difference of printed ones), with the difference."""
    pub = calibration.published(article, order_id)
    g = next(r for r in rows if r["design"] == "granular" and r["orderId"] == order_id)
    f = next(r for r in rows if r["design"] == "focused" and r["orderId"] == order_id)
    requests = pub["granularRequests"]["value"]
    figures = [
        (f"granular call {k} input", requests[k - 1], pub["granularRequests"]["kind"], g["inputs"][k - 1])
        for k in (1, 2, 3)
    ]
    figures += [
        ("granular input, all calls", pub["granularInput"]["value"], pub["granularInput"]["kind"], g["total"]),
        (
            "focused first request smaller by",
            pub["focusedSmallerBy"]["value"],
            pub["focusedSmallerBy"]["kind"],
            g["inputs"][0] - f["inputs"][0],
        ),
        (
            "granular turn-2 addition (get_order call + result)",
            pub["granularAdditions"]["value"][0],
            pub["granularAdditions"]["kind"],
            g["additions"][0],
        ),
        (
            "granular turn-3 addition (4 calls + results)",
            pub["granularAdditions"]["value"][1],
            pub["granularAdditions"]["kind"],
            g["additions"][1],
        ),
    ]
    return [
        {
            "figure": name,
            "article (tokens)": value,
            "article figure is": kind,
            f"wismo (tokens, {tokens.LABEL}, {g['profile']} profile)": ours,
            "wismo minus article (tokens)": ours - value,
            "wismo minus article (%)": round((ours - value) / value * 100, 1),
        }
        for name, value, kind, ours in figures
    ]


def load_references() -> tuple[dict[str, Any], dict[str, Any]]:
    """The case study's and the article's published figures."""
    return reference.load("context-budget-case-study"), reference.load("where-is-my-order")


# A grid wide enough to show both of the case study's designs and where the window gives out.
DEFAULT_SWEEP_RS = (250, 500, 1000, 1500, 2000, 3000, 5000, 8000, 12000, 18000, 25000, 40000)
DEFAULT_SWEEP_CALLS = tuple(range(1, 16))


OUTPUT = "context-cost.json"
PARAMETERS = {
    "base": Param(None, "count", optional=True),  # None (each of these five): the case study's assumption
    "result_sizes": Param(None, "counts", optional=True),  # [r broad, r scoped]
    "calls": Param(None, "count", optional=True),
    "context_window": Param(None, "count", optional=True),
    "target": Param(None, "count", optional=True),
    "encoding": Param(tokens.DEFAULT_ENCODING, "text", choices=lambda: tokens.PACKAGED_ENCODINGS),
    "orders": Param(None, "texts", optional=True),  # case keys (order IDs in the article's); None: every case
    "sweep_rs": Param(None, "counts", optional=True),  # r values of the sweep; None: DEFAULT_SWEEP_RS
    "sweep_calls": Param(None, "counts", optional=True),  # numbers of calls of the sweep; None: 1 to 15
    "focus_order": Param("ORD-1004", "text"),  # the case drawn call by call (the first when not a case)
    "profile": Param("python", "text", choices=lambda: tuple(framing.PROFILES)),  # how the client frames
    "study": Param(None, "text", optional=True),  # a study file; None: data/studies/where-is-my-order.toml
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
    **context_price.PARAMETERS,  # caching, prices and call strategy (sections 6 to 8)
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the context-cost report"


def checked(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The report's parameters checked before any server starts (ParameterError or StudyInvalid, one sentence):
    each against its declaration, the study read, the cases found in it and every model priced."""
    p = check_parameters(params, PARAMETERS, REPORT)
    if p["result_sizes"] is not None and len(p["result_sizes"]) != 2:
        raise ParameterError(REPORT, "result_sizes", p["result_sizes"], "it must be two numbers, [r broad, r scoped]")
    if not p["models"]:
        raise ParameterError(REPORT, "models", p["models"], "the price sections need at least one model")
    study = chosen(p["study"])
    try:
        study.select(p["orders"], unfriendly=False)
    except UnknownCase as exc:
        allowed = str(exc).replace("not a case of the comparison", "each must be a case of the study")
        raise ParameterError(REPORT, "orders", p["orders"], allowed) from None
    try:
        prices.resolve(p["models"], p["prices"], p["price_date"])
    except (KeyError, ValueError, LookupError) as exc:
        raise ParameterError(REPORT, "models", p["models"], f"every model must have a price ({exc})") from None
    return p


def study_block(study: Study) -> dict[str, Any]:
    """What a study's context-cost.json says about the study (the article's carries none: its shape is the built-in
    one): title, file, question, the case key, the reference and the design compared with it."""
    return {
        "title": study.title,
        "file": study.path.name,
        "question": study.question,
        "key": study.key,
        "reference": study.reference,
        "designs": list(study.designs),
        "compared": study.pair[1],
    }


def study_headline(result: dict[str, Any], roles: tuple[str, str]) -> dict[str, Any]:
    """A study's key figures, named for its designs: the compared design's median saving across the cases and the
    first model's price of the focus case's conversations, both designs, without caching."""
    ref, other = roles
    h = result["priceHeadline"]
    return {
        "reference": ref,
        "compared": other,
        "medianSavingPercent": median(r[f"{other}SavingPercent"] for r in result["ratios"]),
        "priceReference": h[ref],
        "priceCompared": h[other],
    }


async def build(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every figure of the report: the case study and its checks, the sweep, the study's servers over MCP, and for
    the article's study its published run and the calibration."""
    p = checked(params)
    study = chosen(p["study"])
    key, article = study.key, study.is_article
    case_ref, article_ref = load_references()
    cp = parameters(case_ref, p["base"], p["result_sizes"], p["calls"], p["context_window"], p["target"])
    cs = case_study(cp["base"], cp["rs"], cp["calls"], cp["window"], cp["target"])
    order_ids = p["orders"] or [study.case_key(c) for c in study.cases]
    recorded = await recording.record(study, order_ids)
    rows = our_servers(recorded, p["encoding"], p["profile"], key)
    client = framing.profile(p["profile"])
    result = {
        "labels": {
            "caseStudy": "modelled",
            "ourServers": f"{tokens.LABEL} ({tokens.COOKBOOK_GPT4O.name}, {p['encoding']}, client profile "
            f"{p['profile']}), then modelled",
            "article": "provider-reported (published)",
            "calibration": calibration.DERIVED + " and " + tokens.LABEL,
        },
        "method": {
            "name": tokens.COOKBOOK_GPT4O.name,
            "source": tokens.COOKBOOK_GPT4O.source,
            "encoding": p["encoding"],
            "profile": {"name": client.name, "description": client.description, "source": client.source},
        },
        "definitions": {
            d: definitions.count_definitions(
                [client.function(t) for t in recorded["tools"][d]], p["encoding"]
            ).as_dict()
            for d in recorded["tools"]
        },
        "sources": {"caseStudy": case_ref["source"], **({"article": article_ref["source"]} if article else {})},
        "caseStudy": cs,
        "caseStudyChecks": (checks := reproduce(cs, case_ref)),
        "caseStudyReproduced": {
            "printed": sum(r["printed by the source"] for r in checks or []),
            "matched": sum(r["printed by the source"] and r["match"] for r in checks or []),
        },
        "sweep": cost.sweep(
            cp["base"], p["sweep_rs"] or DEFAULT_SWEEP_RS, p["sweep_calls"] or DEFAULT_SWEEP_CALLS, cp["window"]
        ),
        "ourServers": rows,
        "ratios": ratios(rows, key, study.pair),
        "focusOrder": p["focus_order"] if p["focus_order"] in order_ids else order_ids[0],
    }
    if article:
        result["againstArticle"] = against_article(rows, article_ref) if "ORD-1004" in order_ids else []
    else:
        result["study"] = study_block(study)
    if article and calibration.ORDER in order_ids:
        cal = calibration.rebuild(recorded, article_ref, p["encoding"])
        best = calibration.row(cal, "csharp-raw-element")
        result["calibration"] = cal
        result["calibrationSummary"] = {
            "profile": "csharp-raw-element",
            "additions": best["turnAdditions"],
            "derived": best["derivedAdditions"],
            "errorPercent": best["additionErrorPercent"],
            "instructionsTokensSolved": best["instructionsTokensSolved"],
            "ourInstructionsTokens": tokens.count_text(prompts.INSTRUCTIONS, p["encoding"]),
        }
        result["recordTypes"] = calibration.record_types(recorded, p["encoding"])
        result["framingShare"] = calibration.framing_share(recorded, best["instructionsTokensSolved"], p["encoding"])
        expected = load_expectations()[calibration.ORDER]
        result["sensitivity"] = sensitivity.build(
            recorded, cal["published"], article_ref, {k: expected[k] for k in SCORED}, calibration.ORDER, p["encoding"]
        )
        result["savingByProfile"] = shown_calibration.saving_by_profile(result["framingShare"], article_ref)
    result |= await context_price.build(
        p, cs, recorded, result["focusOrder"], article_ref if article else None, cp["window"], study=study
    )
    if not article:
        result["studyHeadline"] = study_headline(result, study.pair)
    result["kinds"] = {k: v for k, v in BLOCK_KINDS.items() if k in result}
    unlabelled = set(result) - set(result["kinds"]) - set(NOT_FIGURES) - {"kinds"}
    if unlabelled:  # a block added without saying what kind of figures it holds
        raise ClaimFailed("every block of context-cost.json carries its kind", f"no kind for {sorted(unlabelled)}")
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


# What each block of context-cost.json holds, said once per block (figures inside a block may name their own kind).
BLOCK_KINDS = {
    "caseStudy": MODELLED,
    "caseStudyReproduced": f"{MODELLED}, against {PUBLISHED}",
    "sweep": MODELLED,
    "ourServers": f"{TIKTOKEN}, then {MODELLED} (client profile in labels)",
    "ratios": f"{TIKTOKEN}, then {MODELLED} (client profile in labels)",
    "againstArticle": f"{TIKTOKEN} and {MODELLED} beside {PUBLISHED}",
    "calibration": f"{TIKTOKEN} against {DERIVED}",
    "calibrationSummary": f"{TIKTOKEN} under the csharp-raw-element profile, against {DERIVED}",
    "sensitivity": f"{TIKTOKEN} against {DERIVED}",
    "savingByProfile": f"{TIKTOKEN}, then {MODELLED}; the article's median {PUBLISHED}",
    "studyHeadline": f"{TIKTOKEN}, then {MODELLED} (client profile in labels)",
    "recordTypes": TIKTOKEN,
    "framingShare": f"{TIKTOKEN}, then {MODELLED}",
    "definitions": TIKTOKEN,
    "priceHeadline": f"{MODELLED} (client profile in labels)",
    "pricePerConversations": MODELLED,
    "scalePrices": MODELLED,
    "caching": MODELLED,
    "callStrategy": f"{TIKTOKEN}, then {MODELLED}",
    "strategyHeadline": f"{TIKTOKEN}, then {MODELLED}",
    "caseStudyChecks": f"{MODELLED}, against {PUBLISHED}",
    "conversations": f"{TIKTOKEN}, then {MODELLED}",
    "scaleRows": f"{TIKTOKEN}, then {MODELLED}",
    "prices": f"{PUBLISHED} (genai-prices' price data, USD per million tokens)",
    "timings": MEASURED,
}
# Blocks that hold the run's parameters, labels and sources rather than figures.
NOT_FIGURES = ("focusOrder", "labels", "method", "sources", "priceLibrary", "pricing", "study")


def check_shape(result: dict[str, Any]) -> str:
    """The claim about where the difference comes from, for the focus order: the focused design starts lighter, its
    one result is bigger than any granular result, and it is carried for one request fewer."""
    order = result["focusOrder"]
    g = next(r for r in result["ourServers"] if r["design"] == "granular" and r["orderId"] == order)
    f = next(r for r in result["ourServers"] if r["design"] == "focused" and r["orderId"] == order)
    holds = (
        f["base"] < g["base"]
        and f["resultTokens"][0] > max(g["resultTokens"])
        and f["modelCalls"] == g["modelCalls"] - 1
    )
    return check(
        holds,
        f"for {order} the focused design starts lighter, returns one result bigger than any granular one, "
        "and makes one model call fewer",
        f"first request {f['base']:,} vs {g['base']:,} tokens; its result {f['resultTokens'][0]:,} tokens vs the "
        "largest "
        f"granular result {max(g['resultTokens']):,}; {f['modelCalls']} vs {g['modelCalls']} model calls; "
        "tiktoken-estimated",
    )
