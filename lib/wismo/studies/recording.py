"""A study's investigations recorded over MCP: each design's tools/list, and its tool turns for every case, with
the prompt every request of that case starts with (what the token accounting counts)."""

from __future__ import annotations

from typing import Any

from wismo.client.investigation import investigate
from wismo.studies.declaration import Study
from wismo.studies.servers import reach
from wismo.tokens.conversation import Prompt


def prompt(study: Study, case: Any) -> Prompt:
    """The instructions and the question of one case of the study."""
    return Prompt(study.instructions, study.question_for(case))


async def record(study: Study, keys: list[str] | None = None, transport: str | None = None) -> dict[str, Any]:
    """Every design's tools/list and, per case (by its key, default every case), its tool turns and its prompt."""
    cases = study.select(keys, unfriendly=False)
    out: dict[str, Any] = {"tools": {}, "turns": {}, "prompts": {study.case_key(c): prompt(study, c) for c in cases}}
    for name, design in study.designs.items():
        async with reach(design, transport) as conn:
            out["tools"][name] = await conn.list_tools()
            out["turns"][name] = {
                study.case_key(c): await investigate(conn, design.investigation, c.fields) for c in cases
            }
    return out
