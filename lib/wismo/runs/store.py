"""The run format: what a recorded run folder holds, its counters, its verification, and loading verified runs.

A run folder data/runs/<backend>-<design>-<timestamp>/ holds manifest.json and traces/<orderId>-r<k>.json.
Every trace file is covered by a sha256 in the manifest; nothing in a run folder is edited after recording.
Recording runs (through the agent loop) is runs/recording.py; this module knows nothing of the loop.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from wismo.core.errors import WismoError
from wismo.core.jsonfmt import utf8_len
from wismo.core.paths import RUNS
from wismo.domain.prompts import instructions_sha256
from wismo.mcp.servers import designs
from wismo.runs.agent.checks import outcome_problems
from wismo.runs.agent.counters import totals
from wismo.runs.agent.outcomes import BAD_CALL_ID, BUDGETS, CALL_BUDGET, REFUSED_CALLS

if TYPE_CHECKING:
    import jsonschema

from wismo.runs.records import Item, Manifest, RecordedTrace, RunTotals, Totals

SCHEMAS = Path(__file__).parent / "schemas"


IMPORTED = "imported"  # the backend of a run imported from an agent's traces (wismo traces)


class RunInvalid(WismoError):
    """A run folder failed verification; the message lists every problem found."""


@cache
def _schema_file(name: str) -> dict[str, object]:
    return cast("dict[str, object]", json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")))


def schema(name: str, study_designs: list[str] | None = None) -> dict[str, object]:
    """A JSON Schema of the run format ('manifest' or 'trace'); a run's design must be a registered one, or for a
    run of a study one of the study's designs."""
    value = json.loads(json.dumps(_schema_file(name)))
    value["properties"]["design"]["enum"] = list(study_designs) if study_designs else list(designs.names())
    return cast("dict[str, object]", value)


def file_name(key: str) -> str:
    """A case key as part of a trace file's name in a run: a study's keys may hold spaces, slashes or anything else."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key).strip("._")[:60] or "case"


def sha256(data: bytes) -> str:
    """The hex sha256 of bytes, as the manifest records it."""
    return hashlib.sha256(data).hexdigest()


class Counted(TypedDict):
    """A trace's counters alone (`totals`), as a run's totals are summed from them; a whole trace is one too."""

    totals: Totals


def sum_totals(traces: Sequence[Counted]) -> RunTotals:
    """Run totals: the sum of every trace's counters."""
    return {
        "cases": len(traces),
        "turns": sum(t["totals"]["turns"] for t in traces),
        "toolCalls": sum(t["totals"]["toolCalls"] for t in traces),
        "inputTokens": sum(t["totals"]["inputTokens"] for t in traces),
        "outputTokens": sum(t["totals"]["outputTokens"] for t in traces),
        "cachedInputTokens": sum(t["totals"]["cachedInputTokens"] for t in traces),
    }


@cache
def _fast(kind: str, study_designs: tuple[str, ...] | None) -> Callable[[object], object]:
    """A schema's fastjsonschema validator, compiled once: it says only whether a value is valid, ten times faster
    than jsonschema, so that a run of thousands of imported conversations is verified in seconds."""
    import fastjsonschema

    return cast("Callable[[object], object]", fastjsonschema.compile(schema(kind, list(study_designs or []) or None)))


@cache
def _named(kind: str, study_designs: tuple[str, ...] | None) -> jsonschema.Draft202012Validator:
    """A schema's jsonschema validator, made once and only for a value found invalid: it names every violation."""
    import jsonschema

    return jsonschema.Draft202012Validator(schema(kind, list(study_designs or []) or None))


def _schema_errors(kind: str, value: object, where: str, study_designs: list[str] | None = None) -> list[str]:
    """Every schema violation of a manifest or trace, each naming the file and the JSON path."""
    import fastjsonschema

    designs_key = tuple(study_designs) if study_designs else None
    try:
        _fast(kind, designs_key)(value)
        return []
    except fastjsonschema.JsonSchemaException:
        pass  # invalid: jsonschema names every violation (a test holds the two validators to the same verdicts)
    named = _named(kind, designs_key)
    return [
        f"{where}: {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in named.iter_errors(value)
    ]


def verify_trace(
    trace: RecordedTrace, where: str, tool_names: list[str] | None = None, contract: bool = True
) -> list[str]:
    """Recompute a trace's counters from its transcript, check call ids pair up exactly once, and check its outcome
    against the transcript (`tool_names`: the tools offered, when known; `contract`: whether the answer had to be
    wismo's JSON object)."""
    problems = []
    expected = totals(trace["requests"], trace["toolCalls"])
    for key, value in expected.items():
        if trace["totals"].get(key) != value:
            problems.append(
                f"{where}: totals.{key} is {trace['totals'].get(key)} but the requests and calls give {value}"
            )
    last = trace["requests"][-1]["index"] if trace["requests"] else 0
    # Results ready when the conversation ended count as sent with the request that never came.
    sent = [(r["index"], r["newItems"]) for r in trace["requests"]] + [(last + 1, trace.get("unsentItems", []))]
    calls: dict[str, tuple[int, Item]] = {}
    outputs: dict[str, tuple[int, str]] = {}
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
                problems.append(
                    f"{where}: toolCalls entry {call_id} says {rec['resultBytes']} bytes but its result has "
                    f"{utf8_len(outputs[call_id][1])}"
                )
    for call_id in recorded.keys() - calls.keys():
        problems.append(f"{where}: toolCalls entry {call_id} answers no call in the transcript")
    return problems + [f"{where}: {p}" for p in outcome_problems(trace, tool_names, contract)]


def verify(folder: str | Path) -> list[str]:
    """Every problem in a run folder: schema, checksums, counters, call ids; empty when the run is sound."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{folder}: manifest.json cannot be read: {exc}"]
    study = manifest.get("study") if isinstance(manifest, dict) else None
    study_designs = study.get("designs") if isinstance(study, dict) and isinstance(study.get("designs"), list) else None
    problems = _schema_errors("manifest", manifest, "manifest.json", study_designs)
    if problems:
        return problems
    listed = {f["path"]: f for f in manifest["files"]}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json"}
    for path in sorted(present - listed.keys()):
        problems.append(f"{path}: in the folder but not covered by the manifest")
    counters: list[
        Counted
    ] = []  # each trace's totals only: a run of many conversations is verified without holding them all
    for path, entry in listed.items():
        file = folder / path
        if not file.exists():
            problems.append(f"{path}: listed in the manifest but missing")
            continue
        data = file.read_bytes()
        if sha256(data) != entry["sha256"]:
            problems.append(f"{path}: sha256 differs from the manifest (the file was changed after recording)")
        try:
            trace = json.loads(data)
        except ValueError as exc:
            problems.append(f"{path}: not JSON: {exc}")
            continue
        errors = _schema_errors("trace", trace, path, study_designs)
        if errors:
            problems += errors
            continue
        if (trace["orderId"], trace["repetition"], trace["design"]) != (
            entry["orderId"],
            entry["repetition"],
            manifest["design"],
        ):
            problems.append(f"{path}: its case does not match the manifest entry")
        # A study's own instructions ask for no JSON object: its answers are any text (wismo's ask for the contract).
        # Imported traces answer in whatever words the traced agent used: no contract applies.
        contract = manifest["backend"] != IMPORTED and (
            study is None or manifest["instructionsSha256"] == instructions_sha256()
        )
        problems += verify_trace(trace, path, [t["name"] for t in manifest["tools"]], contract)
        counters.append({"totals": trace["totals"]})
    if counters and not problems:
        summed = sum_totals(counters)
        for key, value in summed.items():
            if manifest["totals"].get(key) != value:
                problems.append(
                    f"manifest.json: totals.{key} is {manifest['totals'].get(key)} but the traces give {value}"
                )
    return problems


@dataclass(frozen=True)
class Run:
    """A verified run: its manifest and traces."""

    folder: Path
    manifest: Manifest
    traces: list[RecordedTrace]


def load(folder: str | Path) -> Run:
    """Load a run, refusing it (RunInvalid) unless it verifies."""
    folder = Path(folder)
    problems = verify(folder)
    if problems:
        raise RunInvalid(f"{folder.name} does not verify ({len(problems)} problem(s)): " + "; ".join(problems[:10]))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    # Each trace has just been validated against the schema RecordedTrace follows.
    traces = [
        cast(RecordedTrace, json.loads((folder / f["path"]).read_text(encoding="utf-8"))) for f in manifest["files"]
    ]
    return Run(folder, manifest, traces)


def find(runs_dir: str | Path = RUNS) -> list[Path]:
    """Every run folder under data/runs, oldest first."""
    found = (
        p.parent for p in Path(runs_dir).glob("*/manifest.json") if not p.parent.name.startswith(".")
    )  # hidden: a run being built
    return sorted(found, key=lambda p: p.name.rsplit("-", 1)[-1])
