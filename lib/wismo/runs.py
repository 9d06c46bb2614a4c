"""Recorded agent runs: record them, the on-disk format, verification, and summaries of verified runs.

A run folder data/runs/<backend>-<design>-<timestamp>/ holds manifest.json and traces/<orderId>-r<k>.json.
Every trace file is covered by a sha256 in the manifest; nothing in a run folder is edited after recording.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from . import designs, prompts
from .agent.base import Backend
from .agent.checks import outcome_problems
from .agent.loop import Budgets, LatencyModel, run_case, totals
from .agent.outcomes import BAD_CALL_ID, BUDGETS, CALL_BUDGET, REFUSED_CALLS
from .harness import connect
from .jsonfmt import stable, utf8_len
from .paths import DATA
from .servers.protocol import PINNED_REVISION

RUNS = DATA / "runs"
STAGING_PREFIX = ".recording-"  # a run being recorded; never read as a run, removed unless the run verifies
SCHEMAS = Path(__file__).parent / "schemas"


class RunInvalid(Exception):
    """A run folder failed verification; the message lists every problem found."""


@lru_cache(maxsize=None)
def _schema_file(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def schema(name: str) -> dict[str, Any]:
    """A JSON Schema of the run format ('manifest' or 'trace'); a run's design must be a registered one."""
    value = json.loads(json.dumps(_schema_file(name)))
    value["properties"]["design"]["enum"] = list(designs.names())
    return value


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sum_totals(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """Run totals: the sum of every trace's counters."""
    keys = ("turns", "toolCalls", "inputTokens", "outputTokens", "cachedInputTokens")
    return {"cases": len(traces), **{k: sum(t["totals"][k] for t in traces) for k in keys}}


@dataclass
class _Recording:
    """One design's run folder while it is being recorded."""

    design: str
    folder: Path
    tools: list[dict[str, Any]]
    traces: list[dict[str, Any]]
    files: list[dict[str, Any]]


def _write_trace(rec: _Recording, trace: dict[str, Any]) -> None:
    """Write one trace file and note its checksum for the manifest."""
    relative = f"traces/{trace['orderId']}-r{trace['repetition']}.json"
    data = stable(trace).encode("utf-8")
    path = rec.folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    rec.files.append({"path": relative, "sha256": _sha256(data), "orderId": trace["orderId"], "repetition": trace["repetition"]})
    rec.traces.append(trace)


def check_request(design_names: list[str], repetitions: int, orders: list[str]) -> None:
    """Raise ValueError, in one sentence, when a run could not be recorded as asked (before anything is written)."""
    from .domain import ORDER, load

    known_designs = designs.names()
    unknown = [d for d in design_names if d not in known_designs]
    if unknown or not design_names or len(set(design_names)) < len(design_names):
        raise ValueError(f"designs must be registered ones ({', '.join(known_designs)}), each once, not {', '.join(design_names) or 'none'}")
    if repetitions < 1:
        raise ValueError(f"repetitions must be at least 1, not {repetitions}")
    if not orders:
        raise ValueError("give at least one order id to record")
    twice = sorted({o for o in orders if orders.count(o) > 1})
    if twice:
        raise ValueError(f"order {', '.join(twice)} is listed more than once; each order is recorded once per repetition")
    known = load().ids(ORDER)
    missing = [o for o in orders if o not in known]
    if missing:
        raise ValueError(f"no order {', '.join(missing)} in the dataset (its orders are {', '.join(known[:8])}"
                         f"{' and more' if len(known) > 8 else ''})")


def _manifest(rec: _Recording, run_id: str, backend: Backend, repetitions: int, orders: list[str], budgets: Budgets,
              latency: LatencyModel | None, design_order: list[dict[str, Any]], created: datetime) -> dict[str, Any]:
    """What was run, how, what its figures are, and a checksum of every trace; never a key."""
    return {
        "schema": "wismo.run/1",
        "runId": run_id,
        "design": rec.design,
        "backend": backend.name,
        "model": backend.model,
        # Host, port and the model ids the server's answers named (None for a backend without a server).
        "server": getattr(backend, "server", None),
        "protocolRevision": PINNED_REVISION,
        "repetitions": repetitions,
        "orders": orders,
        "createdAt": created.isoformat(timespec="seconds"),
        "instructionsSha256": prompts.instructions_sha256(),
        "toolListSha256": _sha256(stable(rec.tools).encode("utf-8")),
        "tools": rec.tools,
        "budgets": {"maxTurns": budgets.max_turns, "maxToolCalls": budgets.max_tool_calls},
        "latencyModel": latency.as_dict() if latency else None,
        "figures": {"tokens": backend.token_label, "elapsedMs": "measured",
                    "modelledElapsedMs": "modelled" if latency else None},
        "designOrder": design_order,
        "files": rec.files,
        "totals": _sum_totals(rec.traces),
    }


async def evaluate(
    designs: list[str],
    repetitions: int,
    backend: Backend,
    orders: list[str],
    runs_dir: Path = RUNS,
    budgets: Budgets = Budgets(),
    latency: LatencyModel | None = None,
    progress: Any = None,
    now: datetime | None = None,
) -> list[Path]:
    """Record `repetitions` fresh conversations per order for each design; return the run folders.

    With both designs, each (order, repetition) pair runs both, and which goes first alternates between pairs.
    Recording goes into hidden folders under runs_dir, moved into place only once every run verifies: a backend
    that stops the run, an interruption or a run that does not verify leaves nothing behind.
    """
    check_request(designs, repetitions, orders)
    created = now or datetime.now(timezone.utc)
    stamp = created.strftime("%Y%m%dT%H%M%SZ")
    final = {d: runs_dir / f"{backend.name}-{d}-{stamp}" for d in designs}
    for folder in final.values():
        if folder.exists():
            raise FileExistsError(f"{folder} exists; recorded runs are never overwritten")
    recordings: dict[str, _Recording] = {}
    design_order = []
    try:
        async with AsyncExitStack() as stack:
            conns = {d: await stack.enter_async_context(connect(d)) for d in designs}  # one server per design
            for design in designs:
                staging = runs_dir / f"{STAGING_PREFIX}{final[design].name}"
                staging.mkdir(parents=True)
                recordings[design] = _Recording(design, staging, await conns[design].list_tools(), [], [])
            pair = 0
            for order_id in orders:
                for rep in range(1, repetitions + 1):
                    sequence = designs if pair % 2 == 0 else list(reversed(designs))
                    design_order.append({"orderId": order_id, "repetition": rep, "first": sequence[0]})
                    pair += 1
                    for design in sequence:
                        rec = recordings[design]
                        trace = await run_case(backend, conns[design], rec.tools, order_id, budgets, latency)
                        trace = {"schema": "wismo.trace/1", "design": design, "repetition": rep, **trace}
                        _write_trace(rec, trace)
                        if progress is not None:
                            progress.update(1)
        for design, rec in recordings.items():
            manifest = _manifest(rec, final[design].name, backend, repetitions, orders, budgets, latency,
                                 design_order if len(designs) > 1 else [], created)
            (rec.folder / "manifest.json").write_text(stable(manifest), encoding="utf-8")
        for design, rec in recordings.items():
            problems = verify(rec.folder)
            if problems:
                raise RunInvalid(f"the {design} run just recorded does not verify, so nothing was kept: " + "; ".join(problems[:10]))
        for design, rec in recordings.items():
            rec.folder.rename(final[design])
    finally:
        for rec in recordings.values():
            if rec.folder.exists():
                shutil.rmtree(rec.folder, ignore_errors=True)
    return [final[d] for d in designs]


def _schema_errors(kind: str, value: Any, where: str) -> list[str]:
    """Every schema violation of a manifest or trace, each naming the file and the JSON path."""
    validator = jsonschema.Draft202012Validator(schema(kind))
    return [f"{where}: {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(value)]


def verify_trace(trace: dict[str, Any], where: str, tool_names: list[str] | None = None) -> list[str]:
    """Recompute a trace's counters from its transcript, check call ids pair up exactly once, and check its outcome
    against the transcript (`tool_names`: the tools offered, when known)."""
    problems = []
    expected = totals(trace["requests"], trace["toolCalls"])
    for key, value in expected.items():
        if trace["totals"].get(key) != value:
            problems.append(f"{where}: totals.{key} is {trace['totals'].get(key)} but the requests and calls give {value}")
    last = trace["requests"][-1]["index"] if trace["requests"] else 0
    # Results ready when the conversation ended count as sent with the request that never came.
    sent = [(r["index"], r["newItems"]) for r in trace["requests"]] + [(last + 1, trace.get("unsentItems", []))]
    calls, outputs = {}, {}
    for index, items in sent:
        for item in items:
            if item.get("type") == "function_call_output":
                if item["call_id"] in outputs:
                    problems.append(f"{where}: call id {item['call_id']} has more than one result")
                outputs[item["call_id"]] = (index, item["output"])
    for request in trace["requests"]:
        for item in request["output"]:
            if item.get("type") == "function_call":
                # A reused id is the recorded reason itself when the conversation ended on it, in its last reply.
                if item["call_id"] in calls and not (trace["outcome"] == BAD_CALL_ID and request["index"] == last):
                    problems.append(f"{where}: call id {item['call_id']} is used by more than one call")
                calls.setdefault(item["call_id"], (request["index"], item))
    # Calls of the last reply may be unrun (a call budget or a refused call) or, in traces recorded before
    # unsentItems existed, run with their results unsent (a turn or token budget).
    unrun_allowed = (CALL_BUDGET, *REFUSED_CALLS) + (() if "unsentItems" in trace else BUDGETS)
    for call_id, (index, item) in calls.items():
        if call_id not in outputs:
            if not (trace["outcome"] in unrun_allowed and index == last):
                problems.append(f"{where}: call id {call_id} ({item['name']}) has no result")
        elif outputs[call_id][0] <= index:
            problems.append(f"{where}: the result of call id {call_id} was sent before the call was made")
    for call_id in outputs.keys() - calls.keys():
        problems.append(f"{where}: result for call id {call_id} answers no call (orphaned)")
    recorded = {c["callId"]: c for c in trace["toolCalls"]}
    if len(recorded) != len(trace["toolCalls"]):
        problems.append(f"{where}: toolCalls lists a call id more than once")
    for call_id, (index, item) in calls.items():
        rec = recorded.get(call_id)
        if call_id in outputs and rec is None:
            problems.append(f"{where}: call id {call_id} was run but is missing from toolCalls")
        elif rec is not None:
            if (rec["name"], rec["arguments"], rec["request"]) != (item["name"], item["arguments"], index):
                problems.append(f"{where}: toolCalls entry {call_id} does not match the call in request {index}")
            if call_id in outputs and rec["resultBytes"] != utf8_len(outputs[call_id][1]):
                problems.append(f"{where}: toolCalls entry {call_id} says {rec['resultBytes']} bytes but its result has {utf8_len(outputs[call_id][1])}")
    for call_id in recorded.keys() - calls.keys():
        problems.append(f"{where}: toolCalls entry {call_id} answers no call in the transcript")
    return problems + [f"{where}: {p}" for p in outcome_problems(trace, tool_names)]


def verify(folder: str | Path) -> list[str]:
    """Every problem in a run folder: schema, checksums, counters, call ids; empty when the run is sound."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{folder}: manifest.json cannot be read: {exc}"]
    problems = _schema_errors("manifest", manifest, "manifest.json")
    if problems:
        return problems
    listed = {f["path"]: f for f in manifest["files"]}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json"}
    for path in sorted(present - listed.keys()):
        problems.append(f"{path}: in the folder but not covered by the manifest")
    traces = []
    for path, entry in listed.items():
        file = folder / path
        if not file.exists():
            problems.append(f"{path}: listed in the manifest but missing")
            continue
        data = file.read_bytes()
        if _sha256(data) != entry["sha256"]:
            problems.append(f"{path}: sha256 differs from the manifest (the file was changed after recording)")
        try:
            trace = json.loads(data)
        except ValueError as exc:
            problems.append(f"{path}: not JSON: {exc}")
            continue
        errors = _schema_errors("trace", trace, path)
        if errors:
            problems += errors
            continue
        if (trace["orderId"], trace["repetition"], trace["design"]) != (entry["orderId"], entry["repetition"], manifest["design"]):
            problems.append(f"{path}: its case does not match the manifest entry")
        problems += verify_trace(trace, path, [t["name"] for t in manifest["tools"]])
        traces.append(trace)
    if traces and not problems:
        summed = _sum_totals(traces)
        for key, value in summed.items():
            if manifest["totals"].get(key) != value:
                problems.append(f"manifest.json: totals.{key} is {manifest['totals'].get(key)} but the traces give {value}")
    return problems


@dataclass(frozen=True)
class Run:
    """A verified run: its manifest and traces."""

    folder: Path
    manifest: dict[str, Any]
    traces: list[dict[str, Any]]


def load(folder: str | Path) -> Run:
    """Load a run, refusing it (RunInvalid) unless it verifies."""
    folder = Path(folder)
    problems = verify(folder)
    if problems:
        raise RunInvalid(f"{folder.name} does not verify ({len(problems)} problem(s)): " + "; ".join(problems[:10]))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    traces = [json.loads((folder / f["path"]).read_text(encoding="utf-8")) for f in manifest["files"]]
    return Run(folder, manifest, traces)


def find(runs_dir: str | Path = RUNS) -> list[Path]:
    """Every run folder under data/runs, oldest first."""
    found = (p.parent for p in Path(runs_dir).glob("*/manifest.json") if not p.parent.name.startswith(STAGING_PREFIX))
    return sorted(found, key=lambda p: p.name.rsplit("-", 1)[-1])
