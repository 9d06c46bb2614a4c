"""The equivalence report (notebook 01): every design over MCP, case by case, on every transport, with bytes and
calls measured; its JSON is deterministic-comparison.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wismo.checks.hostile import STUDY_COUNT
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import report_dir
from wismo.core.textgrid import plural
from wismo.mcp.client.connection import TRANSPORTS
from wismo.reports.analyses import comparison
from wismo.reports.params import Param, ParameterError, defaults
from wismo.reports.params import checked as check_parameters
from wismo.studies.declaration import Study, UnknownCase, chosen

OUTPUT = "deterministic-comparison.json"
TRANSPORT_NAMES = {"stdio": "stdio", "http": "Streamable HTTP"}
PARAMETERS = {
    "orders": Param(None, "texts", optional=True),  # case keys (order IDs in the article's); None: every case
    "transports": Param(["stdio", "http"], "texts", choices=lambda: TRANSPORTS, subset=True),  # the first tabulated
    "include_unfriendly": Param(True, "flag"),
    "env": Param({}, "table"),  # extra environment per design, {design: {VAR: value}} (a planted fault)
    "study": Param(None, "text", optional=True),  # a study file; None: data/studies/where-is-my-order.toml
    "hostile_count": Param(STUDY_COUNT, "whole"),  # hostile argument objects per tool on the study's servers; 0: none
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the equivalence report"


def checked(params: Mapping[str, object] | None) -> dict[str, Any]:
    """The report's parameters checked before any server starts: each against its declaration, the study read and
    the cases asked for found in it (ParameterError or StudyInvalid, one sentence)."""
    p = check_parameters(params, PARAMETERS, REPORT)
    if not p["transports"]:
        raise ParameterError(REPORT, "transports", [], f"give at least one of {', '.join(TRANSPORTS)}")
    study = chosen(p["study"])
    try:
        study.select(p["orders"], p["include_unfriendly"])
    except UnknownCase as exc:
        raise ParameterError(
            REPORT, "orders", p["orders"], str(exc).replace("not a case", "each must be a case")
        ) from None
    return p


def transports_for(study: Study, asked: list[str]) -> list[str]:
    """The runs of a study's comparison, one per transport asked where some design is one wismo serves (it serves
    each over either, while the others stay on the transport their declaration fixes), else the one run."""
    if any(d.address.serve for d in study.designs.values()):
        return list(asked)
    return asked[:1]


def reached(study: Study, transports: list[str]) -> dict[str, list[str]]:
    """Each design's transports in these runs: those asked for a design wismo serves, else the declared one."""
    return {
        name: [d.address.fixed_transport] if d.address.fixed_transport else list(transports)
        for name, d in study.designs.items()
    }


async def build(params: Mapping[str, object] | None = None, progress: object = None) -> comparison.Comparison:
    """Compare the designs over every transport, write deterministic-comparison.json, and return its content."""
    p = checked(params)
    study = chosen(p["study"])
    unknown = [d for d in p["env"] if d not in study.designs]
    if unknown:
        raise ParameterError(
            REPORT, "env", p["env"], f"its keys must be designs of the study ({', '.join(study.designs)})"
        )
    runs = transports_for(study, p["transports"])
    results = {
        t: await comparison.run(p["orders"], t, p["include_unfriendly"], env=p["env"], progress=progress, study=study)
        for t in runs
    }
    result = results[next(iter(results))]
    result["transportParity"] = {
        "transports": list(results),
        "reached": reached(study, runs),
        "cases": comparison.parity(results),
    }
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def check_parity(result: dict[str, Any]) -> str:
    """The parity claim checked: every case gives the same verdicts, bytes, calls and errors on every transport
    (where no design is reached over two, the sentence says how each was reached instead: nothing to compare)."""
    parity = result["transportParity"]
    if len(parity["transports"]) < 2:
        how = "; ".join(
            f"{d} over {' and '.join(TRANSPORT_NAMES[t] for t in ts)}" for d, ts in parity["reached"].items()
        )
        return (
            f"Not checked: no design of this study was reached over more than one transport ({how}), so there is no "
            "second transport to compare with."
        )
    return comparison.check_parity(parity["cases"], parity["transports"])


def timing_sentence(result: dict[str, Any]) -> str:
    """How long each server took to be ready, as measured: from start to initialized for a server wismo started,
    from connect to initialized for one it reached at a URL."""
    started = result["study"]["designs"]
    parts = [
        f"{d} {ms:,.0f} ms ({'server start' if started[d]['startedByWismo'] else 'connect'} to initialized)"
        for d, ms in result["timings"]["serverStart"].items()
    ]
    return f"Ready to serve, over {result['transport']}: " + ", ".join(parts) + " (measured, this run)."


def more_or_fewer(difference: int, what: str) -> str:
    """A count's difference from the reference in words, never signed: "319 more bytes", "18 fewer calls"."""
    if difference == 0:
        return f"as many {what}"
    return f"{abs(difference):,} {'more' if difference > 0 else 'fewer'} {what}"


def compression_statement(result: dict[str, Any]) -> str:
    """Whether aggregation compresses the evidence, per design against the reference, over the cases that
    returned evidence: the bytes each design returned and the MCP calls it took, said as found (measured)."""
    ref = result["summary"]["reference"]
    rows = [r for r in result["cases"] if not r["unfriendly"] and r["outcome"] == "evidence"]
    ref_bytes, ref_calls = sum(r[ref]["bytes"] for r in rows), sum(r[ref]["calls"] for r in rows)
    parts = []
    for d in result["summary"]["designs"]:
        if d == ref:
            continue
        b, c = sum(r[d]["bytes"] for r in rows), sum(r[d]["calls"] for r in rows)
        more = sum(r[d]["bytes"] >= r[ref]["bytes"] for r in rows)
        against = f"{more_or_fewer(b - ref_bytes, 'bytes')}, {more_or_fewer(c - ref_calls, 'calls')}"
        parts.append(
            f"**{d}** returned {b:,} bytes in {plural(c, 'call')} ({against}; at least the {ref} design's bytes in "
            f"{more} of {plural(len(rows), 'case')})"
        )
    return (
        f"Over the {plural(len(rows), 'case')} that returned evidence, the {ref} design returned {ref_bytes:,} bytes "
        f"in {plural(ref_calls, 'MCP call')}; " + "; ".join(parts) + " (measured)."
    )


def links_followed(result: dict[str, Any], study: Study) -> str:
    """Whether every declared link found something to follow in some case: "Checked: ..." with the count, or each
    link that found nothing, named with the entry's value and the fix (said, not raised: the evidence check says
    whether it mattered)."""
    count = sum(len(d.investigation.links) for name, d in study.designs.items() if name in result["summary"]["designs"])
    missed = result["unfollowedLinks"]
    unread = "".join(f"\n\n{x['sentence']}" for x in result.get("unreadPatterns", []))  # a pattern that read nothing
    if not count:
        return (
            "No design of this study declares links: each gathers its evidence with its entry call (or its pages)."
            + unread
        )
    if not missed:
        return f"Checked: each of the {count} declared links found something to follow in at least one case." + unread
    lines = "\n".join(f"- {x['sentence']}" for x in missed)
    return f"**{len(missed)} of the {count} declared links found nothing to follow in any case:**\n\n{lines}" + unread


def check_equal(result: dict[str, object]) -> str:
    """The equivalence claim checked: every case equal (ClaimFailed names each case's first difference)."""
    return comparison.check_equal(result)
