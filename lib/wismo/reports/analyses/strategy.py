"""How the model calls tools: every call of a turn in one request (parallel, as the article's model asked for the
four linked records at once) or one tool call per model request (sequential), and what the model writes each time.

The same tool calls and results either way; a sequential model makes one request more per extra call, and each
request resends the history. Output tokens are the scripted model's: its function-call items, then its answer
(wismo.runs.agent.scripted.answer), tiktoken-estimated.
"""

from __future__ import annotations

from wismo.accounting import tokens
from wismo.accounting.tokens.conversation import turn_items
from wismo.core.errors import InputError
from wismo.mcp.client.investigation import Call
from wismo.runs.agent.base import assistant_message

PARALLEL, SEQUENTIAL = "parallel", "sequential"
STRATEGIES = (PARALLEL, SEQUENTIAL)
DESCRIPTIONS = {
    PARALLEL: "every tool call of a turn in one model request (the article's model)",
    SEQUENTIAL: "one tool call per model request",
}


def check_name(strategy: str) -> str:
    """The strategy's name, or ValueError naming the ones that exist."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown call strategy {strategy!r}; choose {' or '.join(STRATEGIES)}")
    return strategy


def arrange(tool_turns: list[list[Call]], strategy: str) -> list[list[Call]]:
    """The tool turns as a model with this strategy takes them: as recorded, or one call per turn."""
    if check_name(strategy) == PARALLEL:
        return [list(turn) for turn in tool_turns]
    return [[call] for turn in tool_turns for call in turn]


def requests(tool_turns: list[list[Call]], strategy: str) -> int:
    """Model requests of the conversation: one per tool turn, and one more for the answer."""
    return len(arrange(tool_turns, strategy)) + 1


def outputs(tool_turns: list[list[Call]], answer: str, encoding_name: str = tokens.DEFAULT_ENCODING) -> list[int]:
    """Output tokens of each model request: the function calls it asks for, and last the answer (the scripted
    model's, wismo.runs.agent.scripted.answer, for the conversation as recorded), tiktoken-estimated."""
    out = []
    for index, turn in enumerate(tool_turns, start=1):
        added = turn_items(turn, index)
        out.append(sum(tokens.count_item(i, encoding_name) for i in added if i["type"] == "function_call"))
    out.append(tokens.count_item(assistant_message(answer), encoding_name))
    return out
