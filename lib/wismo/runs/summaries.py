"""Summaries of verified runs: per-case rows with scores, medians per design, pass^k, one case's growth."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from statistics import median
from typing import Literal, TypedDict, cast

from wismo.domain.prompts import instructions_sha256
from wismo.mcp.servers import designs
from wismo.runs import RecordedTrace, Run, scoring
from wismo.runs.agent.evidence import from_items
from wismo.runs.records import Item, Manifest


class CaseRow(TypedDict):
    """One conversation of a run as the summaries count it (case_rows): its run, design, case and repetition, how it
    ended, its counters, and its score and summary check."""

    run: str
    backend: str
    model: str
    design: str
    case: str
    repetition: int
    outcome: str
    reason: str | None
    turns: int
    toolCalls: int
    resultBytes: int
    inputTokens: int
    outputTokens: int
    totalTokens: int
    cachedInputTokens: int
    wallMs: float
    modelledElapsedMs: float | None
    tokensAre: str
    passed: bool | None
    failedFields: list[str]
    summaryFlags: list[str]


class Growth(TypedDict):
    """One design's conversation of one case (growth): the input tokens of each model request, the first request's,
    and what each later request added."""

    design: str
    case: str
    inputs: list[int]
    base: int
    additions: list[int]


def designs_in(rows: Sequence[CaseRow], order: list[str] | None = None) -> list[str]:
    """The designs the rows hold: in `order` (a study's designs) first, then in registry order, then as they come."""
    present = list(dict.fromkeys(r["design"] for r in rows))
    ranked = [*(order or []), *(d for d in designs.registered() if d not in (order or []))]
    return [d for d in ranked if d in present] + [d for d in present if d not in ranked]


def transcript_items(trace: RecordedTrace) -> list[Item]:
    """Every item of a conversation in order: what was sent, then what came back, request by request."""
    items: list[Item] = []
    for request in trace["requests"]:
        items += request["newItems"] + request["output"]
    return items


def case_rows(runs: list[Run]) -> list[CaseRow]:
    """One row per trace, its case under the neutral key "case": counters, score and summary check."""
    wismo_expectations = scoring.load_expectations()
    rows: list[CaseRow] = []
    for run in runs:
        m = run.manifest
        # A study run carries its cases' expectations; a run that kept wismo's answer contract (wismo's instructions,
        # as every run recorded before manifests carried a study did) is scored against wismo's own where its case
        # has none; a case without either is not scored (passed stays None).
        expectations = m["study"]["expectations"] if m.get("study") else {}
        contract = m["instructionsSha256"] == instructions_sha256()
        for t in run.traces:
            # orderId is the run format's name for a trace's case key (format wismo.run/1, kept for shipped runs).
            case = t["orderId"]
            expected = expectations.get(case) or (wismo_expectations.get(case) if contract else None)
            scored = scoring.score(t["answer"], expected) if expected else None
            summary = (t["answer"] or {}).get("customerSummary") if isinstance(t["answer"], dict) else None
            tot = t["totals"]
            rows.append(
                {
                    "run": m["runId"],
                    "backend": m["backend"],
                    "model": m["model"],
                    "design": t["design"],
                    "case": case,
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


def outcomes(rows: Sequence[CaseRow], order: list[str] | None = None) -> list[dict[str, object]]:
    """How many conversations ended each way, per design: rows of design, outcome and count (designs in `order`,
    a study's, else as designs_in ranks them; then outcomes by count, most first)."""
    counts = Counter((r["design"], r["outcome"]) for r in rows)
    rank = {d: i for i, d in enumerate(designs_in(rows, order))}
    ranked = sorted(counts.items(), key=lambda kv: (rank[kv[0][0]], -kv[1], kv[0][1]))
    return [{"design": design, "outcome": outcome, "count": n} for (design, outcome), n in ranked]


def _median(rows: Sequence[CaseRow], key: Measure) -> float | None:
    values = [v for r in rows if (v := r[key]) is not None]
    return median(values) if values else None


def change_key(design: str, reference: str) -> str:
    """The name of one design's difference against the reference, in %."""
    return f"{design} vs {reference} %"


Measure = Literal[
    "turns", "toolCalls", "resultBytes", "inputTokens", "outputTokens", "totalTokens", "wallMs", "modelledElapsedMs"
]
MEASURES: tuple[Measure, ...] = (
    "turns",
    "toolCalls",
    "resultBytes",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "wallMs",
    "modelledElapsedMs",
)


def medians(
    rows: Sequence[CaseRow], reference: str, order: list[str] | None = None, comparable: bool = True
) -> list[dict[str, object]]:
    """Per measure (turns, tool calls, bytes, tokens, elapsed time): the median of each design (the reference
    first, then the others the rows hold, in `order`), and each other design's difference in % against the
    reference; no difference (None) when the runs are not `comparable` (see differences)."""
    shown = [reference, *(d for d in designs_in(rows, order) if d != reference)]
    per = {d: {k: _median([r for r in rows if r["design"] == d], k) for k in MEASURES} for d in shown}
    out = []
    for k in MEASURES:
        ref = per[reference][k]
        row: dict[str, object] = {"measure": k, **{d: per[d][k] for d in shown}}
        for d in shown[1:]:
            value = per[d][k]
            row[change_key(d, reference)] = (
                None if not comparable or ref in (None, 0) or value is None else round((value - ref) / ref * 100, 1)
            )
        out.append(row)
    return out


def latency_in_words(model: Mapping[str, object] | None) -> str:
    """A run's latency model as a reader reads it: what each request costs in milliseconds, or that there is none."""
    if not model:
        return "none"
    return (
        f"{model['overhead_ms']:g} ms per request + {model['per_input_token_ms']:g} ms per input token + "
        f"{model['per_output_token_ms']:g} ms per output token"
    )


def token_counting(manifest: Manifest) -> str | None:
    """The client profile a run's token estimates were counted under, when its manifest records one."""
    counting = manifest["figures"].get("tokenCounting")
    return counting["profile"] if counting else None


# What runs of one backend and model must share for their figures to be compared: name -> the property in words.
COMPARED: dict[str, Callable[[Manifest], str]] = {
    "repetitions": lambda m: str(m["repetitions"]),
    "latency model": lambda m: latency_in_words(m["latencyModel"]),
}


def differences(manifests: list[Manifest]) -> list[dict[str, object]]:
    """What the runs differ in among the properties they must share to be compared (repetitions, latency model,
    and the client profile their tokens were counted under where both record one): each property with every run's
    value; none when they are comparable."""
    out: list[dict[str, object]] = []
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


def pass_k(rows: Sequence[CaseRow], order: list[str] | None = None) -> list[dict[str, object]]:
    """Per design (in `order`, a study's) and case: how many repetitions passed, and pass^k (all of them)."""
    out = []
    for design in designs_in(rows, order):
        for case in dict.fromkeys(r["case"] for r in rows):
            reps = [p for r in rows if r["design"] == design and r["case"] == case and (p := r["passed"]) is not None]
            if reps:
                out.append(
                    {
                        "design": design,
                        "case": case,
                        "k": len(reps),
                        "passed": sum(reps),
                        "pass^k": scoring.pass_hat_k(reps),
                    }
                )
    return out


def growth(runs: list[Run], case: str, repetition: int = 1) -> list[Growth]:
    """Input tokens of each model request of one case per design, split into base and per-turn additions."""
    out: list[Growth] = []
    for run in runs:
        for t in run.traces:
            if t["orderId"] == case and t["repetition"] == repetition and t["requests"]:
                inputs = [r["usage"]["inputTokens"] for r in t["requests"]]
                out.append(
                    {
                        "design": t["design"],
                        "case": case,
                        "inputs": inputs,
                        "base": inputs[0],
                        "additions": [b - a for a, b in zip(inputs, inputs[1:])],
                    }
                )
    return out


def selected_runs(run_ids: list[str] | None, runs_dir: str | Path | None = None) -> list[Path]:
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


def transcript(runs: list[Run], design: str, case: str, repetition: int = 1) -> list[dict[str, object]]:
    """One conversation as rows: per request, what it newly sent and what came back, with its input tokens."""
    trace = next(
        t
        for run in runs
        for t in run.traces
        if (t["design"], t["orderId"], t["repetition"]) == (design, case, repetition)
    )

    def show(item: Item) -> str:
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


def answer_of(runs: list[Run], design: str, case: str, repetition: int = 1) -> str:
    """The final answer of one conversation in prose: its summary where the answer keeps wismo's contract, else the
    model's final text."""
    trace = next(
        t
        for run in runs
        for t in run.traces
        if (t["design"], t["orderId"], t["repetition"]) == (design, case, repetition)
    )
    answer = trace["answer"]
    if isinstance(answer, dict) and answer.get("customerSummary"):
        return cast("str", answer["customerSummary"])
    return trace["answerText"] or (json.dumps(answer) if answer else "no answer")
