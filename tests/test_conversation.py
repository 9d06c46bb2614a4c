"""Counting a conversation once (tokens/conversation.py): its first request and per-turn additions agree, on the
recorded ORD-1004 turns, with the requests counted whole and with the framing module's own count of a turn, under
every client profile; the sweep and the calibration read the same numbers."""

import pytest

from wismo.accounting import tokens
from wismo.accounting.tokens import conversation, framing
from wismo.domain import prompts
from wismo.reports.analyses import calibration, sweep
from wismo.studies.declaration import article
from wismo.studies.investigations import record

pytestmark = pytest.mark.anyio
ORDER = "ORD-1004"
ASKED = conversation.Prompt(prompts.INSTRUCTIONS, prompts.question(ORDER))  # the article's prompt for it


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
async def recorded():
    return await record(article(), [ORDER])


def _framed_turn(turn, index, profile):
    """A turn counted the framing module's way: function_call items, then MCP results as `profile` frames them."""
    ids = [f"call_{index}_{i}" for i in range(len(turn))]
    calls = [tokens.function_call(c["name"], c["arguments"], i) for c, i in zip(turn, ids)]
    results = [framing.text_result(c["output"], True if c["isError"] else None) for c in turn]
    return framing.turn_addition(calls, results, profile).total


@pytest.mark.parametrize("profile", list(framing.PROFILES.values()), ids=list(framing.PROFILES))
async def test_each_turns_addition_is_what_the_whole_requests_grow_by(recorded, profile):
    for design in ("granular", "focused"):
        turns, tools = recorded["turns"][design][ORDER], recorded["tools"][design]
        conv = conversation.conversation(ASKED, tools, turns, profile=profile)
        assert conv.additions == conversation.turn_additions(turns, profile=profile)
        assert list(conv.additions) == [b - a for a, b in zip(conv.requests, conv.requests[1:])]
        assert list(conv.additions) == [_framed_turn(t, i, profile) for i, t in enumerate(turns, start=1)]
        assert calibration.additions(turns, profile) == list(conv.additions)
        assert conv.base == conversation.first_request(ASKED, tools, profile=profile).total


async def test_the_first_request_is_its_parts_and_the_calibration_leaves_out_only_the_instructions(recorded):
    tools = recorded["tools"]["granular"]
    request = conversation.first_request(ASKED, tools)
    functions = [tokens.mcp_tool_to_function(t) for t in tools]
    assert request.tools == tokens.count_tools(functions)
    question = {"type": "message", "role": "user", "content": prompts.question(ORDER)}
    system = {"type": "message", "role": "system", "content": prompts.INSTRUCTIONS}
    assert request.items == tokens.count_item(system) + tokens.count_item(question)
    known = calibration.first_request_known(tools, framing.PYTHON, "cookbook", ASKED)
    assert known == request.total - tokens.count_text(prompts.INSTRUCTIONS)
    harmony = calibration.first_request_known(tools, framing.PYTHON, "harmony", ASKED)
    assert harmony - known == calibration.definition_tokens(tools, framing.PYTHON, "harmony") - request.tools


async def test_the_sweep_accounts_a_session_from_the_same_counts(recorded):
    turns, tools = recorded["turns"]["granular"][ORDER], recorded["tools"]["granular"]
    row = sweep.account("granular", 4, tools, turns, tokens.DEFAULT_ENCODING)
    conv = conversation.conversation(sweep.served_prompt(4), tools, turns)
    assert row["base"] == conv.base and row["inputs"] == list(conv.requests)
    assert row["totalInput"] == sum(conv.requests)
