"""Recording agent runs: each design's conversations through the agent loop, written in the run format
(lib/wismo/runs.py) into a hidden folder that is moved into data/runs only once it verifies."""

from __future__ import annotations

import shutil
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from wismo.core import atomic
from wismo.core.errors import InputError
from wismo.core.jsonfmt import stable
from wismo.core.revision import PINNED_REVISION
from wismo.domain import prompts
from wismo.runs import RUNS, RecordedTrace, RunInvalid, sha256, sum_totals, verify
from wismo.runs.agent.backends import conversing
from wismo.runs.agent.base import Backend
from wismo.runs.agent.loop import Budgets, LatencyModel, run_case
from wismo.runs.records import Figures, Manifest, RunFile, StudyAbout
from wismo.runs.store import file_name
from wismo.studies.declaration import Study
from wismo.studies.investigations import prompt as prompt_for
from wismo.studies.servers import reach


@dataclass
class _Recording:
    """One design's run folder while it is being recorded."""

    design: str
    folder: Path
    tools: list[dict[str, object]]
    traces: list[RecordedTrace]
    files: list[RunFile]


class Progress(Protocol):
    """What recording tells of its progress (a tqdm bar): one more conversation done."""

    def update(self, n: float = 1) -> object:
        """Advance by `n` steps."""
        ...


def _write_trace(rec: _Recording, trace: RecordedTrace) -> None:
    """Write one trace file and note its checksum for the manifest."""
    stem = f"traces/{file_name(trace['orderId'])}-r{trace['repetition']}"
    taken = {f["path"] for f in rec.files}
    relative = next(
        p for p in (f"{stem}{'' if i == 0 else f'-{i}'}.json" for i in range(len(taken) + 1)) if p not in taken
    )
    data = stable(trace).encode("utf-8")
    path = rec.folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    rec.files.append(
        {"path": relative, "sha256": sha256(data), "orderId": trace["orderId"], "repetition": trace["repetition"]}
    )
    rec.traces.append(trace)


def check_request(design_names: list[str], repetitions: int, case_keys: list[str], study: Study) -> None:
    """Raise ValueError, in one sentence, when a run could not be recorded as asked (before anything is written)."""
    known_designs = list(study.designs)
    unknown = [d for d in design_names if d not in known_designs]
    if unknown or not design_names or len(set(design_names)) < len(design_names):
        asked = ", ".join(design_names) or "none"
        raise InputError(f"designs must be the study's ({', '.join(known_designs)}), each once, not {asked}")
    if repetitions < 1:
        raise InputError(f"repetitions must be at least 1, not {repetitions}")
    if not case_keys:
        raise InputError("give at least one case to record")
    twice = sorted({o for o in case_keys if case_keys.count(o) > 1})
    if twice:
        raise InputError(f"case {', '.join(twice)} is listed more than once; each case is recorded once per repetition")
    study.select(case_keys, unfriendly=False)  # UnknownCase (a ValueError) names any key that is not a case


def _manifest(
    rec: _Recording,
    run_id: str,
    backend: Backend,
    repetitions: int,
    case_keys: list[str],
    budgets: Budgets,
    latency: LatencyModel | None,
    design_order: list[dict[str, object]],
    created: datetime,
    study: Study,
) -> Manifest:
    """What was run, how, what its figures are, and a checksum of every trace; never a key."""
    figures: Figures = {
        "tokens": backend.token_label,
        "elapsedMs": "measured",
        "modelledElapsedMs": "modelled" if latency else None,
    }
    if counting := getattr(backend, "token_counting", None):
        figures["tokenCounting"] = counting
    return {
        "study": about(study),
        "schema": "wismo.run/1",
        "runId": run_id,
        "design": rec.design,
        "backend": backend.name,
        "model": backend.model,
        # Host, port and the model ids the server's answers named (None for a backend without a server).
        "server": getattr(backend, "server", None),
        "protocolRevision": PINNED_REVISION,
        "repetitions": repetitions,
        "orders": case_keys,
        "createdAt": created.isoformat(timespec="seconds"),
        "instructionsSha256": sha256(study.instructions.encode("utf-8")),
        "toolListSha256": sha256(stable(rec.tools).encode("utf-8")),
        "tools": rec.tools,
        "budgets": {"maxTurns": budgets.max_turns, "maxToolCalls": budgets.max_tool_calls},
        "latencyModel": latency.as_dict() if latency else None,
        "figures": figures,
        "designOrder": design_order,
        "files": rec.files,
        "totals": sum_totals(rec.traces),
    }


def about(study: Study) -> StudyAbout:
    """What a study run's manifest says of the study: title, file, case key, question, designs, and the answers its
    cases expect (the five-field scorer applies to those cases only)."""
    return {
        "title": study.title,
        "file": study.path.name,
        "key": study.key,
        "question": study.question,
        "designs": list(study.designs),
        "expectations": {study.case_key(c): c.expect for c in study.cases if c.expect},
    }


async def evaluate(
    design_names: list[str],
    repetitions: int,
    backend: Backend,
    case_keys: list[str],
    study: Study,
    runs_dir: str | Path = RUNS,
    budgets: Budgets = Budgets(),
    latency: LatencyModel | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
) -> list[Path]:
    """Record `repetitions` fresh conversations per case (`case_keys`: the study's case keys) for each design of the
    study; return the run folders.

    With several designs, each (case, repetition) runs every one, and which goes first alternates between pairs.
    Recording goes into hidden folders under runs_dir, moved into place only once every run verifies: a backend
    that stops the run, an interruption or a run that does not verify leaves nothing behind. Each design's server
    is reached as the study declares it, with the study's question and instructions; a scripted backend follows
    each design's declared investigation.
    """
    check_request(design_names, repetitions, case_keys, study)
    runs_dir = Path(runs_dir)
    created = now or datetime.now(UTC)
    stamp = created.strftime("%Y%m%dT%H%M%SZ")
    final = {d: runs_dir / f"{backend.name}-{d}-{stamp}" for d in design_names}
    for folder in final.values():
        if folder.exists():
            raise FileExistsError(f"{folder} exists; recorded runs are never overwritten")
    recordings: dict[str, _Recording] = {}
    design_order: list[dict[str, object]] = []
    try:
        async with AsyncExitStack() as stack:
            conns = {d: await stack.enter_async_context(reach(study.designs[d])) for d in design_names}
            cases = {study.case_key(c): c for c in study.cases}
            contract = study.instructions == prompts.INSTRUCTIONS  # the scripted answer keeps wismo's contract
            for design in design_names:
                staging = atomic.beside(final[design])
                recordings[design] = _Recording(design, staging, await conns[design].list_tools(), [], [])
            pair = 0
            for case_key in case_keys:
                for rep in range(1, repetitions + 1):
                    sequence = design_names if pair % 2 == 0 else list(reversed(design_names))
                    design_order.append({"orderId": case_key, "repetition": rep, "first": sequence[0]})
                    pair += 1
                    for design in sequence:
                        rec = recordings[design]
                        case = cases[case_key]
                        trace = await run_case(
                            conversing(backend, study.designs[design].investigation, case.fields, contract),
                            conns[design],
                            rec.tools,
                            case_key,
                            prompt_for(study, case),
                            budgets,
                            latency,
                            False,
                            contract,
                        )
                        recorded: RecordedTrace = {
                            "schema": "wismo.trace/1",
                            "design": design,
                            "repetition": rep,
                            **trace,
                        }
                        _write_trace(rec, recorded)
                        if progress is not None:
                            progress.update(1)
        for design, rec in recordings.items():
            manifest = _manifest(
                rec,
                final[design].name,
                backend,
                repetitions,
                case_keys,
                budgets,
                latency,
                design_order if len(design_names) > 1 else [],
                created,
                study,
            )
            (rec.folder / "manifest.json").write_text(stable(manifest), encoding="utf-8")
        for design, rec in recordings.items():
            problems = verify(rec.folder)
            if problems:
                raise RunInvalid(
                    f"the {design} run just recorded does not verify, so nothing was kept: " + "; ".join(problems[:10])
                )
        for design, rec in recordings.items():
            atomic.put_in_place(rec.folder, final[design])
    finally:
        for rec in recordings.values():
            if rec.folder.exists():
                shutil.rmtree(rec.folder, ignore_errors=True)
    return [final[d] for d in design_names]
