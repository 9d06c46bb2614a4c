"""Conversations read from traces as runs in wismo's run format, verified like every run: one run per trace file (its
design named after the file), each conversation a trace with the provider-reported usage of every model call, the
tool calls with their arguments and result sizes where captured, the model and the source file."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wismo.agent.counters import totals
from wismo.agent.outcomes import ANSWERED, NO_TRACED_ANSWER
from wismo.core.jsonfmt import stable, utf8_len
from wismo.runs import IMPORTED, STAGING_PREFIX, RunInvalid, sha256, sum_totals, verify
from wismo.traces.conventions import ModelCall
from wismo.traces.conversations import Conversation

BACKEND = IMPORTED
KEY = "conversation"  # a run's case key when no study names one: the conversation's id
FORMAT = "OTLP JSON (OpenTelemetry traces)"


class NotImportable(RunInvalid, ValueError):
    """Traces that cannot be imported as asked (a design or case the study lacks): the message says which."""


def design_of(path: str | Path) -> str:
    """The design a trace file's run is named after: its file name as a design name ([a-z][a-z0-9_]*)."""
    name = re.sub(r"[^a-z0-9_]+", "_", Path(path).stem.lower()).strip("_")
    return name if name[:1].isalpha() else f"traces_{name}"


def _messages(model: ModelCall, attribute: str) -> list[dict[str, Any]]:
    raw = model.span.attributes.get(attribute)
    try:
        decoded = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return []
    return [m for m in decoded if isinstance(m, dict)] if isinstance(decoded, list) else []


def _text(messages: list[dict[str, Any]], role: str) -> str | None:
    """The text parts of the messages of one role, joined; None when none was captured."""
    texts: list[str] = [
        p["content"]
        for m in messages
        if m.get("role") == role
        for p in m.get("parts") or ()
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
    ]
    return "\n".join(texts) if texts else None


def _elapsed_ms(span: Any) -> float:
    return round(max(0, span.end_ns - span.start_ns) / 1e6, 3)


def trace(conversation: Conversation, design: str, case: str, repetition: int) -> dict[str, Any]:
    """One conversation as a trace of the run format (wismo.trace/1)."""
    models = conversation.model_calls
    asked: list[list[int]] = [[] for _ in models]
    for i, by in enumerate(conversation.requested_by):
        asked[by].append(i)
    ids: list[str] = []
    for i, call in enumerate(conversation.tool_calls):
        call_id = call.call_id or f"traced_{i + 1}"
        ids.append(call_id if call_id not in ids else f"{call_id}_{i + 1}")
    question = _text(_messages(models[0], "gen_ai.input.messages"), "user") or ""
    requests: list[dict[str, Any]] = []
    tool_calls: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": question}] if question else []
    answer: str | None = None
    for k, model in enumerate(models):
        calls = [(ids[i], conversation.tool_calls[i]) for i in asked[k]]
        output = [
            {"type": "function_call", "name": c.tool, "arguments": c.arguments or "", "call_id": call_id}
            for call_id, c in calls
        ]
        if not calls:
            answer = _text(_messages(model, "gen_ai.output.messages"), "assistant") or ""
            output = [{"type": "message", "role": "assistant", "content": answer}]
        usage = {
            "inputTokens": model.input_tokens,
            "outputTokens": model.output_tokens,
            "cachedInputTokens": model.cached_input_tokens,
        }
        requests.append(
            {
                "index": k + 1,
                "newItems": pending,
                "output": output,
                "usage": usage,
                "elapsedMs": _elapsed_ms(model.span),
            }
        )
        pending = [o for o in output if o["type"] == "function_call"]
        for call_id, c in calls:
            pending.append({"type": "function_call_output", "call_id": call_id, "output": c.result or ""})
            entry = {
                "request": k + 1,
                "callId": call_id,
                "name": c.tool,
                "arguments": c.arguments or "",
                "resultBytes": utf8_len(c.result or ""),
                "isError": c.is_error,
                "elapsedMs": _elapsed_ms(c.span),
            }
            if c.arguments is None or c.result is None:
                entry["captured"] = False
            tool_calls.append(entry)
        if not calls:
            break  # an answer ends the conversation; later model calls would be another question's
    ended = not requests[-1]["output"] or requests[-1]["output"][0]["type"] == "message"
    first, last = models[0].span, models[len(requests) - 1].span
    out: dict[str, Any] = {
        "schema": "wismo.trace/1",
        "design": design,
        "orderId": case,
        "repetition": repetition,
        "question": question,
        "requests": requests,
        "toolCalls": tool_calls,
        "outcome": ANSWERED if ended else NO_TRACED_ANSWER,
        "reason": None
        if ended
        else f"The trace ends after request {len(requests)} asked for tool calls; no later model call was traced.",
        "unsentItems": [] if ended else pending,
        "answerText": answer if ended else None,
        "answer": None,
        "totals": totals(requests, tool_calls, (last.end_ns - first.start_ns) / 1e6),
    }
    return out


def case_of(conversation: Conversation, key: str | None) -> str:
    """The case a conversation is about: the study key's value in its first call's arguments, else its id."""
    if key is not None and conversation.tool_calls and conversation.tool_calls[0].arguments:
        try:
            arguments = json.loads(conversation.tool_calls[0].arguments)
        except json.JSONDecodeError:
            arguments = None
        if isinstance(arguments, dict) and isinstance(arguments.get(key), str):
            return arguments[key]
    return conversation.key


def _stamp(conversations: list[Conversation]) -> datetime:
    """When the run's conversations ended (span time), so the same traces give the same run id."""
    end = max(m.span.end_ns for c in conversations for m in c.model_calls)
    return datetime.fromtimestamp(end // 10**9, UTC)


def write_runs(conversations: list[Conversation], runs_dir: Path, study: dict[str, Any] | None = None) -> list[Path]:
    """One verified run per trace file under `runs_dir` (each moved into place only once it verifies); `study` is
    the manifest's study block (its designs and key) when the traces are of a study, else one is made."""
    by_file: dict[str, list[Conversation]] = defaultdict(list)
    for conversation in conversations:
        by_file[conversation.sources[0]].append(conversation)
    designs = {path: design_of(path) for path in by_file}
    if len(set(designs.values())) < len(designs):
        raise NotImportable("two trace files give one design name; rename one (a run is named after its file)")
    block = study or {
        "title": "Imported traces",
        "file": Path(next(iter(by_file))).name,
        "key": KEY,
        "question": "",
        "designs": sorted(designs.values()),
        "expectations": {},
    }
    unknown = sorted(set(designs.values()) - set(block["designs"]))
    if unknown:
        raise NotImportable(
            f"the trace files name designs {', '.join(unknown)}, none of the study's ({', '.join(block['designs'])})"
        )
    written = []
    staged = []
    try:
        for path, group in sorted(by_file.items()):
            design = designs[path]
            stamp = _stamp(group)
            folder = runs_dir / f"{BACKEND}-{design}-{stamp.strftime('%Y%m%dT%H%M%SZ')}"
            if folder.exists():
                raise NotImportable(
                    f"{folder} exists: these traces were imported before, and runs are never overwritten"
                )
            staging = runs_dir / f"{STAGING_PREFIX}{folder.name}"
            shutil.rmtree(staging, ignore_errors=True)
            (staging / "traces").mkdir(parents=True)
            staged.append((staging, folder))
            traces, files, seen = [], [], Counter[str]()
            for conversation in group:
                case = case_of(conversation, block["key"] if study else None)
                seen[case] += 1
                t = trace(conversation, design, case, seen[case])
                relative = f"traces/{re.sub(r'[^A-Za-z0-9._-]+', '_', case)[:60]}-r{seen[case]}.json"
                data = stable(t).encode("utf-8")
                (staging / relative).write_bytes(data)
                files.append({"path": relative, "sha256": sha256(data), "orderId": case, "repetition": seen[case]})
                traces.append(t)
            manifest = _manifest(group, design, folder.name, stamp, block, files, traces, path)
            (staging / "manifest.json").write_text(stable(manifest), encoding="utf-8")
            problems = verify(staging)
            if problems:
                raise RunInvalid(f"the run imported from {path} does not verify: " + "; ".join(problems[:5]))
        for staging, folder in staged:
            staging.rename(folder)
            written.append(folder)
    finally:
        for staging, _ in staged:
            shutil.rmtree(staging, ignore_errors=True)
    return written


def _manifest(
    group: list[Conversation],
    design: str,
    run_id: str,
    stamp: datetime,
    study: dict[str, Any],
    files: list[dict[str, Any]],
    traces: list[dict[str, Any]],
    source: str,
) -> dict[str, Any]:
    models = Counter(m.model for c in group for m in c.model_calls)
    tools = sorted({t.tool for c in group for t in c.tool_calls})
    return {
        "study": study,
        "schema": "wismo.run/1",
        "runId": run_id,
        "design": design,
        "backend": BACKEND,
        "model": models.most_common(1)[0][0] or "not traced",
        "server": None,
        "protocolRevision": "not traced",
        "repetitions": max(f["repetition"] for f in files),
        "orders": list(dict.fromkeys(f["orderId"] for f in files)),
        "createdAt": stamp.isoformat(timespec="seconds"),
        "instructionsSha256": None,
        "toolListSha256": None,
        "tools": [{"name": t, "inputSchema": None} for t in tools],  # the tools called; their schemas are not traced
        "budgets": None,
        "latencyModel": None,
        "figures": {"tokens": "provider-reported", "elapsedMs": "measured", "modelledElapsedMs": None},
        "source": {
            "format": FORMAT,
            "file": Path(source).name,
            "providers": sorted({m.provider for c in group for m in c.model_calls if m.provider}),
        },
        "designOrder": [],
        "files": files,
        "totals": sum_totals(traces),
    }
