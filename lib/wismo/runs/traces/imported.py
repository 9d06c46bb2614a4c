"""Conversations read from traces as runs in wismo's run format, verified like every run: one run per trace file (its
design named after the file), each conversation a trace with the provider-reported usage of every model call, the
tool calls with their arguments and result sizes where captured, the model and the source file."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from wismo.core import atomic
from wismo.core.errors import InputError
from wismo.core.jsonfmt import stable, utf8_len
from wismo.runs import IMPORTED, RecordedTrace, RunInvalid, sha256, sum_totals, verify
from wismo.runs.agent.counters import totals
from wismo.runs.agent.outcomes import ANSWERED, NO_TRACED_ANSWER
from wismo.runs.records import Item, Manifest, RequestRecord, RequestUsage, RunFile, StudyAbout, ToolCallRecord
from wismo.runs.store import Counted, file_name
from wismo.runs.traces.conventions import messages
from wismo.runs.traces.conversations import TRACE_KEY, Conversation
from wismo.runs.traces.otlp import NOT_JSON, Span, loads

BACKEND = IMPORTED
KEY = "conversation"  # a run's case key when no study names one: the conversation's id
FORMAT = "OTLP JSON (OpenTelemetry traces)"


class NotImportable(RunInvalid, InputError):
    """Traces that cannot be imported as asked (a design or case the study lacks): the message says which."""


def design_of(path: str | Path) -> str:
    """The design a trace file's run is named after: its file name as a design name ([a-z][a-z0-9_]*)."""
    name = re.sub(r"[^a-z0-9_]+", "_", Path(path).stem.lower()).strip("_")
    return name if name[:1].isalpha() else f"traces_{name}"


def _text(captured: list[dict[str, Any]], role: str) -> str | None:
    """The text parts of the messages of one role, joined; None when none was captured."""
    texts: list[str] = [
        p["content"]
        for m in captured
        if m.get("role") == role
        for p in m.get("parts") or ()
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
    ]
    return "\n".join(texts) if texts else None


def _question(captured: list[dict[str, object]]) -> str:
    """The question a conversation asks: the text of the last user message its first request carried (in a session
    of several questions, the earlier ones are history, not this conversation's question); "" when not captured."""
    users = [m for m in captured if m.get("role") == "user"]
    return (_text(users[-1:], "user") or "") if users else ""


def _elapsed_ms(span: Span) -> float:
    return round(max(0, span.end_ns - span.start_ns) / 1e6, 3)


def trace(conversation: Conversation, design: str, case: str, repetition: int) -> RecordedTrace:
    """One conversation as a trace of the run format (wismo.trace/1)."""
    models = conversation.model_calls
    asked: list[list[int]] = [[] for _ in models]
    for i, by in enumerate(conversation.requested_by):
        asked[by].append(i)
    ids: list[str] = []
    for i, call in enumerate(conversation.tool_calls):
        call_id = call.call_id or f"traced_{i + 1}"
        ids.append(call_id if call_id not in ids else f"{call_id}_{i + 1}")
    question = _question(messages(models[0].span.attributes, "gen_ai.input.messages"))
    requests: list[RequestRecord] = []
    tool_calls: list[ToolCallRecord] = []
    pending: list[Item] = [{"type": "message", "role": "user", "content": question}] if question else []
    answer: str | None = None
    for k, model in enumerate(models):
        calls = [(ids[i], conversation.tool_calls[i]) for i in asked[k]]
        output: list[Item] = [
            {"type": "function_call", "name": c.tool, "arguments": c.arguments or "", "call_id": call_id}
            for call_id, c in calls
        ]
        if not calls:
            answer = _text(messages(model.span.attributes, "gen_ai.output.messages"), "assistant") or ""
            output = [{"type": "message", "role": "assistant", "content": answer}]
        usage: RequestUsage = {
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
            entry: ToolCallRecord = {
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
    out: RecordedTrace = {
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
    """The case a conversation is about: the study key's value in its first call's arguments; else its
    gen_ai.conversation.id; else, where no content was captured, its trace's root span's name (an agent's run); else
    its trace id."""
    if key is not None and conversation.tool_calls and conversation.tool_calls[0].arguments:
        try:
            arguments = loads(conversation.tool_calls[0].arguments)
        except NOT_JSON:
            arguments = None
        if isinstance(arguments, dict) and isinstance(arguments.get(key), str):
            return cast("str", arguments[key])
    captured = any(c.arguments is not None for c in conversation.tool_calls)
    unnamed = conversation.key.startswith(TRACE_KEY)  # no gen_ai.conversation.id: only a trace id names it
    return conversation.root if conversation.root and unnamed and not captured else conversation.key


class _Run:
    """One trace file's run while it is written: its hidden folder, its files, its conversations' counters."""

    def __init__(self, source: str, design: str, staging: Path) -> None:
        self.source, self.design, self.staging = source, design, staging
        self.files: list[RunFile] = []
        self.paths: set[str] = set()  # the files' paths, to find a name taken in constant time
        self.counters: list[Counted] = []  # each trace's totals only, for the run's (sum_totals)
        self.seen: Counter[str] = Counter()
        self.models: Counter[str] = Counter()
        self.providers: set[str] = set()
        self.kinds: Counter[str] = Counter()
        self.tools: set[str] = set()
        self.end_ns = 0


class Importer:
    """Runs written one conversation at a time, one per trace file, into hidden folders under `runs_dir`, each moved
    into place only once every run verifies (`close`); `abort` removes them. `study` is the manifest's study block
    (its designs and key) when the traces are of a study, else one is made naming the files as designs."""

    def __init__(self, files: list[str | Path], runs_dir: Path, study: StudyAbout | None = None) -> None:
        self.designs = {str(Path(p)): design_of(p) for p in files}  # as spans name their file (otlp.Span.path)
        files_of: dict[str, list[str]] = {}
        for path, design in self.designs.items():
            files_of.setdefault(design, []).append(path)
        for design, paths in files_of.items():
            if len(paths) > 1:
                raise NotImportable(
                    f"{' and '.join(paths[:2])} both give the design name {design!r}, and a run is named after its "
                    "file: rename one, or write no runs (--no-report without --runs-dir)."
                )
        self.block: StudyAbout = study or {
            "title": "Imported traces",
            "file": Path(files[0]).name,
            "key": KEY,
            "question": "",
            "designs": sorted(set(self.designs.values())),
            "expectations": {},
        }
        self.key = self.block["key"] if study else None
        unknown = sorted(set(self.designs.values()) - set(self.block["designs"]))
        if unknown:
            raise NotImportable(
                f"the trace files name designs {', '.join(unknown)}, none of the study's "
                f"({', '.join(self.block['designs'])})"
            )
        self.runs_dir = runs_dir
        self.runs: dict[str, _Run] = {}

    def add(self, conversation: Conversation) -> None:
        """Write one conversation as a trace of its first file's run."""
        source = conversation.sources[0]
        run = self.runs.get(source)
        if run is None:
            staging = atomic.beside(self.runs_dir / f"{BACKEND}-{self.designs[source]}-{len(self.runs)}")
            (staging / "traces").mkdir()
            run = self.runs[source] = _Run(source, self.designs[source], staging)
        case = case_of(conversation, self.key)
        run.seen[case] += 1
        t = trace(conversation, run.design, case, run.seen[case])
        relative = f"traces/{file_name(case)}-r{run.seen[case]}"
        relative += f"-{len(run.files)}.json" if relative + ".json" in run.paths else ".json"
        run.paths.add(relative)
        data = stable(t).encode("utf-8")
        (run.staging / relative).write_bytes(data)
        run.files.append({"path": relative, "sha256": sha256(data), "orderId": case, "repetition": run.seen[case]})
        run.counters.append({"totals": t["totals"]})
        run.models.update(m.model for m in conversation.model_calls)
        run.providers.update(m.provider for m in conversation.model_calls if m.provider)
        run.kinds.update(m.usage_kind for m in conversation.model_calls)
        run.tools.update(c.tool for c in conversation.tool_calls)
        run.end_ns = max([run.end_ns, *(m.span.end_ns for m in conversation.model_calls)])

    def finish(self) -> list[tuple[Path, Path]]:
        """Write each run's manifest and verify every run; each run's hidden folder and the folder it belongs in."""
        final = []
        for run in self.runs.values():
            stamp = datetime.fromtimestamp(run.end_ns // 10**9, UTC)  # span time: the same traces, the same id
            folder = self.runs_dir / f"{BACKEND}-{run.design}-{stamp.strftime('%Y%m%dT%H%M%SZ')}"
            if folder.exists():
                raise NotImportable(
                    f"{folder} exists: these traces were imported before, and runs are never overwritten"
                )
            manifest = _manifest(run, folder.name, stamp, self.block)
            (run.staging / "manifest.json").write_text(stable(manifest), encoding="utf-8")
            problems = verify(run.staging)
            if problems:
                raise RunInvalid(f"the run imported from {run.source} does not verify: " + "; ".join(problems[:5]))
            final.append((run.staging, folder))
        return final

    def close(self) -> list[Path]:
        """Finish, then move every run into place; the run folders."""
        finished = self.finish()
        for staging, folder in finished:
            atomic.put_in_place(staging, folder)
        return [folder for _, folder in finished]

    def abort(self) -> None:
        """Remove every hidden folder not moved into place."""
        for run in self.runs.values():
            shutil.rmtree(run.staging, ignore_errors=True)


def write_runs(conversations: list[Conversation], runs_dir: Path, study: StudyAbout | None = None) -> list[Path]:
    """One verified run per trace file the conversations came from (see Importer)."""
    importer = Importer(list(dict.fromkeys(c.sources[0] for c in conversations)), runs_dir, study)
    try:
        for conversation in conversations:
            importer.add(conversation)
        return importer.close()
    finally:
        importer.abort()


def _manifest(run: _Run, run_id: str, stamp: datetime, study: StudyAbout) -> Manifest:
    return {
        "study": study,
        "schema": "wismo.run/1",
        "runId": run_id,
        "design": run.design,
        "backend": BACKEND,
        "model": run.models.most_common(1)[0][0] or "not traced",
        "server": None,
        "protocolRevision": "not traced",
        "repetitions": max(f["repetition"] for f in run.files),
        "orders": list(dict.fromkeys(f["orderId"] for f in run.files)),
        "createdAt": stamp.isoformat(timespec="seconds"),
        "instructionsSha256": None,
        "toolListSha256": None,
        "tools": [{"name": t, "inputSchema": None} for t in sorted(run.tools)],  # the tools called; schemas untraced
        "budgets": None,
        "latencyModel": None,
        # What the spans say the usage is: provider-reported, unless the agent marked it (wismo's scripted loop does).
        "figures": {"tokens": run.kinds.most_common(1)[0][0], "elapsedMs": "measured", "modelledElapsedMs": None},
        "source": {"format": FORMAT, "file": Path(run.source).name, "providers": sorted(run.providers)},
        "designOrder": [],
        "files": run.files,
        "totals": sum_totals(run.counters),
    }
