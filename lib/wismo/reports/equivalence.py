"""The equivalence report (notebook 01): every design over MCP, case by case, on every transport, with bytes and
calls measured; its JSON is deterministic-comparison.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wismo.analyses import comparison
from wismo.client.connection import TRANSPORTS
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import report_dir
from wismo.qa.hostile import STUDY_COUNT
from wismo.reports import check
from wismo.reports.params import Param, ParameterError, defaults
from wismo.reports.params import checked as check_parameters
from wismo.servers import designs
from wismo.studies.declaration import Study, UnknownCase, chosen

OUTPUT = "deterministic-comparison.json"
PARAMETERS = {
    "orders": Param(None, "texts", optional=True),  # case keys (order IDs in the article's); None: every case
    "transports": Param(["stdio", "http"], "texts", choices=lambda: TRANSPORTS, subset=True),  # the first tabulated
    "include_unfriendly": Param(True, "flag"),
    "focused_env": Param({}, "table"),  # extra environment for the focused server only (a planted fault)
    "study": Param(None, "text", optional=True),  # a study file; None: data/studies/where-is-my-order.toml
    "hostile_count": Param(STUDY_COUNT, "whole"),  # hostile argument objects per tool on the study's servers; 0: none
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the equivalence report"


def checked(params: Mapping[str, Any] | None) -> dict[str, Any]:
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
    """The transports a study is compared over: those asked, when wismo serves every design (it serves each over
    either); else the one run the declarations fix (a command is stdio, a URL HTTP)."""
    if all(d.serve for d in study.designs.values()):
        return list(asked)
    return asked[:1]


async def build(params: Mapping[str, Any] | None = None, progress: Any = None) -> dict[str, Any]:
    """Compare the designs over every transport, write deterministic-comparison.json, and return its content."""
    p = checked(params)
    study = chosen(p["study"])
    results = {
        t: await comparison.run(
            p["orders"],
            t,
            p["include_unfriendly"],
            env={"focused": p["focused_env"]},
            progress=progress,
            study=study,
        )
        for t in transports_for(study, p["transports"])
    }
    result = results[next(iter(results))]
    result["transportParity"] = {"transports": list(results), "cases": comparison.parity(results)}
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def check_parity(result: dict[str, Any]) -> str:
    """The parity claim checked: every case gives the same verdicts, bytes, calls and errors on every transport (a
    study run over one transport says so instead: there is nothing to compare)."""
    parity = result["transportParity"]
    if len(parity["transports"]) < 2:
        return (
            f"Not checked: this study ran over {parity['transports'][0]} only (its servers are reached as their "
            "declarations say), so there is no second transport to compare with."
        )
    return comparison.check_parity(parity["cases"], parity["transports"])


def links_followed(result: dict[str, Any], study: Study) -> str:
    """Whether every declared link found something to follow in some case: "Checked: ..." with the count, or each
    link that found nothing, named with the entry's value and the fix (said, not raised: the evidence check says
    whether it mattered)."""
    count = sum(len(d.investigation.links) for name, d in study.designs.items() if name in result["summary"]["designs"])
    missed = result["unfollowedLinks"]
    if not count:
        return "No design of this study declares links: each gathers its evidence with its entry call (or its pages)."
    if not missed:
        return f"Checked: each of the {count} declared links found something to follow in at least one case."
    lines = "\n".join(f"- {x['sentence']}" for x in missed)
    return f"**{len(missed)} of the {count} declared links found nothing to follow in any case:**\n\n{lines}"


def check_equal(result: dict[str, Any]) -> str:
    """The equivalence claim checked: every case equal (ClaimFailed names each case's first difference)."""
    return comparison.check_equal(result)


def check_no_compression(result: dict[str, Any]) -> str:
    """The claim that aggregation does not compress the evidence: in every order case each design that answers
    in one call returns at least as many bytes as the reference's records, and fewer MCP calls."""
    reference = designs.REFERENCE
    others = [d for d in result["summary"]["designs"] if d != reference]
    rows = [r for r in result["cases"] if not r["unfriendly"] and r["outcome"] == "evidence"]
    bad = [
        f"{r['label']}: {d} {r[d]['bytes']:,} bytes in {r[d]['calls']} calls vs {reference} {r[reference]['bytes']:,} "
        f"in {r[reference]['calls']}"
        for r in rows
        for d in others
        if not (r[d]["bytes"] >= r[reference]["bytes"] and r[d]["calls"] < r[reference]["calls"])
    ]
    extra = {d: sum(r[d]["bytes"] - r[reference]["bytes"] for r in rows) for d in others}
    detail = (
        "; ".join(bad)
        if bad
        else ", ".join(
            f"{d}: {extra[d]:+,} bytes over {len(rows)} orders, {sum(r[d]['calls'] for r in rows)} calls against "
            f"{sum(r[reference]['calls'] for r in rows)}"
            for d in others
        )
    )
    return check(
        not bad, "every design returns at least the reference's bytes, in fewer MCP calls, in every order case", detail
    )
