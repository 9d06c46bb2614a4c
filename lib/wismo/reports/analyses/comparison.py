"""The deterministic comparison: every compared design's evidence against the reference design's (granular: its
records followed link by link), case by case, over a real MCP transport."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from wismo.core.clock import CLOCK
from wismo.core.errors import ClaimFailed
from wismo.core.jsonfmt import utf8_len, write_stable
from wismo.core.reading import NoStructuredContent
from wismo.core.revision import PINNED_REVISION
from wismo.core.textgrid import plural
from wismo.domain.ids import MAX_ID_LENGTH
from wismo.mcp.client.connection import Connection
from wismo.mcp.client.investigation import Call, investigate
from wismo.studies import following, matching
from wismo.studies.cases import StudyCase
from wismo.studies.declaration import Study, chosen
from wismo.studies.evidence import evidence as found_evidence
from wismo.studies.servers import reach

# Not the built report's file (outputs/deterministic-comparison.json, which also holds the transport parity and
# which the index reads): a one-transport comparison from the command line never replaces it.
DEFAULT_OUT = Path("outputs") / "compare" / "deterministic-comparison.json"


def differences(
    reference: object, other: object, names: tuple[str, str], match: str = "equal"
) -> list[dict[str, object]]:
    """Where a design's evidence breaks the study's match against the reference design's (wismo.studies.matching),
    as {path, name: value, ...}."""
    return matching.match(match).differences(reference, other, names)


def _shown(arguments: dict[str, object] | None) -> dict[str, object]:
    """Arguments as recorded in the output: strings longer than any identifier are shortened and counted."""
    return {
        k: (f"{v[:12]}… ({len(v)} characters)" if isinstance(v, str) and len(v) > MAX_ID_LENGTH else v)
        for k, v in (arguments or {}).items()
    }


def _design_side(tool_turns: list[list[Call]], error: str | None, evidence: object) -> dict[str, object]:
    """Calls, bytes, error and evidence (as compared) of one design for one case, in the order the investigation
    asked for them."""
    calls = [c for turn in tool_turns for c in turn]
    reads = sum(c.get("reads", 0) for c in calls)
    return {
        "calls": len(calls),
        **({"resourceReads": reads} if reads else {}),
        "bytes": sum(utf8_len(c["output"]) + c.get("binary", 0) for c in calls),
        "error": error,
        "evidence": evidence,
        "toolCalls": [
            {
                "tool": c["name"],
                "arguments": _shown(c["arguments"]),
                "bytes": utf8_len(c["output"]) + c.get("binary", 0),
                "isError": c["isError"],
            }
            for c in calls
        ],
    }


TIMED = ("tools/call", "resources/read")  # the interactions a design's evidence took


@dataclass
class Walked:
    """What one case's walk of every design gave beside its verdict: each design's entry value (absent where the
    entry call failed), which says whether its links found anything to follow, and the timings."""

    entries: dict[str, object] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)
    reads: dict[str, list[tuple[str, str, str, bool]]] = field(default_factory=dict)  # what patterns read


async def compare_case(conns: dict[str, Connection], case: StudyCase, study: Study) -> tuple[dict[str, object], Walked]:
    """Drive one case through every design; return its verdict against the reference design and, apart, what the
    walks gave (entry values, timings)."""
    sides, found, walked = {}, {}, Walked()
    for design, conn in conns.items():
        first = len(conn.interactions)
        how = study.designs[design].investigation
        try:
            tool_turns = await investigate(conn, how, case.fields)
            found[design] = found_evidence(how, tool_turns)
        except NoStructuredContent as exc:
            raise exc.of(design) from None
        value, error = found[design]
        compared = matching.without(value, study.ignored(design)) if error is None else None
        sides[design] = _design_side(tool_turns, error, compared)
        walked.reads[design] = following.pattern_reads(how, tool_turns)
        walked.timing[design] = sum(i.elapsed_ms for i in conn.interactions[first:] if i.method in TIMED)
        if not tool_turns[0][0]["isError"]:
            walked.entries[design] = how.value_of(tool_turns[0][0])
    reference, others = study.reference, [d for d in conns if d != study.reference]
    ref_value, ref_error = found[reference]
    diffs: list[dict[str, object]] = []
    rejected = [found[d][1] is not None for d in conns]
    for design in others:
        value, error = found[design]
        if ref_error is not None or error is not None:
            if ref_error != error:
                diffs.append({"path": "<error>", reference: ref_error, design: error})
        else:
            keys = study.ignored(reference, design)
            diffs += differences(
                matching.without(ref_value, keys), matching.without(value, keys), (reference, design), study.match
            )
    if any(rejected):
        outcome = "rejected alike" if all(rejected) and not diffs else "rejected differently"
    else:
        outcome = "evidence"
    row = {
        "label": case.label,
        "input": case.shown,
        "unfriendly": case.unfriendly,
        "outcome": outcome,
        "equal": not diffs,
        "differences": diffs,
        **sides,
    }
    return row, walked


def summarise(rows: list[dict[str, Any]], design_names: list[str], reference: str) -> dict[str, Any]:
    """Totals over the inputs: how many cases are equal, how the unfriendly inputs were treated, bytes and calls per
    design over the cases."""
    cases = [r for r in rows if not r["unfriendly"]]
    unfriendly = [r for r in rows if r["unfriendly"]]
    return {
        "designs": design_names,
        "reference": reference,
        "inputs": len(rows),
        "inputsEqual": sum(r["equal"] for r in rows),
        "allEqual": all(r["equal"] for r in rows),
        "cases": len(cases),
        "casesEqual": sum(r["equal"] for r in cases),
        "unfriendly": len(unfriendly),
        "unfriendlyAgreeing": sum(r["equal"] for r in unfriendly),
        # An unfriendly input is either rejected by every design with the same sentence, or (a well-formed input
        # whose linked records are missing) answered with the same evidence, the missing records marked.
        "unfriendlyRejectedAlike": sum(r["equal"] and r["outcome"] == "rejected alike" for r in unfriendly),
        "unfriendlyEvidenceAlike": sum(r["equal"] and r["outcome"] == "evidence" for r in unfriendly),
        "bytes": {d: sum(r[d]["bytes"] for r in cases) for d in design_names},
        "calls": {d: sum(r[d]["calls"] for r in cases) for d in design_names},
    }


class Comparison(TypedDict):
    """What run() returns and write() stores as JSON: every case on every design, their summary, the study and the
    run's timings (the only wall-clock figures)."""

    protocolRevision: str
    transport: str
    clock: str
    tools: dict[str, list[dict[str, object]]]
    cases: list[dict[str, object]]
    summary: dict[str, object]
    study: dict[str, object]
    unfollowedLinks: list[dict[str, object]]
    unreadPatterns: list[dict[str, object]]
    timings: dict[str, object]
    transportParity: NotRequired[dict[str, object]]  # added by report 01 (reports/equivalence.py)


async def run(
    case_keys: list[str] | None = None,
    transport: str = "stdio",
    unfriendly: bool = True,
    env: dict[str, dict[str, str]] | None = None,
    progress: Any = None,
    design_names: list[str] | None = None,
    study: Study | str | Path | None = None,
) -> Comparison:
    """Start every design's server of the study (default the article's; of its designs, those the registry marks
    compared, the reference first), compare every case (`case_keys`: case keys, default all), stop them; `env` adds
    variables per design (for planted faults). `transport` is for the designs wismo serves; any other is reached
    as its declaration says.

    `progress`, if given, is told of each case compared (anything with `update(n)`, such as a progress bar).
    """
    env = env or {}
    study = chosen(study).narrowed(design_names)
    cases = study.select(case_keys, unfriendly)
    async with AsyncExitStack() as stack:
        conns = {
            d: await stack.enter_async_context(reach(sd, transport, env.get(d))) for d, sd in study.designs.items()
        }
        tools = {d: await conn.list_tools() for d, conn in conns.items()}
        rows, timings = [], {}
        entries: dict[str, list[object]] = {d: [] for d in conns}
        reads: dict[str, list[tuple[str, str, str, bool]]] = {d: [] for d in conns}
        for case in cases:
            row, walked = await compare_case(conns, case, study)
            rows.append(row)
            timings[case.label] = walked.timing
            for design, value in walked.entries.items():
                entries[design].append(value)
            for design, read in walked.reads.items():
                reads[design] += read
            if progress is not None:
                progress.update(1)
        start = {d: conn.start_ms for d, conn in conns.items()}
    result: Comparison = {
        "protocolRevision": PINNED_REVISION,
        "transport": transport,
        "clock": CLOCK,
        "tools": tools,
        "cases": rows,
        "summary": summarise(rows, list(study.designs), study.reference),
        "study": about(study, transport),
        # Links whose `from` found nothing to follow in any case: said, never silent (empty when all followed).
        "unfollowedLinks": [
            x for d, sd in study.designs.items() for x in following.unfollowed(d, sd.investigation, entries[d])
        ],
        # Patterns that read nothing from a result with text: said (PatternReadsNothing where they never read).
        "unreadPatterns": [x for d in study.designs for x in following.unread(d, reads[d])],
        # Wall-clock figures live here and only here, so everything else is byte-identical between runs.
        "timings": {"unit": "ms, measured", "serverStart": start, "cases": timings},
    }
    return result


def about(study: Study, transport: str) -> dict[str, object]:
    """What a result says about its study: title, file, question, match, key, and how each design was reached (the
    transport of this run, and whether wismo started the server or reached one someone else runs)."""
    return {
        "title": study.title,
        "file": study.path.name,
        "question": study.question,
        "match": study.match,
        "key": study.key,
        "reference": study.reference,
        # The server as the file names it (an absolute interpreter path would make the result machine-dependent).
        "designs": {
            name: {"transport": d.address.fixed_transport or transport, "startedByWismo": d.address.url is None}
            for name, d in study.designs.items()
        },
    }


def check_equal(result: dict[str, Any]) -> str:
    """The equivalence claim checked: "Checked: ..." when every case is equal, else ClaimFailed naming every case
    whose designs disagree, with its first difference."""
    bad = [r for r in result["cases"] if not r["equal"]]
    if bad:
        lines = []
        for r in bad:
            said = matching.said(r["differences"][0], result["summary"]["reference"])
            lines.append(f"{r['label']} ({r['input']}): {said}")
        detail = "; ".join(lines)
        raise ClaimFailed(
            "every case gives the same evidence in every design",
            detail,
            f"{len(bad)} case(s) differ between the designs: {detail}",
        )
    s = result["summary"]
    agree = matching.match(result.get("study", {}).get("match")).agree.format(ref=s["reference"])
    return (
        f"Checked: all {s['inputs']} inputs ({plural(s['cases'], 'case')} and {s['unfriendly']} unfriendly) {agree} "
        "in every design, or are refused alike."
    )


def write(result: Mapping[str, object], path: str | Path = DEFAULT_OUT) -> Path:
    """Write the comparison as stable JSON (sorted keys, timings under their own key)."""
    return write_stable(path, result)


def parity(results: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per case: the verdict and bytes over every transport, and whether they are all the same."""
    transports = list(results)
    first = results[transports[0]]
    rows = []
    for i, row in enumerate(first["cases"]):
        others = [results[t]["cases"][i] for t in transports]
        names = first["summary"]["designs"]
        keys = [
            (r["equal"], r["outcome"], *((r[d]["bytes"], r[d]["calls"], r[d]["error"]) for d in names)) for r in others
        ]
        entry = {"case": row["label"], "input": row["input"], "same": all(k == keys[0] for k in keys)}
        for t, r in zip(transports, others):
            entry[f"{t}: verdict"] = "equal" if r["equal"] else "DIFFERENT"
            entry[f"{t}: bytes"] = " / ".join(f"{r[d]['bytes']:,}" for d in names)
        rows.append(entry)
    return rows


def check_parity(rows: list[dict[str, object]], transports: list[str]) -> str:
    """The parity claim checked over parity rows: "Checked: ..." when every case gives the same verdicts, bytes,
    calls and errors on every transport, else ClaimFailed naming every case that does not."""
    bad = [r for r in rows if not r["same"]]
    if bad:
        detail = "; ".join(f"{r['case']} ({r['input']})" for r in bad)
        raise ClaimFailed(
            f"every case gives the same verdicts and bytes over {', '.join(transports)}",
            detail,
            f"{len(bad)} case(s) differ between {', '.join(transports)}: {detail}",
        )
    return f"Checked: {plural(len(rows), 'case')}, each with the same verdicts and bytes over {', '.join(transports)}."
