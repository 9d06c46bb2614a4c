"""Counting a conversation, once for every caller: the first request, what each tool turn adds under a client
profile, and every request of an investigation, in tokens."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from wismo.accounting import tokens
from wismo.accounting.tokens import framing
from wismo.core.walk import Call


def turn_items(turn: list[Call], turn_index: int, profile: framing.Profile = framing.PYTHON) -> list[dict[str, Any]]:
    """The input items one tool turn appends: the model's function_call items, then their outputs as the client
    profile frames them (python: the text as the server returned it)."""
    # Ids of a real model's length, derived from the turn, so counting them (sensitivity's "with call_id") is fair;
    # the turn is hashed once, since a turn of a large order holds thousands of calls.
    turn_text = json.dumps([turn_index, [[c["name"], c["arguments"]] for c in turn]], sort_keys=True)
    seed = hashlib.sha256(turn_text.encode("utf-8")).hexdigest()
    ids = [tokens.call_id(seed, i) for i in range(len(turn))]
    calls = [tokens.function_call(c["name"], c["arguments"], call_id) for c, call_id in zip(turn, ids)]
    outputs = [
        tokens.function_call_output(
            call_id, profile.output(framing.text_result(c["output"], True if c.get("isError") else None))
        )
        for c, call_id in zip(turn, ids)
    ]
    return calls + outputs


@dataclass(frozen=True)
class Prompt:
    """What every request of a conversation starts with: the instructions, and the user's question."""

    instructions: str
    question: str


@dataclass(frozen=True)
class Conversation:
    """The input tokens of every model call of one investigation (tiktoken-estimated), by part."""

    base: int
    additions: tuple[int, ...]
    requests: tuple[int, ...]
    result_tokens: tuple[int, ...]


def first_request(
    prompt: Prompt,
    tools: list[dict[str, object]],
    encoding_name: str = tokens.DEFAULT_ENCODING,
    profile: framing.Profile = framing.PYTHON,
) -> tokens.RequestCount:
    """The first request of an investigation, by part: the tool definitions as the client profile sends them, the
    instructions and the question as items, and the reply's priming."""
    functions = [profile.function(t) for t in tools]
    return tokens.count_request(prompt.instructions, functions, [_question(prompt)], encoding_name)


def turn_additions(
    turns: list[list[Call]],
    encoding_name: str = tokens.DEFAULT_ENCODING,
    profile: framing.Profile = framing.PYTHON,
) -> tuple[int, ...]:
    """What each tool turn adds to the next request: its items (turn_items) counted the cookbook way."""
    return tuple(
        sum(tokens.count_item(i, encoding_name) for i in turn_items(turn, index, profile))
        for index, turn in enumerate(turns, start=1)
    )


def _question(prompt: Prompt) -> dict[str, object]:
    """The user message that opens an investigation."""
    return {"type": "message", "role": "user", "content": prompt.question}


def conversation(
    prompt: Prompt,
    tools: list[dict[str, object]],
    turns: list[list[Call]],
    encoding_name: str = tokens.DEFAULT_ENCODING,
    profile: framing.Profile = framing.PYTHON,
) -> Conversation:
    """Count every request of an investigation directly (definitions and results as the client profile sends them),
    and split it into the first request and per-turn additions."""
    functions = [profile.function(t) for t in tools]
    items = [_question(prompt)]
    requests = [first_request(prompt, tools, encoding_name, profile).total]
    results: list[int] = []
    for index, turn in enumerate(turns, start=1):
        added = turn_items(turn, index, profile)
        items = items + added
        requests.append(tokens.count_request(prompt.instructions, functions, items, encoding_name).total)
        results.extend(tokens.count_item(i, encoding_name) for i in added if i["type"] == "function_call_output")
    additions = turn_additions(turns, encoding_name, profile)
    return Conversation(requests[0], additions, tuple(requests), tuple(results))
