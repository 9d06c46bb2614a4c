"""Reaching a study's servers: each design as its declaration says (a design wismo serves, over the transport asked;
a stdio command, run in the study's folder; or a Streamable HTTP URL), and checking that they offer what the
study calls."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from wismo.core.errors import described
from wismo.core.investigation import Investigation
from wismo.mcp.client.connection import Connection
from wismo.mcp.client.failures import HarnessError
from wismo.studies.declaration import Study
from wismo.studies.designs import StudyDesign


def reach(
    design: StudyDesign, transport: str | None = None, env: dict[str, str] | None = None
) -> AbstractAsyncContextManager[Connection]:
    """A connection to one design's server: wismo's own over `transport` (default stdio), any other as declared."""
    return design.address.connect(design.name, transport, env)


def _properties(tool: dict[str, Any]) -> tuple[dict[str, Any], set[str]] | None:
    """A tool's declared arguments and required ones, or None when its input schema declares no properties."""
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    return props, set(schema.get("required") or [])


def tool_problems(name: str, how: Investigation, tools: list[dict[str, object]]) -> list[str]:
    """What a design's tools/list lacks for its investigation, one sentence each."""
    by_name = {t.get("name"): t for t in tools}
    offered = ", ".join(sorted(str(n) for n in by_name)) or "none"
    where = f'design "{name}"'
    problems = []

    def check_args(key: str, tool_name: str, given: list[str], arrays: dict[str, bool]) -> None:
        tool = by_name.get(tool_name)
        if tool is None:
            problems.append(f"{where}: {key} calls {tool_name}, which the server does not offer; it offers {offered}.")
            return
        declared = _properties(tool)
        if declared is None:
            return
        props, required = declared
        for arg in given:
            if arg not in props:
                known = ", ".join(props) or "no arguments"
                problems.append(f"{where}: {key} passes {arg} to {tool_name}, which takes {known}.")
            elif arg in arrays:
                is_array = props[arg].get("type") == "array" if isinstance(props[arg], dict) else False
                if is_array and not arrays[arg]:
                    problems.append(
                        f"{where}: {key} passes one value per call to {tool_name}, whose {arg} is a list; "
                        "set batch = true."
                    )
                elif arrays[arg] and not is_array and "type" in props[arg]:
                    problems.append(f"{where}: {key} has batch = true, but {tool_name}'s {arg} is not a list.")
        for arg in sorted(required - set(given)):
            problems.append(f"{where}: {key} leaves out {arg}, which {tool_name} requires.")

    check_args("entry", how.entry, list(how.arguments), {})
    if how.cursor is not None and how.entry in by_name:
        declared = _properties(by_name[how.entry])
        if declared is not None and how.cursor.argument not in declared[0]:
            problems.append(f"{where}: cursor.argument is {how.cursor.argument}, which {how.entry} does not take.")
    for i, link in enumerate(how.links, start=1):
        check_args(f"links[{i}]", link.tool, list(link.arguments), dict.fromkeys(link.item_arguments, link.batch))
    for step, tool_name, reading in how.steps():
        tool = by_name.get(tool_name)
        if reading.read == "structured" and tool is not None and not tool.get("outputSchema"):
            problems.append(
                f'{where}: {step} has read = "structured", but {tool_name} declares no output schema, so its results '
                'carry no structuredContent; read its text (read = "json", read = "text" or a pattern).'
            )
    return problems


async def check(study: Study, transport: str | None = None) -> list[str]:
    """Connect to every design and check its tools: every problem, one sentence each (empty when all is well)."""
    problems = []
    for name, design in study.designs.items():
        try:
            async with reach(design, transport) as conn:
                tools = await conn.list_tools()
        except HarnessError as exc:
            # One sentence: what failed and why (the underlying error, not the harness's own sentence around it),
            # then how to install the servers when the study says so.
            why = described(exc.error) if exc.error is not None else str(exc)
            # What the server said on its way down is often the reason (a missing module, a bad flag): quoted.
            tail = " ".join(exc.stderr.split())[-200:]
            said = f" (its stderr ends with: {tail})" if tail and tail not in why else ""
            hint = f"; {study.setup.rstrip('.')}" if study.setup else ""
            problems.append(
                f'design "{name}": the server cannot be reached ({design.address.describe()}): {why}{said}{hint}.'
            )
            continue
        problems += tool_problems(name, design.investigation, tools)
    return problems
