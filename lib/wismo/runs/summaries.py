"""Summaries of verified runs: per-case rows with scores, medians per design, pass^k, one case's growth."""

from __future__ import annotations

import json
from collections import Counter
from statistics import median
from typing import Any

from wismo.agent.evidence import from_items
from wismo.domain.prompts import instructions_sha256
from wismo.runs import Run, scoring
from wismo.servers import designs


def designs_in(rows: list[dict[str, Any]]) -> list[str]:
    """The designs the rows hold, in registry order."""
    present = {r["design"] for r in rows}
    return [d for d in designs.registered() if d in present]


def transcript_items(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item of a conversation in order: what was sent, then what came back, request by request."""
    items: list[dict[str, Any]] = []
    for request in trace["requests"]:
        items += request["newItems"] + request["output"]
    return items


def case_rows(runs: list[Run]) -> list[dict[str, Any]]:
    """One row per trace: counters, score and summary check."""
    wismo_expectations = scoring.load_expectations()
    rows = []
    for run in runs:
        m = run.manifest
        # A study run carries its cases' expectations; a run that kept wismo's answer contract (wismo's instructions,
        # as every run recorded before manifests carried a study did) is scored against wismo's own where its case
        # has none; a case without either is not scored (passed stays None).
        expectations = m["study"]["expectations"] if m.get("study") else {}
        contract = m["instructionsSha256"] == instructions_sha256()
        for t in run.traces:
            expected = expectations.get(t["orderId"]) or (wismo_expectations.get(t["orderId"]) if contract else None)
            scored = scoring.score(t["answer"], expected) if expected else None
            summary = (t["answer"] or {}).get("customerSummary") if isinstance(t["answer"], dict) else None
            tot = t["totals"]
            rows.append(
                {
                    "run": m["runId"],
                    "backend": m["backend"],
                    "model": m["model"],
                    "design": t["design"],
                    "orderId": t["orderId"],
                    "repetition": t["repetition"],
                    "outcome": t["outcome"],
                    "reason": t.get("reason"),
                    "turns": tot["turns"],
                    "toolCalls": tot["toolCalls"],
                    "resultBytes": tot["resultBytes"],
                    "inputTokens": tot["inputTokens"],
                    "outputTokens": tot["outputTokens"],
                    "totalTokens": tot["inputTokens"] + tot["outputTokens"],
                    "cachedInputTokens": tot["cachedInputTokens"],
                    "wallMs": tot["wallMs"],
                    "modelledElapsedMs": tot.get("modelledElapsedMs"),
                    "tokensAre": m["figures"]["tokens"],
                    "passed": scored["passed"] if scored else None,
                    "failedFields": [k for k, v in scored["fields"].items() if not v["match"]] if scored else [],
                    "summaryFlags": scoring.summary_flags(summary, from_items(transcript_items(t))),
                }
            )
    return rows


def outcomes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """How many conversations ended each way, per design: rows of design, outcome and count (designs in the
    registry's order, then outcomes by count, most first)."""
    counts = Counter((r["design"], r["outcome"]) for r in rows)
    order = {d: i for i, d in enumerate(designs.names())}
    ranked = sorted(counts.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][0], -kv[1], kv[0][1]))
    return [{"design": design, "outcome": outcome, "count": n} for (design, outcome), n in ranked]


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r[key] is not None]
    return median(values) if values else None


ARTICLE_PAIR = ("granular", "focused")


def pair_of(manifests: list[dict[str, Any]]) -> tuple[str, str]:
    """The reference design and the one compared with it: a study run's first two designs, else the article's."""
    study = next((m["study"] for m in manifests if m.get("study")), None)
    return (study["designs"][0], study["designs"][1]) if study and len(study["designs"]) > 1 else ARTICLE_PAIR


def group_pair(group: dict[str, Any]) -> tuple[str, str]:
    """The reference design and the one a report's group of runs compares with it (a study's, else the article's)."""
    return tuple(group["study"]["pair"]) if "study" in group else ARTICLE_PAIR


def change_key(pair: tuple[str, str]) -> str:
    """The name of the compared design's difference against the reference, in %."""
    return f"{pair[1]} vs {pair[0]} %"


def medians(
    rows: list[dict[str, Any]], pair: tuple[str, str] = ARTICLE_PAIR, comparable: bool = True
) -> list[dict[str, Any]]:
    """Medians per design of turns, tool calls, tokens and elapsed time, and the compared design's difference in %
    against the reference (the article's: focused against granular); no difference (None) when the runs are not
    `comparable` (see differences)."""
    keys = (
        "turns",
        "toolCalls",
        "resultBytes",
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "wallMs",
        "modelledElapsedMs",
    )
    per = {d: {k: _median([r for r in rows if r["design"] == d], k) for k in keys} for d in designs_in(rows)}
    out = []
    for k in keys:
        g, f = per.get(pair[0], {}).get(k), per.get(pair[1], {}).get(k)
        change = None if not comparable or g in (None, 0) or f is None else round((f - g) / g * 100, 1)
        out.append({"measure": k, pair[0]: g, pair[1]: f, change_key(pair): change})
    return out


def latency_in_words(model: dict[str, Any] | None) -> str:
    """A run's latency model as a reader reads it: what each request costs in milliseconds, or that there is none."""
    if not model:
        return "none"
    return (
        f"{model['overhead_ms']:g} ms per request + {model['per_input_token_ms']:g} ms per input token + "
        f"{model['per_output_token_ms']:g} ms per output token"
    )


def token_counting(manifest: dict[str, Any]) -> str | None:
    """The client profile a run's token estimates were counted under, when its manifest records one."""
    counting = manifest["figures"].get("tokenCounting")
    return counting["profile"] if counting else None


# What runs of one backend and model must share for their figures to be compared: name -> the property in words.
COMPARED = {
    "repetitions": lambda m: str(m["repetitions"]),
    "latency model": lambda m: latency_in_words(m["latencyModel"]),
}


def differences(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the runs differ in among the properties they must share to be compared (repetitions, latency model,
    and the client profile their tokens were counted under where both record one): each property with every run's
    value; none when they are comparable."""
    out = []
    for name, of in COMPARED.items():
        if len({of(m) for m in manifests}) > 1:
            out.append(
                {
                    "property": name,
                    "runs": [{"run": m["runId"], "design": m["design"], "value": of(m)} for m in manifests],
                }
            )
    profiles = {token_counting(m) for m in manifests} - {None}
    if len(profiles) > 1:
        out.append(
            {
                "property": "token counting profile",
                "runs": [
                    {"run": m["runId"], "design": m["design"], "value": token_counting(m) or "not recorded"}
                    for m in manifests
                ],
            }
        )
    return out


def pass_k(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per design and order: how many repetitions passed, and pass^k (all of them)."""
    out = []
    for design in designs_in(rows):
        for order_id in dict.fromkeys(r["orderId"] for r in rows):
            reps = [
                r["passed"]
                for r in rows
                if r["design"] == design and r["orderId"] == order_id and r["passed"] is not None
            ]
            if reps:
                out.append(
                    {
                        "design": design,
                        "orderId": order_id,
                        "k": len(reps),
                        "passed": sum(reps),
                        "pass^k": scoring.pass_hat_k(reps),
                    }
                )
    return out


def growth(runs: list[Run], order_id: str, repetition: int = 1) -> list[dict[str, Any]]:
    """Input tokens of each model request of one case per design, split into base and per-turn additions."""
    out = []
    for run in runs:
        for t in run.traces:
            if t["orderId"] == order_id and t["repetition"] == repetition and t["requests"]:
                inputs = [r["usage"]["inputTokens"] for r in t["requests"]]
                out.append(
                    {
                        "design": t["design"],
                        "orderId": order_id,
                        "inputs": inputs,
                        "base": inputs[0],
                        "additions": [b - a for a, b in zip(inputs, inputs[1:])],
                    }
                )
    return out


def selected_runs(run_ids: list[str] | None, runs_dir: Any = None) -> list[Any]:
    """The run folders to report: those named, else the newest run of each design, backend and model."""
    from wismo.runs import RUNS, find

    folders = find(runs_dir or RUNS)
    if run_ids:
        by_name = {f.name: f for f in folders}
        missing = [r for r in run_ids if r not in by_name]
        if missing:
            raise FileNotFoundError(f"no run folder named {', '.join(missing)} under {runs_dir or RUNS}")
        return [by_name[r] for r in run_ids]
    newest = {}
    for folder in folders:  # oldest first, so the newest of each kind wins
        backend, design, _ = folder.name.rsplit("-", 2)  # a backend's name may hold a hyphen (openai-chat)
        try:
            model = json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("model")
        except (OSError, ValueError):
            model = None  # loading it will refuse the run and say why
        newest[(backend, design, model)] = folder
    return list(newest.values())


def transcript(runs: list[Run], design: str, order_id: str, repetition: int = 1) -> list[dict[str, Any]]:
    """One conversation as rows: per request, what it newly sent and what came back, with its input tokens."""
    trace = next(
        t
        for run in runs
        for t in run.traces
        if (t["design"], t["orderId"], t["repetition"]) == (design, order_id, repetition)
    )

    def show(item: dict[str, Any]) -> str:
        kind = item.get("type", "message")
        if kind == "function_call":
            return f"call {item['name']}({item['arguments']})"
        if kind == "function_call_output":
            return f"result {item['call_id']}: {len(item['output'].encode())} bytes"
        text = item["content"]
        return f"{item['role']}: {text}"

    return [
        {
            "request": r["index"],
            "input tokens": r["usage"]["inputTokens"],
            "newly sent": "\n".join(show(i) for i in r["newItems"]),
            "model replied": "\n".join(show(i) for i in r["output"]),
        }
        for r in trace["requests"]
    ]


def answer_of(runs: list[Run], design: str, order_id: str, repetition: int = 1) -> str:
    """The final answer of one conversation in prose: its summary where the answer keeps wismo's contract, else the
    model's final text."""
    trace = next(
        t
        for run in runs
        for t in run.traces
        if (t["design"], t["orderId"], t["repetition"]) == (design, order_id, repetition)
    )
    answer = trace["answer"]
    if isinstance(answer, dict) and answer.get("customerSummary"):
        return answer["customerSummary"]
    return trace["answerText"] or (json.dumps(answer) if answer else "no answer")
