"""The Responses API input items a tool turn adds: the model's function_call and the tool's function_call_output."""

from __future__ import annotations

import hashlib
import json

# OpenAI's Responses call ids are "call_" and 24 letters and digits: the article's recorded run shows one,
# call_cqXeuxQPiA9BEepDEw5oVh2I (data/reference/where-is-my-order.json, ORD-1004.granular.firstCallId). Ids we make
# take that shape so a count that includes them does not understate what a real model's ids cost.
CALL_ID_PREFIX = "call_"
CALL_ID_CHARACTERS = 24
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def function_call(name: str, arguments: dict[str, object], call_id: str) -> dict[str, object]:
    """A Responses API function_call item as the model emits it (arguments as compact JSON text)."""
    return {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments, separators=(",", ":")),
        "call_id": call_id,
    }


def function_call_output(call_id: str, output: str) -> dict[str, object]:
    """A Responses API function_call_output item carrying a tool's text result."""
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def call_id(conversation: str, index: int) -> str:
    """A call id of a real model's length, derived from the conversation and the call's index in it: the same
    conversation always gives the same ids, and no two calls of it share one."""
    digest = int.from_bytes(hashlib.sha256(f"{index}\x1f{conversation}".encode()).digest(), "big")
    letters = []
    for _ in range(CALL_ID_CHARACTERS):
        digest, i = divmod(digest, len(_ALPHABET))
        letters.append(_ALPHABET[i])
    return CALL_ID_PREFIX + "".join(letters)
