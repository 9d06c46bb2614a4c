"""Hostile input on the study's own servers, as notebook 01 runs and shows it: build() runs the pass (qa/study_hostile)
on every design of the study with the report's `hostile_count` and writes hostile.json; the sentences and tables
name the study's designs, the tools each was sent hostile arguments at, the tools never called, and the findings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from wismo.checks.findings import MAX_FAULTS
from wismo.checks.framegen import KINDS
from wismo.checks.schema_args import FIXED_PER_ARGUMENT, FIXED_PER_TOOL
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import report_dir
from wismo.core.textgrid import LIST_SEPARATOR, plural

if TYPE_CHECKING:
    from wismo.checks.records import DesignReport, HostileResult

OUTPUT = "hostile.json"
KIND = "measured"  # every count and figure here is what this run sent and saw


def build(params: Mapping[str, object] | None = None) -> HostileResult:
    """Run the hostile-input pass on the study's designs (`hostile_count` argument objects per tool; 0 skips it), write
    hostile.json into the output folder, and return its content."""
    from wismo.checks import study_hostile
    from wismo.reports import equivalence
    from wismo.studies.declaration import chosen

    p = equivalence.checked(params)
    result = study_hostile.run(chosen(p["study"]), p["hostile_count"])
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def _tools(report: DesignReport) -> str:
    """A design's tools that got hostile arguments, in words: each with its listing's read-only mark."""
    marks: dict[bool | None, str] = {True: "read-only", False: "not marked read-only", None: "no read-only mark"}
    return ", ".join(f"`{t}` ({marks[c['readOnly']]})" for t, c in report["toolsCalled"].items())


def summary_sentence(result: HostileResult) -> str:
    """What was sent to which design and what was found, in sentences (or the one sentence of a skipped pass)."""
    if not result["count"]:
        return "No hostile input was sent in this run: it was asked for with a count of 0 (`--hostile 0`)."
    designs = result["designs"]
    per_tool = (
        f"{result['count']:,} generated argument objects per tool and the fixed ones ({FIXED_PER_TOOL} per tool and "
        f"{FIXED_PER_ARGUMENT} per argument)"
    )
    sent = "; ".join(f"**{d['design']}** (over {d['transport']}): {_tools(d)}" for d in designs)
    never = sorted({t for d in designs for t in d["toolsNeverCalled"]})
    untouched = (
        f" The servers also offer {', '.join(f'`{t}`' for t in never)}, which were never called."
        if never
        else " The servers offer no other tool."
    )
    t = result["totals"]
    found = "no findings" if not t["findings"] else plural(t["findings"], "finding")
    stopped = "".join(f" On **{d['design']}**, {d['stoppedEarly']}." for d in designs if d["stoppedEarly"])
    skipped = "".join(
        f" On **{d['design']}**, {plural(d['skippedCases'], 'case')} not sent: the tool or kind it was for had "
        f"crashed or hung {MAX_FAULTS} times."
        for d in designs
        if d["skippedCases"]
    )
    return (
        f"Each of the {plural(len(designs), 'design')} of this study got {per_tool} at the tools its investigation "
        f"calls: {sent}.{untouched} {t['cases']:,} hostile cases in all ({KIND}), each followed by the design's normal "
        f"call: {found}.{stopped}{skipped}"
    )


def design_rows(result: HostileResult) -> list[dict[str, object]]:
    """One row per design: how it was reached, its normal call, the cases of each part, restarts and findings."""
    from wismo.checks.study_hostile import cases

    findings = result["findings"]
    rows = []
    for d in result["designs"]:
        frames, http = d.get("frames"), d.get("http")
        end = frames.get("exitCodeAtEndOfInput", "-") if frames else "-"
        rows.append(
            {
                "design": d["design"],
                "reached over": d["transport"],
                "normal call": f"{d['normalCall']['tool']} {d['normalCall']['arguments']}",
                "argument cases": sum(t["cases"] for t in d["arguments"].values()),
                "frames": sum((frames.get("cases") or {}).values()) if frames else 0,
                "HTTP requests": sum((http.get("cases") or {}).values()) if http else 0,
                "all cases": cases(d),
                "restarts": d["restarts"],
                "exit code at end of input": "did not exit" if end is None else end,
                "findings": sum(f["cases"] for f in findings if f["design"] == d["design"]),
            }
        )
    return rows


def category_rows(result: HostileResult) -> list[dict[str, object]]:
    """What each category of finding the pass judged by means, as qa/findings.py declares it."""
    return [{"finding": name, "what it means": meaning} for name, meaning in result["categories"].items()]


def findings_sentence(result: HostileResult) -> str:
    """The findings by category in one sentence (every category said, zero included), with what is not a finding."""
    by = result["totals"]["byCategory"]
    counts = ", ".join(f"{name} {by[name]:,}" for name in result["categories"])
    return f"Cases that showed a finding, by category ({KIND}): {counts}. {result['notFindings']}"


def finding_rows(result: HostileResult) -> list[dict[str, object]]:
    """One row per finding: its category, design, part and place, the first input that showed it, what happened,
    and how many cases showed it."""
    return [
        {
            "finding": f["category"],
            "design": f["design"],
            "part": f["part"],
            "tool or kind": f["where"],
            "first input (shortened)": f["input"],
            "what happened": f["what"],
            "cases": f["cases"],
        }
        for f in result["findings"]
    ]


def _found_at(result: HostileResult, design: str, part: str, where: str) -> int:
    return sum(f["cases"] for f in result["findings"] if (f["design"], f["part"], f["where"]) == (design, part, where))


def argument_rows(result: HostileResult) -> list[dict[str, object]]:
    """One row per design and tool: its read-only mark, the cases, how they were answered, and findings."""
    return [
        {
            "design": d["design"],
            "tool": tool,
            "read-only (its listing)": {True: "yes", False: "no", None: "not said"}[d["toolsCalled"][tool]["readOnly"]],
            "cases": t["cases"],
            "results": t["results"],
            "tool errors": t["toolErrors"],
            "JSON-RPC errors": t["protocolErrors"],
            "findings": _found_at(result, d["design"], "arguments", tool),
        }
        for d in result["designs"]
        for tool, t in d["arguments"].items()
    ]


def frame_rows(result: HostileResult) -> list[dict[str, object]]:
    """One row per kind of frame: the frames each stdio design got, and the cases that showed a finding."""
    stdio = [(d["design"], frames) for d in result["designs"] if (frames := d.get("frames"))]
    return (
        [
            {
                "kind of frame": kind,
                **{f"frames, {design}": sent["cases"].get(kind, 0) for design, sent in stdio},
                "findings": sum(_found_at(result, design, "frames", kind) for design, _ in stdio),
            }
            for kind in KINDS
        ]
        if stdio
        else []
    )


def _request_rows(result: HostileResult, key: Literal["http", "servedHttp"], part: str) -> list[dict[str, object]]:
    """One row per kind of request in the designs' `key` part ("http" or "servedHttp"): the requests each design
    got, the statuses, and the findings of `part`."""
    reached = [(d["design"], requests) for d in result["designs"] if (requests := d.get(key))]
    kinds = list(dict.fromkeys(k for _, got in reached for k in got["cases"]))
    rows = []
    for kind in kinds:
        statuses: dict[str, int] = {}
        for _, got in reached:
            for status, n in got["statuses"].get(kind, {}).items():
                statuses[status] = statuses.get(status, 0) + n
        rows.append(
            {
                "kind of request": kind,
                **{f"requests, {design}": got["cases"].get(kind, 0) for design, got in reached},
                "answered with (HTTP status × cases; -1 none in time, 0 closed)": LIST_SEPARATOR.join(
                    f"{s} × {n:,}" for s, n in sorted(statuses.items(), key=lambda item: int(item[0]))
                ),
                "findings": sum(_found_at(result, design, part, kind) for design, _ in reached),
            }
        )
    return rows


def http_rows(result: HostileResult) -> list[dict[str, object]]:
    """One row per kind of request: the requests each design at a URL got, the statuses, and findings."""
    return _request_rows(result, "http", "http")


def served_rows(result: HostileResult) -> list[dict[str, object]]:
    """One row per kind of request to the HTTP side of the designs wismo serves (make fuzz): the requests each got,
    the statuses, and findings."""
    return _request_rows(result, "servedHttp", "served http")


PARTS = (
    (
        "### Frames over stdio\n\nThe frames each design reached over stdio got, by kind (the fixed cases of a kind "
        "besides the generated ones), each made from the design's own normal call.",
        frame_rows,
    ),
    (
        "### Requests over Streamable HTTP, at a URL\n\nThe requests each design reached at a URL got, by kind, and "
        "the HTTP statuses they were answered with.",
        http_rows,
    ),
    (
        "### Requests to the HTTP side of the designs wismo serves\n\nEach design wismo serves, started over "
        "Streamable HTTP (`wismo serve --http`) and reached with raw sockets, got these requests; then connections "
        "holding half a request while a new client must be served, and clients at once with every answer checked; "
        "at the end it must stop cleanly on SIGTERM.",
        served_rows,
    ),
)


def parts(result: HostileResult) -> list[tuple[str, list[dict[str, object]]]]:
    """Each part of the pass that has data, as (its heading and sentence in Markdown, its rows); a part no design
    was reached by is left out."""
    if not result["count"]:
        return []
    return [(said, rows) for said, rows_of in PARTS if (rows := rows_of(result))]


def timings_sentence(result: HostileResult) -> str | None:
    """How long the pass took on each design and the peak memory of each server wismo started (measured)."""
    if not result["count"]:
        return None
    parts = []
    for name, t in result["timings"]["designs"].items():
        memory = f", peak memory {t['peakServerRssMb']} MB" if "peakServerRssMb" in t else ""
        parts.append(f"{name} {t.get('seconds', 0):.1f} s{memory}")
    return f"The pass took {result['timings']['seconds']:.1f} s ({'; '.join(parts)}) ({KIND}, this run)."
