"""A study's investigations recorded over MCP: each design's tools/list, and its tool turns for every case, with
the prompt every request of that case starts with (what the token accounting counts)."""

from __future__ import annotations

from typing import Any, TypedDict

from wismo.accounting.tokens.conversation import Prompt
from wismo.core.walk import Call
from wismo.mcp.client.investigation import investigate
from wismo.studies.cases import StudyCase
from wismo.studies.declaration import Study
from wismo.studies.servers import reach


class Recorded(TypedDict):
    """A study's investigations as record() returns them: per design its tools/list, per design and case key its
    tool turns, and per case key its prompt."""

    tools: dict[str, list[dict[str, Any]]]  # tools/list in wire form; readers take each tool's name as text
    turns: dict[str, dict[str, list[list[Call]]]]
    prompts: dict[str, Prompt]


def prompt(study: Study, case: StudyCase) -> Prompt:
    """The instructions and the question of one case of the study."""
    return Prompt(study.instructions, study.question_for(case))


async def record(study: Study, keys: list[str] | None = None, transport: str | None = None) -> Recorded:
    """Every design's tools/list and, per case (by its key, default every case), its tool turns and its prompt."""
    cases = study.select(keys, unfriendly=False)
    out: Recorded = {"tools": {}, "turns": {}, "prompts": {study.case_key(c): prompt(study, c) for c in cases}}
    for name, design in study.designs.items():
        async with reach(design, transport) as conn:
            out["tools"][name] = await conn.list_tools()
            out["turns"][name] = {
                study.case_key(c): await investigate(conn, design.investigation, c.fields) for c in cases
            }
    return out
