"""The context-cost report (notebook 02): the case study's cumulative-context model reproduced, then applied to our
servers' real tool definitions and results; its JSON is context-cost.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from wismo.accounting import cost, tokens
from wismo.accounting.cost import prices
from wismo.accounting.tokens import conversation, definitions, framing
from wismo.core import reference
from wismo.core.errors import ClaimFailed
from wismo.core.jsonfmt import write_stable
from wismo.core.kinds import DERIVED, MEASURED, MODELLED, PUBLISHED, TIKTOKEN
from wismo.core.paths import report_dir
from wismo.domain import prompts
from wismo.domain.answer import SCORED
from wismo.reports import context_price, verdict
from wismo.reports.analyses import calibration, sensitivity
from wismo.reports.analyses.calibration import Calibration, PublishedFigures
from wismo.reports.analyses.sensitivity import Sensitivity
from wismo.reports.case_study import case_study, parameters, reproduce
from wismo.reports.params import Param, ParameterError, defaults
from wismo.reports.params import checked as check_parameters
from wismo.reports.savings import ratios
from wismo.runs.scoring import load_expectations
from wismo.studies import investigations
from wismo.studies.declaration import Study, UnknownCase, chosen
from wismo.studies.investigations import Recorded
from wismo.studies.published import REPORTED


def our_servers(
    recorded: Recorded,
    key: str,
    encoding_name: str = tokens.DEFAULT_ENCODING,
    profile: str = "python",
    labels: Mapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """Per case and design: base, per-turn additions, per-call input counted directly and via the model, with
    definitions and results as the client profile sends them; each row names its case under `key`, and by its label
    under "case" (`labels`, by key) where it has one."""
    rows = []
    client = framing.profile(profile)
    asked = recorded["prompts"]
    for design, by_order in recorded["turns"].items():
        tool_list = recorded["tools"][design]
        for order_id, tool_turns in by_order.items():
            conv = conversation.conversation(asked[order_id], tool_list, tool_turns, encoding_name, client)
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
                    **({"case": labels[order_id]} if labels and order_id in labels else {}),
                    "modelCalls": modelled.calls,
                    "toolCalls": sum(len(t) for t in tool_turns),
                    "turnCalls": [len(t) for t in tool_turns],
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


def against_published(rows: list[dict[str, Any]], pub: PublishedFigures, key: str) -> list[dict[str, object]]:
    """Our estimates of the published conversations beside the published figures, each published figure labelled
    provider-reported (as printed) or derived from published (a sum or difference of printed ones), with the
    difference."""
    case, first, second = pub["case"], pub["designs"]["first"], pub["designs"]["second"]
    f = next(r for r in rows if r["design"] == first and r[key] == case)
    requests = pub["firstRequests"]["value"]
    figures = [
        (f"{first} call {k} input", requests[k - 1], pub["firstRequests"]["kind"], f["inputs"][k - 1])
        for k in range(1, min(len(requests), len(f["inputs"])) + 1)
    ]
    figures += [(f"{first} input, all calls", pub["firstInput"]["value"], pub["firstInput"]["kind"], f["total"])]
    if second is not None:
        s = next(r for r in rows if r["design"] == second and r[key] == case)
        smaller = pub["secondSmallerBy"]
        figures.append(
            (f"{second} first request smaller by", smaller["value"], smaller["kind"], f["inputs"][0] - s["inputs"][0])
        )
    figures += [
        (
            f"{first} turn-{k + 1} addition ({turn_calls(f, k)})",
            pub["firstAdditions"]["value"][k - 1],
            pub["firstAdditions"]["kind"],
            f["additions"][k - 1],
        )
        for k in range(1, min(len(pub["firstAdditions"]["value"]), len(f["additions"])) + 1)
    ]
    return [
        {
            "figure": name,
            "published (tokens)": value,
            "published figure is": kind,
            f"wismo (tokens, {tokens.LABEL}, {f['profile']} profile)": ours,
            "wismo minus published (tokens)": ours - value,
            "wismo minus published (%)": round((ours - value) / value * 100, 1),
        }
        for name, value, kind, ours in figures
    ]


def turn_calls(row: dict[str, Any], turn: int) -> str:
    """What one tool turn of a conversation row held, in words: its calls and their results."""
    n = row["turnCalls"][turn - 1]
    return f"{n} call{'s' if n != 1 else ''} + result{'s' if n != 1 else ''}"


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
    "focus_order": Param(None, "text", optional=True),  # the case drawn call by call; None: the study's focus
    "profile": Param("python", "text", choices=lambda: tuple(framing.PROFILES)),  # how the client frames
    "study": Param(None, "text", optional=True),  # a study file; None: data/studies/where-is-my-order.toml
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
    **context_price.PARAMETERS,  # caching, prices and call strategy (sections 6 to 8)
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the context-cost report"


def checked(params: Mapping[str, object] | None) -> dict[str, Any]:
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
        allowed = str(exc).replace("not a case of the study", "each must be a case of the study")
        raise ParameterError(REPORT, "orders", p["orders"], allowed) from None
    try:
        prices.resolve(p["models"], p["prices"], p["price_date"])
    except (KeyError, ValueError, LookupError) as exc:
        raise ParameterError(REPORT, "models", p["models"], f"every model must have a price ({exc})") from None
    return p


def study_block(study: Study) -> dict[str, object]:
    """What context-cost.json says about its study: title, file, question, the case key, the reference and every
    design, and what the study declares beyond them."""
    return {
        "title": study.title,
        "file": study.path.name,
        "question": study.question,
        "key": study.key,
        "reference": study.reference,
        "designs": list(study.designs),
        "focus": study.focus_key,
        "reproduces": list(study.reproduce),
        "published": study.published is not None,
    }


def counted_verdict(
    study: Study, recorded: Recorded, rows: list[dict[str, Any]], encoding: str, fitted: str | None
) -> dict[str, object]:
    """The study's one answer (verdict.computed) from our servers' conversations counted under each profile its
    range spans (the rows already counted under the report's profile are reused)."""
    profile = rows[0]["profile"]
    counted = {
        n: rows if n == profile else our_servers(recorded, study.key, encoding, n)
        for n in verdict.profiles(profile, fitted)
    }
    return verdict.computed(study, counted, profile, fitted)


def headline(result: dict[str, Any], reference: str, key: str) -> dict[str, object]:
    """The report's key figures, one per design against the reference (the index shows them): each design's median
    input saving across the cases (from the verdict), the first model's price of the focus case's conversations,
    and the focus case's saving with the model calling in parallel and one call per request."""
    savings = {s["design"]: s["medianPercent"] for s in result["verdict"]["savings"]}
    h, strategies = result["priceHeadline"], result["strategyHeadline"]
    return {
        "reference": reference,
        "designs": list(savings),
        "focus": result["focusCase"],
        "profile": result["pricing"]["profile"],
        "savingPercent": savings,
        "price": {d: h[d] for d in [reference, *savings]},
        # Beside it, where the study publishes a conversation: the best-fitting profile's price.
        **({"priceFitted": {d: h["fitted"][d] for d in [reference, *savings]}} if "fitted" in h else {}),
        "strategySaving": {
            d: {
                "parallel": strategies["designs"][d]["savingParallel"],
                "sequential": strategies["designs"][d]["savingSequential"],
            }
            for d in savings
        },
    }


class CalibrationSummary(TypedDict):
    """The calibration in brief: the heavy profile's turn additions against the derived ones, and the residual."""

    profile: str
    additions: list[int]
    derived: list[int]
    errorPercent: list[float]
    instructionsTokensSolved: int
    ourInstructionsTokens: int


class PublishedBlocks(TypedDict, total=False):
    """What a [published] block adds to context-cost.json (published_blocks): every key, or none."""

    againstPublished: list[dict[str, object]]
    calibration: Calibration
    calibrationSummary: CalibrationSummary
    sensitivity: Sensitivity
    framingShare: list[dict[str, object]]


def published_blocks(study: Study, recorded: Recorded, rows: list[dict[str, Any]], encoding: str) -> PublishedBlocks:
    """What a [published] block adds: our estimates beside the published figures, the calibration of the client's
    framing against them, and the sensitivity table with its fit, spread and second-design test (empty when the
    study publishes no conversation with two or more requests)."""
    published = study.published
    which = calibration.calibrated(published)
    if published is None or which is None or which.case not in recorded["prompts"]:
        return {}
    pub = calibration.published_figures(published, which)
    cal = calibration.rebuild(recorded, pub, encoding)
    best = calibration.row(cal, calibration.HEAVY)
    contract = study.instructions == prompts.INSTRUCTIONS
    expected = next((c.expect for c in study.cases if study.case_key(c) == which.case and c.expect), None)
    if contract and expected is None:
        expected = load_expectations().get(which.case)
    fields = {k: expected[k] for k in SCORED} if contract and expected else None
    out: PublishedBlocks = {
        "againstPublished": against_published(rows, pub, study.key),
        "calibration": cal,
        "calibrationSummary": {
            "profile": calibration.HEAVY,
            "additions": best["turnAdditions"],
            "derived": best["derivedAdditions"],
            "errorPercent": best["additionErrorPercent"],
            "instructionsTokensSolved": best["instructionsTokensSolved"],
            "ourInstructionsTokens": tokens.count_text(study.instructions, encoding),
        },
        "sensitivity": sensitivity.build(recorded, pub, fields, encoding),
    }
    # The framing's share of each conversation, with the instructions as large as the published request says.
    out["framingShare"] = calibration.framing_share(recorded, which.case, best["instructionsTokensSolved"], encoding)
    return out


async def build(params: Mapping[str, object] | None = None) -> dict[str, object]:
    """Every figure of the report: the case study and its checks where the study reproduces it, the study's servers
    over MCP, the client's framing, and what its published conversations add; then caching, prices and calls."""
    p = checked(params)
    study = chosen(p["study"])
    key = study.key
    order_ids = p["orders"] or [study.case_key(c) for c in study.cases]
    focus = (
        p["focus_order"]
        if p["focus_order"] in order_ids
        else (study.focus_key if study.focus_key in order_ids else order_ids[0])
    )
    recorded = await investigations.record(study, order_ids)
    labels = {study.case_key(c): c.label for c in study.cases}
    rows = our_servers(recorded, key, p["encoding"], p["profile"], labels)
    client = framing.profile(p["profile"])
    result: dict[str, Any] = {
        "study": study_block(study),
        "labels": {
            "ourServers": f"{tokens.LABEL} ({tokens.COOKBOOK_GPT4O.name}, {p['encoding']}, client profile "
            f"{p['profile']}), then modelled",
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
        "sources": {},
        "ourServers": rows,
        "ratios": ratios(rows, key, study.reference),
        "focusCase": focus,
        "recordTypes": calibration.record_types(recorded, focus, p["encoding"]),
        "framingShare": calibration.framing_share(
            recorded, focus, tokens.count_text(study.instructions, p["encoding"]), p["encoding"]
        ),
    }
    # The case study's assumptions give the context window everywhere (a model's window, not the study's).
    case_ref = reference.load("context-budget-case-study")
    cp = parameters(case_ref, p["base"], p["result_sizes"], p["calls"], p["context_window"], p["target"])
    cs = None
    if study.meets("case-study"):
        cs = case_study(cp["base"], cp["rs"], cp["calls"], cp["window"], cp["target"])
        checks = reproduce(cs, case_ref)
        result |= {
            "caseStudy": cs,
            "caseStudyChecks": checks,
            "caseStudyReproduced": {
                "printed": sum(r["printed by the source"] for r in checks or []),
                "matched": sum(r["printed by the source"] and r["match"] for r in checks or []),
            },
            "sweep": cost.sweep(
                cp["base"], p["sweep_rs"] or DEFAULT_SWEEP_RS, p["sweep_calls"] or DEFAULT_SWEEP_CALLS, cp["window"]
            ),
        }
        result["labels"]["caseStudy"] = MODELLED
    result["sources"]["caseStudy"] = case_ref["source"]
    if study.published is not None:
        result["sources"]["published"] = {
            "source": study.published.source,
            "model": study.published.model,
            "kind": REPORTED,
            **({"reference": study.published.reference} if study.published.reference else {}),
        }
        result["labels"]["published"] = REPORTED
        result |= published_blocks(study, recorded, rows, p["encoding"])
    fitted = result.get("sensitivity", {}).get("bestFit", {}).get("profile")
    result["verdict"] = counted_verdict(study, recorded, rows, p["encoding"], fitted)
    against = verdict.beside_published(study, recorded, result["verdict"], p["encoding"])
    if against:
        result["savingAgainstPublished"] = against
    result |= await context_price.build(p, cs, recorded, focus, cp["window"], study, fitted=fitted)
    result["headline"] = headline(result, study.reference, key)
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
    "againstPublished": f"{TIKTOKEN} and {MODELLED} beside {PUBLISHED}",
    "calibration": f"{TIKTOKEN} against {DERIVED}",
    "calibrationSummary": f"{TIKTOKEN} under the profile it names, against {DERIVED}",
    "sensitivity": f"{TIKTOKEN} against {DERIVED}",
    "savingAgainstPublished": f"{TIKTOKEN}, then {MODELLED}, beside {DERIVED} and {PUBLISHED}",
    "headline": f"{TIKTOKEN}, then {MODELLED} (client profile in labels)",
    "verdict": f"{TIKTOKEN}, then {MODELLED} (client profiles named)",
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
NOT_FIGURES = ("focusCase", "labels", "method", "sources", "priceLibrary", "pricing", "study")


def shape_statement(result: dict[str, Any]) -> str:
    """Where each design's difference from the reference comes from, for the focus case: whether it starts lighter
    (its first request), whether its largest result is bigger than the reference's largest, and how many model calls
    it makes; each part said as it is found, with its numbers (tiktoken-estimated)."""
    case, ref = result["focusCase"], result["study"]["reference"]
    key = result["study"]["key"]
    by = {r["design"]: r for r in result["ourServers"] if r[key] == case}
    r0 = by[ref]
    parts = []
    for design, r in by.items():
        if design == ref:
            continue
        lighter = "starts lighter" if r["base"] < r0["base"] else "does not start lighter"
        bigger = max(r["resultTokens"], default=0) > max(r0["resultTokens"], default=0)
        parts.append(
            f"**{design}** {lighter} (first request {r['base']:,} against {r0['base']:,} tokens), its largest result "
            f"is {'bigger' if bigger else 'not bigger'} than the {ref} design's largest "
            f"({max(r['resultTokens'], default=0):,} against {max(r0['resultTokens'], default=0):,}), and it makes "
            f"{r['modelCalls']} model call{'s' if r['modelCalls'] != 1 else ''} against {r0['modelCalls']}"
        )
    return f"For {case}: " + "; ".join(parts) + " (tiktoken-estimated)."
